/// Content-addressed copies of every document version docsync has recorded or fetched.
/// The base, pending actions and conflict copies point here, which is what lets a version
/// survive the file being edited again. A few at a time are loose files
/// (`.docsync/objects/ab/cdef…`); a batch of more goes into one pack (`ObjectPacks`).
public struct ObjectStore: Sendable {
    public let root: String
    let packs: ObjectPacks

    public init(root: String) {
        self.root = root
        packs = ObjectPacks(folder: root + "/packs")
    }

    func path(for hash: String) -> String {
        root + "/" + hash.prefix(2) + "/" + hash.dropFirst(2)
    }

    /// Stores `bytes` unless already present. Not fsynced one by one: callers `flush()`
    /// once before journaling references to them.
    @discardableResult
    public func put(_ bytes: [UInt8], hash knownHash: String? = nil) throws -> String {
        let hash = knownHash ?? ContentHash.of(bytes)
        let raw = ContentHash.raw(hash)
        if contains(hash, raw: raw) { return hash }
        if let raw, try packs.add(bytes, hash: raw) { return hash }
        let target = path(for: hash)
        try FileSystem.createDirectories(root + "/" + hash.prefix(2))
        try FileSystem.writeAtomically(target, bytes, mode: 0o444, durable: false)
        return hash
    }

    public func contains(_ hash: String) -> Bool { contains(hash, raw: ContentHash.raw(hash)) }

    private func contains(_ hash: String, raw: [UInt8]?) -> Bool {
        if let raw, packs.contains(raw) { return true }
        return FileSystem.exists(path(for: hash))
    }

    public struct Missing: Error, CustomStringConvertible {
        public var hash: String
        public var description: String { "object \(hash) is missing or damaged in .docsync/objects" }
    }

    /// How many bytes the object `hash` has, found without reading it (a pack's index, or
    /// the loose file's stat); nil when it is not here.
    public func size(of hash: String) -> Int64? {
        if let raw = ContentHash.raw(hash), let length = packs.length(raw) { return Int64(length) }
        return (try? FileSystem.linkStatus(path(for: hash)))?.size
    }

    /// The bytes for `hash`, checked against it.
    public func get(_ hash: String) throws -> [UInt8] {
        if let raw = ContentHash.raw(hash), let bytes = packs.bytes(raw), ContentHash.of(bytes) == hash { return bytes }
        guard let bytes = try? FileSystem.readFile(path(for: hash)), ContentHash.of(bytes) == hash else {
            throw Missing(hash: hash)
        }
        return bytes
    }

    /// Completes the batch (a pack's index in place) without flushing: from here on every
    /// object put so far is found by any reader; `flush()` makes that survive a crash.
    public func seal() throws {
        try packs.finishBatch()
    }

    /// Completes the batch (a pack's index) and flushes the filesystem: after this,
    /// everything put so far survives a crash and may be journaled.
    public func flush() throws {
        try packs.finishBatch()
        FileSystem.syncFilesystem(containing: root)
    }
}
