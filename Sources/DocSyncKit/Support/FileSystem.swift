import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

private func statFollowingLinks(_ path: UnsafePointer<CChar>, _ buf: UnsafeMutablePointer<stat>) -> Int32 {
    stat(path, buf)
}
@_silgen_name("syncfs") private func c_syncfs(_ fd: Int32) -> Int32
/// Numbers this process's temporary files (see `FileSystem.writeAtomically`).
private let temporaryCounter = Atomic<UInt64>(0)
let processID = getpid()
/// The next number for a temporary file's name (see `createTemporary`).
func nextTemporaryNumber() -> UInt64 { temporaryCounter.add(1, ordering: .relaxed).newValue }

/// A failed system call, with the path it was about and the errno text.
public struct FileSystemError: Error, LocalizedError, Sendable, Equatable {
    public var path: String
    public var operation: String
    public var code: Int32

    public var errorDescription: String? {
        "\(path): \(operation) failed: \(String(cString: strerror(code)))"
            + (isDiskFull
                ? " (the disk is full: free some space and run again; what was already recorded is kept)" : "")
    }

    public var isNotFound: Bool { code == ENOENT || code == ENOTDIR }
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }
}

/// The subset of `stat` docsync cares about, with nanosecond times.
public struct FileStat: Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64
    public var mode: UInt32
    public var size: Int64
    public var mtimeNanos: Int64
    public var ctimeNanos: Int64
    public var linkCount: UInt64

    public var isDirectory: Bool { (mode & UInt32(S_IFMT)) == UInt32(S_IFDIR) }
    public var isRegularFile: Bool { (mode & UInt32(S_IFMT)) == UInt32(S_IFREG) }
    public var isSymbolicLink: Bool { (mode & UInt32(S_IFMT)) == UInt32(S_IFLNK) }

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        mode = UInt32(st.st_mode)
        size = Int64(st.st_size)
        mtimeNanos = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        ctimeNanos = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        linkCount = UInt64(st.st_nlink)
    }
}

/// Thin, throwing wrappers over the POSIX calls the engine needs. Everything that
/// writes goes through `writeAtomically`, so a reader never sees half a file.
public enum FileSystem {
    public static func linkStatus(_ path: String) throws(FileSystemError) -> FileStat {
        var st = Glibc.stat()
        guard Glibc.lstat(path, &st) == 0 else { throw FileSystemError(path: path, operation: "lstat", code: errno) }
        return FileStat(st)
    }

    public static func status(_ path: String) throws(FileSystemError) -> FileStat {
        var st = Glibc.stat()
        guard statFollowingLinks(path, &st) == 0 else {
            throw FileSystemError(path: path, operation: "stat", code: errno)
        }
        return FileStat(st)
    }

    public static func exists(_ path: String) -> Bool {
        var st = Glibc.stat()
        return Glibc.lstat(path, &st) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        (try? status(path).isDirectory) ?? false
    }

    /// The bytes of `path` from `offset` on (a symlink is not followed).
    public static func readFile(_ path: String, from offset: Int = 0) throws(FileSystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        var st = Glibc.stat()
        guard fstat(fd, &st) == 0 else { throw FileSystemError(path: path, operation: "fstat", code: errno) }
        return try readAll(fd, from: offset, size: Int(st.st_size), path: path)
    }

    /// The bytes of the open file `fd` (of `size` bytes when opened) from `offset` on.
    static func readAll(_ fd: Int32, from offset: Int, size: Int, path: String) throws(FileSystemError) -> [UInt8] {
        if offset > 0, lseek(fd, off_t(offset), SEEK_SET) < 0 {
            throw FileSystemError(path: path, operation: "lseek", code: errno)
        }
        var result = [UInt8]()
        result.reserveCapacity(max(0, size - offset))
        var chunk = [UInt8](repeating: 0, count: max(4096, min(size + 1, 1 << 20)))
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(path: path, operation: "read", code: errno)
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }

    public static func readFileIfPresent(_ path: String) throws(FileSystemError) -> [UInt8]? {
        do { return try readFile(path) } catch  where error.isNotFound { return nil }
    }

    /// Writes to a temporary file in the same folder, fsyncs it, renames it over `path`
    /// and fsyncs the folder. The temp name starts with `.docsync-tmp-` so a scan never
    /// mistakes a leftover for a document.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644, durable: Bool = true)
        throws(FileSystemError)
    {
        do {
            try writeAtomically(path, mode: mode, durable: durable) { fd in try writeAll(fd, bytes, path: path) }
        } catch let error as FileSystemError {
            throw error
        } catch {
            preconditionFailure("writing bytes fails only with a FileSystemError: \(error)")
        }
    }

