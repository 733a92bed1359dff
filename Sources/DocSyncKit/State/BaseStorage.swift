import Foundation

/// The base of a sync state (`SyncState.base`), kept as the state file's `base` lines,
/// in refId order, and searched in place: a run parses the versions it asks for, and
/// the changes it makes are kept beside the lines until a save merges them in. Why: at
/// 100,000 documents, parsing every version (four strings and a dictionary insertion
/// each) was a fifth of a no-op `status`, which asks for none, and with writing every
/// one back a seventh of a 1% pull, which asks for a few hundred. The lines are checked
/// when the file is read (its checksum, their fields, count and order).
///
/// Parsed whole (`parsed`) when a caller needs every version, or when the lines are not
/// in order (a file an older version wrote): then it is a dictionary, as before.
///
/// The lines are those of the base file (`BaseFile`), read at the first lookup, or those
/// of a state an older version wrote. A run that looks nothing up reads nothing, and a
/// save of a base nothing changed writes nothing (the state names the same file).
///
/// Shared by copies of a state until one of them changes the base (`SyncState` clones it
/// first), so a state keeps value semantics.
final class BaseStorage: @unchecked Sendable {
    /// A state file's `base` lines, one after another, as the file holds them.
    struct Lines: Sendable {
        let bytes: [UInt8]
        let range: Range<Int>
        let count: Int
        /// Where each line starts, in the order of their refId fields (as escaped, by
        /// bytes); nil when the file does not hold them in that order.
        let starts: [UInt32]?

        /// Where the line starting at `start` ends (after its newline).
        func end(ofLineAt start: Int) -> Int {
            bytes[start..<range.upperBound].firstIndex(of: 10).map { $0 + 1 } ?? range.upperBound
        }
    }

    private let lock = NSLock()
    /// The versions, by refId, once parsed (empty while `lines` is set).
    var versions: [String: DocVersion]
    private var lines: Lines?
    /// The base file the lines are still to be read from (nil once read, or when the
    /// versions did not come from one).
    private var unread: BaseFile?
    /// The base file in a folder that holds exactly these versions (nil once they change).
    private var savedAs: (folder: String, name: BaseFile.Name)?
    /// The base file failed its check once (see `readIfPossible`).
    private var unreadable = false
    /// Versions set (or, nil, removed) since the lines were read, by refId.
    private var changes: [String: DocVersion?] = [:]
    /// How many versions the lines and the changes make.
    private var linesCount = 0
    /// How many lines this storage parsed (for tests: a run that looks nothing up
    /// parses none).
    private(set) var linesParsed = 0

    init(_ versions: [String: DocVersion] = [:]) {
        self.versions = versions
    }

    init(lines: Lines) {
        versions = [:]
        self.lines = lines
        linesCount = lines.count
    }

    /// The versions of the base file `file` in `folder`, read at the first lookup.
    init(file: BaseFile, in folder: String) {
        versions = [:]
        unread = file
        linesCount = file.name.count
        savedAs = (folder, file.name)
    }

    private init(lines: Lines?, changes: [String: DocVersion?], count: Int, savedAs: (String, BaseFile.Name)?) {
        versions = [:]
        self.lines = lines
        self.changes = changes
        linesCount = count
        self.savedAs = savedAs
    }

    /// How many versions, without reading or parsing them.
    var count: Int { lock.withLock { lines != nil || unread != nil ? linesCount : versions.count } }

    /// Whether the versions are still the file's lines (with changes beside them).
    var isUnparsed: Bool {
        lock.withLock {
            readOrStop()
            return lines != nil
        }
    }

    /// Whether the versions are the file's lines in refId order, searched in place.
    var isInOrder: Bool {
        lock.withLock {
            readOrStop()
            return lines?.starts != nil
        }
    }

    /// Whether the base file these versions come from was read (true when there is none).
    var isRead: Bool { lock.withLock { unread == nil } }

    /// Reads and checks the base file, if not yet. Runs call it (through
    /// `SyncState.readBase`) where they first need the base, so that a damaged file is an
    /// error they report.
    func read() throws {
        try lock.withLock { try lockedRead() }
    }

    private func lockedRead() throws {
        guard let file = unread else { return }
        lines = try file.read()
        unread = nil
    }

