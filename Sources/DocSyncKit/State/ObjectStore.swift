/// Content-addressed copies of every document version docsync has recorded or fetched:
/// `.docsync/objects/ab/cdef…`. The base, pending actions and conflict copies point
/// here, which is what lets a version survive the file being edited again.
public struct ObjectStore {
    public let root: String

    public init(root: String) { self.root = root }

    func path(for hash: String) -> String {
        root + "/" + hash.prefix(2) + "/" + hash.dropFirst(2)
    }

    /// Stores `bytes` unless already present. Not fsynced one by one: callers flush the
    /// filesystem once (`FileSystem.syncFilesystem`) before journaling references to them.
    @discardableResult
    public func put(_ bytes: [UInt8], hash knownHash: String? = nil) throws -> String {
        let hash = knownHash ?? ContentHash.of(bytes)
        let target = path(for: hash)
        if FileSystem.exists(target) { return hash }
        try FileSystem.createDirectories(root + "/" + hash.prefix(2))
        try FileSystem.writeAtomically(target, bytes, mode: 0o444, durable: false)
        return hash
    }

    public func contains(_ hash: String) -> Bool { FileSystem.exists(path(for: hash)) }

    public struct Missing: Error, CustomStringConvertible {
        public var hash: String
        public var description: String { "object \(hash) is missing or damaged in .docsync/objects" }
    }

    /// The bytes for `hash`, checked against it.
    public func get(_ hash: String) throws -> [UInt8] {
        guard let bytes = try? FileSystem.readFile(path(for: hash)), ContentHash.of(bytes) == hash else { throw Missing(hash: hash) }
        return bytes
    }

    public func flush() { FileSystem.syncFilesystem(containing: root) }
}
