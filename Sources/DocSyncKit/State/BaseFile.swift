#if canImport(Glibc)
    import Glibc
#endif

/// `.docsync/base-<checksum>` (docs/FORMATS.md): the state's base, a sealed file of its
/// own named by its checksum, which the state's `basefile` line names. Why apart from the
/// state: a no-op `status` or `sync` asks for no base version (the index's synced flags
/// vouch for every file), and reading and checking the base's lines (16 MB at 100,000
/// documents) was all that run read of the state but a few lines.
///
/// Opened with the state and read at the first lookup. Why open first: a run that saves
/// a newer state removes this file; an open descriptor still reads it.
final class BaseFile: @unchecked Sendable {
    static let header = "docsync-base 1"
    static let prefix = "base-"

    /// What a state records of its base file.
    struct Name: Equatable, Sendable {
        var digest: String
        var count: Int
        var size: Int
        var fileName: String { BaseFile.prefix + digest }
    }

    let name: Name
    let path: String
    private let fd: Int32

    private init(name: Name, path: String, fd: Int32) {
        self.name = name
        self.path = path
        self.fd = fd
    }

    deinit { close(fd) }

    /// Opens the base file `name` in `folder`; nil when there is none.
    static func open(_ name: Name, in folder: String) throws -> BaseFile? {
        let path = FileSystem.join(folder, name.fileName)
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let error = FileSystemError(path: path, operation: "open", code: errno)
            if error.isNotFound { return nil }
            throw error
        }
        var st = stat()
        guard fstat(fd, &st) == 0, Int(st.st_size) == name.size else {
            close(fd)
            throw SyncState.Damaged(path: path, reason: "damaged (not the size the state names: torn or truncated)")
        }
        return BaseFile(name: name, path: path, fd: fd)
    }

    /// The file's lines, checked: its checksum is its name, and its base lines are
    /// well-formed, as many as the state says, and in refId order.
    func read() throws -> BaseStorage.Lines {
        let bytes = try readAll()
        guard bytes.count == name.size, let (end, digest) = SealedFile.bodyAndDigest(bytes), digest == name.digest
        else {
            throw SyncState.Damaged(path: path, reason: "damaged (checksum mismatch: torn or corrupted)")
        }
        var check = BaseLinesCheck()
        var sawHeader = false
        var sawEnd = false
        var wellFormed = true
        SealedFile.forEachLine(bytes, in: 0..<end) { f, line in
            guard wellFormed else { return }
            if !sawHeader {
                sawHeader = f.count == 1 && f.equals(0, "docsync-base 1")
                wellFormed = sawHeader
            } else if sawEnd {
                wellFormed = false
            } else if f.equals(0, "base") {
                wellFormed = check.take(f, line: line)
            } else if f.equals(0, "end") && f.count == 2 && f.int64(1) == Int64(check.count) {
                sawEnd = true
            } else {
                wellFormed = false
            }
        }
        guard wellFormed, sawEnd, check.count == name.count, check.inOrder, check.inOneRun else {
            throw SyncState.Damaged(path: path, reason: "damaged (not a base file this version understands)")
        }
        return check.lines(of: bytes)
    }

    private func readAll() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: name.size)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FileSystemError(path: path, operation: "read", code: n < 0 ? errno : EIO) }
            done += n
        }
        return bytes
    }

    /// Writes `storage`'s versions, `count` of them, as a base file in `folder` (durably:
    /// a state naming it is written next).
    static func write(_ storage: BaseStorage, count: Int, in folder: String) throws -> Name {
        let (digest, size) = try SealedFile.write(inFolder: folder, durable: true, naming: { prefix + $0 }) { out in
            out.raw(header)
            out.newline()
            storage.write(to: &out)
            out.raw("end")
            out.tabNumber(count)
            out.newline()
        }
        return Name(digest: digest, count: count, size: size)
    }

    /// Removes every base file in `folder` but `kept`'s: what saves of earlier states
    /// left (removed once a newer state is written, or left by a run killed between
    /// writing a base file and the state naming it).
    static func removeOthers(in folder: String, keeping kept: Name?) {
        guard let names = try? FileSystem.listDirectory(folder) else { return }
        for name in names where name.hasPrefix(prefix) && ContentHash.isValid(String(name.dropFirst(prefix.count))) {
            if name != kept?.fileName { unlink(FileSystem.join(folder, name)) }
        }
    }
}