    /// Reads the base file if it was not read and can be; false when it cannot (its
    /// damage is then reported by whatever needs the base). For callers that can do
    /// without it: the index's synced flags, a cache, are then not set.
    func readIfPossible() -> Bool {
        lock.withLock {
            guard unread != nil else { return true }
            guard !unreadable else { return false }
            do { try lockedRead() } catch { unreadable = true }
            return !unreadable
        }
    }

    /// Reads the base file where a lookup needs it and no caller read it first. A file
    /// that fails its check there cannot be reported as an error, and no answer without
    /// it is safe: the run stops, as a killed one, before it acts on a wrong base.
    private func readOrStop() {
        do { try lockedRead() } catch { fatalError("docsync: \(error.localizedDescription)") }
    }

    /// One document's version, parsing only its line.
    func version(_ refId: String) -> DocVersion? {
        lock.withLock { lockedVersion(refId) }
    }

    private func lockedVersion(_ refId: String) -> DocVersion? {
        readOrStop()
        guard let lines else { return versions[refId] }
        if let changed = changes[refId] { return changed }
        guard let starts = lines.starts else {
            parseLocked()
            return versions[refId]
        }
        guard let start = Self.find(refId, in: lines, starts: starts).found else { return nil }
        linesParsed += 1
        return Self.version(atLine: start, in: lines)
    }

    /// Sets (or with nil removes) one document's version; returns the one it replaces.
    @discardableResult
    func set(_ refId: String, _ version: DocVersion?) -> DocVersion? {
        lock.withLock {
            savedAs = nil
            readOrStop()
            if lines?.starts == nil { parseLocked() }
            guard lines != nil else {
                if let version { return versions.updateValue(version, forKey: refId) }
                return versions.removeValue(forKey: refId)
            }
            let before = lockedVersion(refId)
            changes[refId] = .some(version)
            linesCount += (version != nil ? 1 : 0) - (before != nil ? 1 : 0)
            return before
        }
    }

    /// The versions, parsed now if they were not yet.
    var parsed: [String: DocVersion] {
        lock.withLock {
            parseLocked()
            return versions
        }
    }

    /// A storage of the same versions that changes apart from this one (the lines are
    /// shared, not copied).
    func clone() -> BaseStorage {
        lock.withLock {
            readOrStop()
            guard lines != nil else {
                let copy = BaseStorage(versions)
                copy.savedAs = savedAs
                return copy
            }
            return BaseStorage(lines: lines, changes: changes, count: linesCount, savedAs: savedAs)
        }
    }

    /// Notes that the versions are about to change in place (`versions`, parsed).
    func willChange() {
        lock.withLock { savedAs = nil }
    }

    private func parseLocked() {
        readOrStop()
        guard let lines else { return }
        var parsed = Self.parse(lines)
        linesParsed += lines.count
        VersionTable.apply(changes, to: &parsed)
        versions = parsed
        self.lines = nil
        changes = [:]
    }

    /// The versions of the `base` lines `SyncState.load` checked (refId, changesetId, hash
    /// and path, tab-separated); other lines among them are passed over.
    private static func parse(_ lines: Lines) -> [String: DocVersion] {
        var versions: [String: DocVersion] = [:]
        versions.reserveCapacity(lines.count)
        SealedFile.forEachLine(lines.bytes, in: lines.range) { fields, _ in
            guard let version = version(fields) else { return }
            versions[version.refId] = version
        }
        return versions
    }

    private static func version(_ fields: SealedFile.Fields) -> DocVersion? {
        guard fields.equals(0, "base") else { return nil }
        return DocVersion(
            refId: fields.text(1), changesetId: fields.text(2), hash: fields.raw(3), path: fields.text(4))
    }

    /// The version of the line starting at `start`.
    private static func version(atLine start: Int, in lines: Lines) -> DocVersion? {
        var found: DocVersion?
        SealedFile.forEachLine(lines.bytes, in: start..<lines.end(ofLineAt: start)) { fields, _ in
            found = version(fields)
        }
        return found
    }

    // MARK: Searching the lines

    /// Where `refId`'s line is (its start) or, when there is none, the index of the first
    /// line whose refId comes after it.
    private static func find(_ refId: String, in lines: Lines, starts: [UInt32]) -> (index: Int, found: Int?) {
        var key = FieldEscaping.escape(refId)
        return key.withUTF8 { key in
            lines.bytes.withUnsafeBytes { bytes in
                var low = 0, high = starts.count
                while low < high {
                    let mid = (low + high) / 2
                    let order = UTF8Order.compare(refIdField(Int(starts[mid]), in: bytes), UnsafeRawBufferPointer(key))
                    if order == 0 { return (mid, Int(starts[mid])) }
                    if order < 0 { low = mid + 1 } else { high = mid }
                }
                return (low, nil)
            }
        }
    }

