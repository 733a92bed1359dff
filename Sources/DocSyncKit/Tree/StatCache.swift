/// The index: what each file looked like (stat data) when it was last read, and what
/// it held (hash, refId, changesetId). A file whose stat data still matches is not read
/// again. It is only a cache: if it is lost, every file is read once more.
///
/// Racy entries (git's term): a file modified in the same clock tick as we read it can
/// change again without its mtime or size moving. An entry whose mtime is within
/// `racyWindowNanos` of the moment it was read is marked racy and re-read next time.
///
/// The entries are the binary file as it was read (`IndexFile`, sorted by path, read in
/// place) under a small overlay of what this run changed; saving merges the two. Why: a
/// no-op run then makes nothing for an entry it does not ask for, and the scan, which asks
/// in walk order, finds each entry by moving a cursor rather than by hashing its path.
public struct StatCache {
    /// A change this run made over the file.
    private enum Change {
        case set(Entry)
        case removed

        var entry: Entry? {
            if case .set(let e) = self { return e }
            return nil
        }
    }

    public static let racyWindowNanos: Int64 = 2_000_000_000
    private var file: IndexFile?
    /// By path, compared byte for byte (see `PathKey`).
    private var changes: [PathKey: Change] = [:]
    /// Entries the changes added (positive) or took away (negative) from the file's count.
    private var countChange = 0
    public private(set) var isDirty = false
    /// The stamp the last save of this run wrote (nil: not saved by this run).
    private var savedStamp: UInt64?

    public init() {}

    /// How many files have an entry.
    public var count: Int { (file?.count ?? 0) + countChange }

    public subscript(path: String) -> Entry? {
        if !changes.isEmpty, let change = changes[PathKey(path)] { return change.entry }
        return file?.find(path).map { file!.entry($0) }
    }

    /// Where a walk-order lookup has got to in the file (see `entry(_:cursor:)`).
    public struct Cursor {
        var next = 0
        public init() {}
    }

    /// The entry of `path`, for a caller asking in walk order (the scan): the file is
    /// searched from where the last lookup stopped. Any order gives right answers.
    public func entry(_ path: String, cursor: inout Cursor) -> Entry? {
        entry(path, cursor: &cursor, syncedUnder: 0)?.entry
    }

    /// The refId of `path`'s record when the file as read flags it synced under `stamp`
    /// and it vouches for `stat` (not racy, the same inode, size and times); nil otherwise
    /// (then ask `entry`). Read in place: only the refId is made. Why: most files of a
    /// small push or pull are such records, and making each one's hash and changesetId
    /// was a tenth of the scan's work, and memory nobody used.
    func syncedRefId(_ path: String, stat: FileStat, cursor: inout Cursor, stamp: UInt64) -> String? {
        guard stamp != 0, let file, file.stamp == stamp else { return nil }
        if !changes.isEmpty, changes[PathKey(path)] != nil { return nil }
        var probe = cursor.next
        guard let i = file.find(path, cursor: &probe), file.vouchesSynced(i, path: path, stat: stat) else { return nil }
        cursor.next = probe
        let refId = file.refId(at: i)
        return refId.isEmpty ? nil : refId
    }

    /// An entry, and whether the file as read flags it synced (see `UnchangedTree`).
    public struct Found {
        public let entry: Entry
        public let isSynced: Bool
    }

    /// `entry(_:cursor:)`, saying whether the entry is the file's record flagged synced
    /// against the state `stamp` names (never for 0 or a changed entry).
    public func entry(_ path: String, cursor: inout Cursor, syncedUnder stamp: UInt64) -> Found? {
        if !changes.isEmpty, let change = changes[PathKey(path)] {
            return change.entry.map { Found(entry: $0, isSynced: false) }
        }
        guard let file, let i = file.find(path, cursor: &cursor.next) else { return nil }
        return Found(entry: file.entry(i), isSynced: stamp != 0 && file.stamp == stamp && file.isSynced(i))
    }

    private func contains(_ path: String) -> Bool {
        if let change = changes[PathKey(path)] { return change.entry != nil }
        return file?.find(path) != nil
    }

    public mutating func record(
        path: String, stat: FileStat, hash: String, refId: String, changesetId: String, readAtNanos: Int64
    ) {
        let entry = Entry(
            inode: stat.inode, size: stat.size, mtimeNanos: stat.mtimeNanos, ctimeNanos: stat.ctimeNanos,
            hash: hash, refId: refId, changesetId: changesetId,
            racy: stat.mtimeNanos + Self.racyWindowNanos > readAtNanos)
        let old = self[path]
        guard old != entry else { return }
        if old == nil { countChange += 1 }
        changes[PathKey(path)] = .set(entry)
        isDirty = true
    }

    /// Room for `count` more changed entries, so a clone's are allocated once rather than
    /// grown by doubling (which held up to twice the entries at the peak).
    public mutating func reserve(_ count: Int) {
        if count > 1024 { changes.reserveCapacity(changes.count + count) }
    }

    public mutating func remove(path: String) {
        guard contains(path) else { return }
        if file?.find(path) != nil {
            changes[PathKey(path)] = .removed
        } else {
            changes.removeValue(forKey: PathKey(path))
        }
        countChange -= 1
        isDirty = true
    }

    /// Puts back what `previous` held for `path` (no entry, if it held none).
    public mutating func restore(path: String, from previous: StatCache) {
        guard let entry = previous[path] else { return remove(path: path) }
        let old = self[path]
        guard old != entry else { return }
        if old == nil { countChange += 1 }
        changes[PathKey(path)] = .set(entry)
        isDirty = true
    }