    /// Like `writeAtomically(_:_:)`, with the content written by `body` into the temporary
    /// file's descriptor as it is made (a file too large to hold whole, written in parts).
    /// Whatever `body` throws leaves `path` as it was.
    public static func writeAtomically(
        _ path: String, mode: mode_t = 0o644, durable: Bool = true, writing body: (Int32) throws -> Void
    ) throws {
        let (dir, base) = splitLast(path)
        try writeAtomically(inFolder: dir, temporaryName: base, mode: mode, durable: durable) { fd in
            try body(fd)
            return base
        }
    }

    /// Like `writeAtomically(_:writing:)`, for a file whose name depends on what is
    /// written in it (a file named by its checksum): `body` writes the content into the
    /// temporary file's descriptor and returns the name, in `folder`, it is renamed to.
    public static func writeAtomically(
        inFolder dir: String, temporaryName base: String, mode: mode_t = 0o644, durable: Bool = true,
        naming body: (Int32) throws -> String
    ) throws {
        let (temp, fd) = try createTemporary(beside: join(dir, base), folder: dir, name: base, mode: mode)
        var path = join(dir, base)
        do {
            path = join(dir, try body(fd))
            if fchmod(fd, mode) != 0 { throw FileSystemError(path: temp, operation: "chmod", code: errno) }
            if durable, fsync(fd) != 0 { throw FileSystemError(path: temp, operation: "fsync", code: errno) }
            close(fd)
        } catch {
            close(fd)
            unlink(temp)
            // Name the file being written, not the temporary one that is gone now. Why:
            // a full disk was reported as ".docsync-tmp-123-456-x.json: write failed".
            if let error = error as? FileSystemError {
                throw FileSystemError(path: path, operation: error.operation, code: error.code)
            }
            throw error
        }
        guard Glibc.rename(temp, path) == 0 else {
            let code = errno
            unlink(temp)
            throw FileSystemError(path: path, operation: "rename", code: code)
        }
        if durable { try syncDirectory(dir.isEmpty ? "." : dir) }
    }

    /// A fresh `.docsync-tmp-…` path in `folder` (relative when it is "") for a file named `base`.
    static func temporaryPath(in dir: String, for base: String) -> String {
        (dir.isEmpty ? "" : dir + "/") + TemporaryName.make(nextTemporaryNumber(), for: base)
    }

