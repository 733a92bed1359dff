/// The index: what each file looked like (stat data) when it was last read, and what
/// it held (hash, refId, changesetId). A file whose stat data still matches is not read
/// again. It is only a cache: if it is lost, every file is read once more.
///
/// Racy entries (git's term): a file modified in the same clock tick as we read it can
/// change again without its mtime or size moving. An entry whose mtime is within
/// `racyWindowNanos` of the moment it was read is marked racy and re-read next time.
public struct StatCache {
    public struct Entry: Sendable, Equatable {
        public var inode: UInt64
        public var size: Int64
        public var mtimeNanos: Int64
        public var ctimeNanos: Int64
        public var hash: String
        public var refId: String
        public var changesetId: String
        public var racy: Bool

        public func matches(_ stat: FileStat) -> Bool {
            !racy && inode == stat.inode && size == stat.size && mtimeNanos == stat.mtimeNanos
                && ctimeNanos == stat.ctimeNanos
        }
    }

    public static let racyWindowNanos: Int64 = 2_000_000_000
    public private(set) var entries: [String: Entry] = [:]
    public private(set) var isDirty = false

    public init() {}

    public subscript(path: String) -> Entry? { entries[path] }

    public mutating func record(
        path: String, stat: FileStat, hash: String, refId: String, changesetId: String, readAtNanos: Int64
    ) {
        let entry = Entry(
            inode: stat.inode, size: stat.size, mtimeNanos: stat.mtimeNanos, ctimeNanos: stat.ctimeNanos,
            hash: hash, refId: refId, changesetId: changesetId,
            racy: stat.mtimeNanos + Self.racyWindowNanos > readAtNanos)
        if entries[path] != entry {
            entries[path] = entry
            isDirty = true
        }
    }

    /// Room for `count` more entries, so a clone's index is allocated once rather than
    /// grown by doubling (which held up to twice the entries at the peak).
    public mutating func reserve(_ count: Int) {
        if count > 1024 { entries.reserveCapacity(entries.count + count) }
    }

    public mutating func remove(path: String) {
        if entries.removeValue(forKey: path) != nil { isDirty = true }
    }

    /// Drops entries for paths not in `present`.
    public mutating func retain(paths present: Set<String>) {
        for path in entries.keys where !present.contains(path) {
            entries.removeValue(forKey: path)
            isDirty = true
        }
    }

    static let header = "docsync-index 1"

    public static func load(from path: String) -> StatCache {
        guard let bytes = try? FileSystem.readFile(path) else { return StatCache() }
        var cache = StatCache()
        cache.entries.reserveCapacity(bytes.count / 160)
        var sawHeader = false
        var sound = true
        let sealed = SealedFile.forEachLine(bytes) { f in
            guard sound else { return }
            guard sawHeader else {
                sawHeader = f.count == 1 && f.equals(0, "docsync-index 1")
                sound = sawHeader
                return
            }
            guard f.count == 9, let ino = f.uint64(1), let size = f.int64(2), let m = f.int64(3), let c = f.int64(4)
            else {
                sound = false
                return
            }
            cache.entries[f.text(0)] = Entry(
                inode: ino, size: size, mtimeNanos: m, ctimeNanos: c, hash: f.raw(5),
                refId: f.text(6), changesetId: f.text(7), racy: f.equals(8, "r"))
        }
        return sealed && sound && sawHeader ? cache : StatCache()
    }

    public mutating func save(to path: String) throws {
        try SealedFile.write(to: path, durable: false) { out in
            out.raw(Self.header)
            out.newline()
            // In no particular order: readers build a dictionary, so sorting on every save
            // would be work nobody uses.
            for (p, e) in entries {
                out.text(p)
                out.tabNumbers(e.inode, e.size)
                out.tabNumbers(e.mtimeNanos, e.ctimeNanos)
                out.tabRaw(e.hash)
                out.tabText(e.refId)
                out.tabText(e.changesetId)
                out.tabRaw(e.racy ? "r" : "-")
                out.newline()
            }
        }
        isDirty = false
    }
}

extension StatCache {
    /// Whether every one of `paths` (tree-relative) is as the tree's saved index says the
    /// last scan or sync left it: the same file (inode, size, times, not racy), or absent
    /// and not in the index. `docsync watch` asks this of the files whose events arrived
    /// during its own sync: docsync stamping ids and writing pulled versions is not an edit.
    /// - Parameter known: the index as the last run left it, when the caller holds it
    ///   (read from the tree's `.docsync/index` otherwise).
    public static func unchangedSinceLastScan(root: String, paths: Set<String>, known: StatCache? = nil) -> Bool {
        let index = known ?? StatCache.load(from: TreeLayout(root: root).index)
        return paths.allSatisfy { path in
            guard let now = try? FileSystem.linkStatus(root + "/" + path) else { return index[path] == nil }
            // Racy entries count too: a same-size edit within the timestamp granularity of
            // docsync's own write is caught by the next sync's scan (which re-reads racy files).
            guard let entry = index[path] else { return false }
            return entry.inode == now.inode && entry.size == now.size && entry.mtimeNanos == now.mtimeNanos
                && entry.ctimeNanos == now.ctimeNanos
        }
    }
}
