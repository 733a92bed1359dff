#if canImport(Glibc)
    import Glibc
#endif

/// Content-addressed copies of every document version docsync has recorded or fetched.
/// The base, pending actions and conflict copies point here, which is what lets a version
/// survive the file being edited again. A few at a time are loose files
/// (`.docsync/objects/ab/cdef…`); a batch of more goes into one pack (`ObjectPacks`).
public struct ObjectStore: Sendable {
    public let root: String
    let packs: ObjectPacks
    /// The local tree's files, or a folder remote's (never through a symlink).
    let files: any ObjectFiles

    public init(root: String) { self.init(root: root, files: LocalObjectFiles()) }

    init(root: String, files: any ObjectFiles) {
        self.root = root
        self.files = files
        packs = ObjectPacks(folder: root + "/packs", files: files)
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
        try files.createDirectories(root + "/" + hash.prefix(2))
        try files.writeAtomically(target, bytes, mode: 0o444, durable: false)
        return hash
    }

    public func contains(_ hash: String) -> Bool { contains(hash, raw: ContentHash.raw(hash)) }

    private func contains(_ hash: String, raw: [UInt8]?) -> Bool {
        if let raw, packs.contains(raw) { return true }
        return files.exists(path(for: hash))
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
        guard let bytes = try? files.readFile(path(for: hash)), ContentHash.of(bytes) == hash else {
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
        files.syncFilesystem(containing: root)
    }
}

/// The file operations an object store makes: on the local tree's own files
/// (`LocalObjectFiles`), or below a folder remote's root, where nothing is read or written
/// through a symlink (`RemotePerimeter`). Paths are absolute.
protocol ObjectFiles: Sendable {
    func exists(_ path: String) -> Bool
    func readFile(_ path: String) throws -> [UInt8]
    func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t, durable: Bool) throws
    func createDirectories(_ path: String) throws
    func listDirectory(_ path: String) throws -> [String]
    func linkStatus(_ path: String) throws -> FileStat
    /// A descriptor open for reading, or -1.
    func openForReading(_ path: String) -> Int32
    /// A new temporary file (`.docsync-tmp-…`) beside `path`: its path and descriptor.
    func createTemporary(beside path: String, mode: mode_t) throws -> (path: String, fd: Int32)
    func rename(_ from: String, _ to: String) throws
    func removeFile(_ path: String) throws
    func syncFilesystem(containing path: String)
}

struct LocalObjectFiles: ObjectFiles {
    func exists(_ path: String) -> Bool { FileSystem.exists(path) }
    func readFile(_ path: String) throws -> [UInt8] { try FileSystem.readFile(path) }
    func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t, durable: Bool) throws {
        try FileSystem.writeAtomically(path, bytes, mode: mode, durable: durable)
    }
    func createDirectories(_ path: String) throws { try FileSystem.createDirectories(path) }
    func listDirectory(_ path: String) throws -> [String] { try FileSystem.listDirectory(path) }
    func linkStatus(_ path: String) throws -> FileStat { try FileSystem.linkStatus(path) }
    func openForReading(_ path: String) -> Int32 { open(path, O_RDONLY | O_CLOEXEC) }
    func createTemporary(beside path: String, mode: mode_t) throws -> (path: String, fd: Int32) {
        let (dir, base) = FileSystem.splitLast(path)
        let (temp, fd) = try FileSystem.createTemporary(beside: path, folder: dir, name: base, mode: mode)
        return (temp, fd)
    }
    func rename(_ from: String, _ to: String) throws { try FileSystem.rename(from, to) }
    func removeFile(_ path: String) throws { try FileSystem.removeFile(path) }
    func syncFilesystem(containing path: String) { FileSystem.syncFilesystem(containing: path) }
}

extension RemotePerimeter: ObjectFiles {
    func openForReading(_ path: String) -> Int32 { (try? openFile(path, O_RDONLY)) ?? -1 }
    func createTemporary(beside path: String, mode: mode_t) throws -> (path: String, fd: Int32) {
        let (dir, name) = try openParent(path, create: true)
        defer { close(dir) }
        let (temp, fd) = try FileSystem.createTemporary(in: dir, for: path, name: name, mode: mode)
        return (FileSystem.splitLast(path).folder + "/" + temp, fd)
    }
    func syncFilesystem(containing path: String) { syncFilesystem() }
}