    /// Drops the entries of paths not in `present`, which must be in walk order
    /// (`UTF8Order`, as `TreeWalker` lists them): the file's entries are compared with it
    /// as a merge. Returns the paths dropped.
    @discardableResult
    public mutating func retain(walkOrder present: [String]) -> [String] {
        var gone: [String] = []
        if let file {
            var p = 0
            for i in 0..<file.count {
                let path = file.path(i)
                while p < present.count && IndexFile.withBytes(present[p], { UTF8Order.compare($0, path) < 0 }) {
                    p += 1
                }
                let found = p < present.count && IndexFile.withBytes(present[p], { UTF8Order.compare($0, path) == 0 })
                if !found { gone.append(file.pathString(i)) }
            }
        }
        for (key, change) in changes where change.entry != nil && !Self.sortedContains(present, key.path) {
            gone.append(key.path)
        }
        for path in gone { remove(path: path) }
        return gone
    }

    private static func sortedContains(_ sorted: [String], _ path: String) -> Bool {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if PathKey(sorted[middle]) == PathKey(path) { return true }
            if UTF8Order.precedes(sorted[middle], path) { low = middle + 1 } else { high = middle }
        }
        return false
    }

    /// Every entry, as a dictionary (tests and tools: it makes every entry).
    public var entries: [String: Entry] {
        var all: [String: Entry] = [:]
        all.reserveCapacity(count)
        forEachInWalkOrder { path, entry in all[path] = entry }
        return all
    }

    /// One entry of the merge: a record of the file as it is, or a changed entry.
    private enum Merged {
        case record(IndexFile, Int)
        case entry(String, Entry)
    }

    /// Every entry in walk order: the file's records merged with this run's changes.
    private func forEachInWalkOrder(_ body: (String, Entry) -> Void) {
        merge { item in
            switch item {
            case .record(let file, let i): body(file.pathString(i), file.entry(i))
            case .entry(let path, let e): body(path, e)
            }
        }
    }

    /// The merge of the file's records (those no change replaces) and the changed
    /// entries, in walk order.
    private func merge(_ body: (Merged) -> Void) {
        let changed = changes.keys.map(\.path).sorted(by: UTF8Order.precedes)
        var c = 0
        let recordCount = file?.count ?? 0
        for i in 0..<recordCount {
            let path = file!.path(i)
            var order: Int32 = 1
            while c < changed.count {
                order = IndexFile.withBytes(changed[c]) { UTF8Order.compare($0, path) }
                guard order < 0 else { break }
                if let e = changes[PathKey(changed[c])]!.entry { body(.entry(changed[c], e)) }
                c += 1
            }
            if c < changed.count && order == 0 {
                if let e = changes[PathKey(changed[c])]!.entry { body(.entry(changed[c], e)) }
                c += 1
            } else {
                body(.record(file!, i))
            }
        }
        for path in changed[c...] { if let e = changes[PathKey(path)]!.entry { body(.entry(path, e)) } }
    }

    // MARK: The file

    public static func load(from path: String) -> StatCache {
        guard let buffer = IndexFile.readWhole(path) else { return StatCache() }
        var cache = StatCache()
        if IndexFile.hasMagic(UnsafeRawBufferPointer(buffer)) {
            cache.file = IndexFile.open(adopting: buffer)
            return cache
        }
        // An index an older docsync wrote: read once, written as a binary file by the
        // first run that saves (dirty, so that run does).
        let bytes = Array(buffer)
        buffer.deallocate()
        guard let entries = IndexTextFormat.entries(bytes), !entries.isEmpty else { return cache }
        for (path, entry) in entries { cache.changes[PathKey(path)] = .set(entry) }
        cache.countChange = entries.count
        cache.isDirty = true
        return cache
    }

    /// Saves the index; with `synced`, each entry that is its document's tracked version
    /// is flagged so (see `UnchangedTree`), under the stamp of that state.
    public mutating func save(to path: String, synced: UnchangedTree.Against? = nil) throws {
        var storable = count
        for case .set(let e) in changes.values where !e.isStorable { storable -= 1 }
        try FileSystem.writeAtomically(path, durable: false) { fd in
            var out = IndexFileWriter(fd: fd, path: path, count: storable, stamp: synced?.stamp ?? 0)
            var carriedCursor = 0
            merge { item in
                switch item {
                case .record(let file, let i):
                    let isSynced = synced?.isTracked(file, i, cursor: &carriedCursor) ?? false
                    out.append(recordOf: file, i, synced: isSynced)
                case .entry(let path, let e):
                    guard e.isStorable else { return }
                    out.append(path: path, e, synced: synced?.isTracked(path, e.refId, e.hash) ?? false)
                }
            }
            try out.finish()
        }
        isDirty = false
        savedStamp = synced?.stamp ?? 0
    }

    /// The stamp of the state the index's synced flags hold for, as last read or saved.
    public var stamp: UInt64 { savedStamp ?? file?.stamp ?? 0 }

    /// Whether the walk's files are, one for one and in order, the entries of the file
    /// as read, each flagged synced under `stamp` and vouching for its file's stat data.
    func vouchesSynced(_ walk: [TreeWalker.Entry], stamp: UInt64) -> Bool {
        guard stamp != 0, changes.isEmpty, savedStamp == nil, let file, file.stamp == stamp, file.count == walk.count
        else { return false }
        // Through the buffer: each entry read in place (enumerating copied every one,
        // retaining and releasing its path: 2.6% of a no-op status at 100,000).
        return walk.withUnsafeBufferPointer { entries in
            for i in entries.indices where !file.vouchesSynced(i, path: entries[i].path, stat: entries[i].stat) {
                return false
            }
            return true
        }
    }
}