    /// The refId field (as escaped) of the `base` line starting at `start`.
    private static func refIdField(_ start: Int, in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let from = start + 5  // "base\t"
        var to = from
        while to < bytes.count && bytes[to] != 9 { to += 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[from..<to])
    }

    // MARK: Writing

    /// The base file of these versions in `folder` (the state's folder): the one they
    /// were read from or last saved as while nothing changed them, else one written now;
    /// nil when there are none.
    func save(in folder: String) throws -> BaseFile.Name? {
        let known: (count: Int, saved: BaseFile.Name?) = try lock.withLock {
            if let savedAs, savedAs.folder == folder { return (linesCount, savedAs.name) }
            try lockedRead()
            return (lines != nil ? linesCount : versions.count, nil)
        }
        if let saved = known.saved { return saved }
        guard known.count > 0 else { return nil }
        let name = try BaseFile.write(self, count: known.count, in: folder)
        lock.withLock { savedAs = (folder, name) }
        return name
    }

    /// Writes the `base` lines: the lines as read with the changes merged in, in refId
    /// order, copying every line nothing changed as it is; or, parsed, every version,
    /// sorted.
    func write(to out: inout SealedFile.Builder) {
        lock.withLock {
            readOrStop()
            if let lines, let starts = lines.starts {
                Self.merge(changes, into: lines, starts: starts, out: &out)
                return
            }
            parseLocked()
            let all = Array(versions.values)
            for i in Self.refIdOrder(all) { Self.write(all[i], to: &out) }
        }
    }

    /// The indices of `versions` in the order of their refIds as escaped, by bytes. Sorted
    /// by each key's first 8 bytes as a number, whole keys compared only for a tie. Why:
    /// comparing 100,000 strings was a tenth of a push that had parsed its base.
    private static func refIdOrder(_ versions: [DocVersion]) -> [Int] {
        var keys: [(prefix: UInt64, index: Int)] = []
        keys.reserveCapacity(versions.count)
        for (i, v) in versions.enumerated() {
            var prefix: UInt64 = 0
            var taken = 0
            for byte in FieldEscaping.escape(v.refId).utf8.prefix(8) {
                prefix = prefix << 8 | UInt64(byte)
                taken += 1
            }
            // Shorter keys padded with zero bytes: still in byte order, ties settled whole.
            if taken < 8 { prefix <<= UInt64(8 * (8 - taken)) }
            keys.append((prefix, i))
        }
        keys.sort { a, b in
            a.prefix != b.prefix
                ? a.prefix < b.prefix
                : UTF8Order.precedes(
                    FieldEscaping.escape(versions[a.index].refId), FieldEscaping.escape(versions[b.index].refId))
        }
        return keys.map(\.index)
    }

    private static func merge(
        _ changes: [String: DocVersion?], into lines: Lines, starts: [UInt32], out: inout SealedFile.Builder
    ) {
        // Sorted in place: a first push's 100,000 changes sorted into a copy were 10 MB more
        // at its last checkpoint, its peak.
        var ordered = changes.map { (key: FieldEscaping.escape($0.key), refId: $0.key, version: $0.value) }
        ordered.sort { UTF8Order.precedes($0.key, $1.key) }
        var copied = lines.range.lowerBound
        for change in ordered {
            let (index, found) = find(change.refId, in: lines, starts: starts)
            let lineStart = index < starts.count ? Int(starts[index]) : lines.range.upperBound
            out.verbatim(lines.bytes[copied..<lineStart])
            copied = lineStart
            if found != nil { copied = lines.end(ofLineAt: lineStart) }
            if let version = change.version { write(version, to: &out) }
        }
        out.verbatim(lines.bytes[copied..<lines.range.upperBound])
    }

    private static func write(_ v: DocVersion, to out: inout SealedFile.Builder) {
        out.raw("base")
        out.tabText(v.refId)
        out.tabText(v.changesetId)
        out.tabRaw(v.hash)
        out.tabText(v.path)
        out.newline()
    }
}