    /// A new `.docsync-tmp-…` file in `folder` for writing `path` (named `name`), open.
    static func createTemporary(beside path: String, folder dir: String, name base: String, mode: mode_t)
        throws(FileSystemError) -> (String, Int32)
    {
        // pid and a counter name it uniquely among live processes; O_EXCL and the retry
        // cover a leftover of a dead process that had the same pid. Why not random: that
        // is one more system call (getrandom) for every file written.
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<100 {
            temp = temporaryPath(in: dir, for: base)
            fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "create (temporary file)", code: errno) }
        return (temp, fd)
    }

    /// A new `.docsync-tmp-…` file in the folder open as `dir`, for writing `path` (named
    /// `name` there), open; its name in that folder and its descriptor. Never follows a
    /// symlink (O_EXCL).
    static func createTemporary(in dir: Int32, for path: String, name base: String, mode: mode_t)
        throws(FileSystemError) -> (String, Int32)
    {
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<100 {
            temp = TemporaryName.make(nextTemporaryNumber(), for: base)
            fd = openat(dir, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "create (temporary file)", code: errno) }
        return (temp, fd)
    }

    /// Whether a `.docsync-tmp-…` file is a leftover (see `TemporaryName.isStale`). Why:
    /// a push killed, or that filled the disk, while writing a pack left it, and the share
    /// stayed full.
    static func isStaleTemporary(_ name: String, modified mtimeNanos: Int64, staleSeconds: Double = 3600) -> Bool {
        TemporaryName(name)?.isStale(modifiedNanos: mtimeNanos, staleSeconds: staleSeconds) ?? false
    }

    /// Creates `path` with `bytes` only if nothing is there, atomically like
    /// `writeAtomically` (a temporary file, fsynced, then hard-linked to `path`, which
    /// fails if the name is taken), and fsyncs the folder; false, and nothing written, if
    /// the name is taken. For files that must never replace another (a refused text kept
    /// for the user). Where hard links are not supported, O_EXCL creates it in place.
    public static func createNew(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws(FileSystemError) -> Bool
    {
        let (dir, base) = splitLast(path)
        let (temp, fd) = try createTemporary(beside: path, folder: dir, name: base, mode: mode)
        do throws(FileSystemError) {
            try writeAll(fd, bytes, path: path)
            if fsync(fd) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
            close(fd)
        } catch {
            close(fd)
            unlink(temp)
            throw error
        }
        defer { unlink(temp) }
        if link(temp, path) != 0 {
            let code = errno
            if code == EEXIST { return false }
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == EXDEV else {
                throw FileSystemError(path: path, operation: "link", code: code)
            }
            let direct = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if direct < 0 {
                if errno == EEXIST { return false }
                throw FileSystemError(path: path, operation: "create", code: errno)
            }
            defer { close(direct) }
            try writeAll(direct, bytes, path: path)
            if fsync(direct) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
        }
        try syncDirectory(dir.isEmpty ? "." : dir)
        return true
    }

    /// The folder and the name of `path` (`("", path)` without a slash): on bytes, not
    /// through NSString, as it runs once per file written.
    static func splitLast(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
        let folder = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        return (folder, String(path[path.utf8.index(after: slash)...]))
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FileSystemError) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError(path: path, operation: "write", code: errno)
            }
            written += n
        }
    }

    public static func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        // Some network filesystems refuse fsync on a directory; the rename is still atomic.
        if fsync(fd) != 0, errno != EINVAL, errno != EBADF {
            throw FileSystemError(path: path, operation: "fsync", code: errno)
        }
    }

    /// `syncDirectory` of a folder already open as `fd`.
    static func syncDirectory(fd: Int32, path: String) throws(FileSystemError) {
        if fsync(fd) != 0, errno != EINVAL, errno != EBADF {
            throw FileSystemError(path: path, operation: "fsync", code: errno)
        }
    }

    /// Flushes the whole filesystem holding `path`: one call after writing many objects
    /// instead of one fsync per object.
    public static func syncFilesystem(containing path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = c_syncfs(fd)
        close(fd)
    }

    public static func createDirectories(_ path: String) throws(FileSystemError) {
        if isDirectory(path) { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try createDirectories(parent) }
        if mkdir(path, 0o755) != 0, errno != EEXIST {
            throw FileSystemError(path: path, operation: "mkdir", code: errno)
        }
    }

    public static func removeFile(_ path: String) throws(FileSystemError) {
        if unlink(path) != 0, errno != ENOENT {
            throw FileSystemError(path: path, operation: "unlink", code: errno)
        }
    }

    public static func rename(_ from: String, _ to: String) throws(FileSystemError) {
        guard Glibc.rename(from, to) == 0 else { throw FileSystemError(path: from, operation: "rename", code: errno) }
    }

    /// Removes `dir` and then its parents while they are empty, stopping at `root`.
    public static func removeEmptyDirectories(from dir: String, upTo root: String) {
        var current = dir
        while current.count > root.count, current.hasPrefix(root) {
            if rmdir(current) != 0 { return }
            current = (current as NSString).deletingLastPathComponent
        }
    }

    /// Appends bytes to a file opened with O_APPEND and fsyncs it.
    public static func append(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws {
        try append(path, durable: durable) { write in try write(bytes) }
    }

    /// Appends what `produce` hands to the `write` it is given, in as many pieces as it
    /// likes, then fsyncs once. Returns the number of bytes written. Why pieces: a journal
    /// batch of 100,000 entries held whole as text was a clone's largest allocation.
    @discardableResult
    public static func append(
        _ path: String, durable: Bool = true, _ produce: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> Int {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        var written = 0
        try produce { piece in
            try writeAll(fd, piece, path: path)
            written += piece.count
        }
        if durable, fsync(fd) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
        return written
    }

    public static func truncate(_ path: String, to length: Int) throws(FileSystemError) {
        guard Glibc.truncate(path, off_t(length)) == 0 else {
            throw FileSystemError(path: path, operation: "truncate", code: errno)
        }
    }

    public static func listDirectory(_ path: String) throws(FileSystemError) -> [String] {
        guard let dir = opendir(path) else { throw FileSystemError(path: path, operation: "opendir", code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            // The name in place: a dirent is only as long as its name (d_reclen), so
            // copying the whole struct could read past the end of the kernel's buffer
            // (it did, listing /tmp while other processes filled it: SIGSEGV).
            let name = String(
                cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }

    public static var currentTimeNanos: Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    public static func join(_ a: String, _ b: String) -> String {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        return a.hasSuffix("/") ? a + b : a + "/" + b
    }

    public static func absolute(_ path: String) -> String {
        absolute(path, relativeTo: FileManager.default.currentDirectoryPath)
    }

    /// `path` made absolute against `directory` (itself absolute), without `.` and `..`.
    public static func absolute(_ path: String, relativeTo directory: String) -> String {
        let full = path.hasPrefix("/") ? path : join(directory, path)
        return (full as NSString).standardizingPath
    }
}
