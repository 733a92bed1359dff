import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Every file a folder remote (either layout) reads, writes, lists, renames or removes
/// below its root goes through here, by descriptors: the root is opened (it may itself be
/// a symlink the user gave), then each folder on the way with `openat(O_NOFOLLOW |
/// O_DIRECTORY)`, and the file itself with `O_NOFOLLOW` (or `mkdirat`, `renameat`,
/// `unlinkat`, `linkat` relative to its folder's descriptor). So nothing is ever read or
/// written through a symbolic link, or through a file where a folder belongs, however
/// the share changes meanwhile (a path checked and then opened could be swapped between
/// the two). Why: with `.docsync/objects/<xx>` or `replicas/<id>` replaced by a symlink,
/// a push wrote objects, commits and `info.json` wherever it pointed.
///
/// Paths are absolute (`root` + "/" + the path below it), as the remotes build them. A
/// symlink (or a file for a folder) met on the way is refused with
/// `RemoteError.unsafe` naming it (exit 1), and remembered: an operation that goes on
/// past a lookup that failed quietly (`try?`: "no replica records") is stopped by
/// `checkPerimeter()` before it commits and when it ends.
public final class RemotePerimeter: @unchecked Sendable {
    public let root: String
    let url: String
    /// Whether refusals are remembered for `checkPerimeter()` (not for the readable
    /// copies of documents: see `unrecorded`).
    private let records: Bool
    private let mutex = NSLock()
    private var refusals: [RemoteError] = []

    init(root: String, url: String, records: Bool = true) {
        self.root = root
        self.url = url
        self.records = records
    }

    /// The same root, its refusals not remembered: for the readable copies of documents,
    /// where a caller decides (a read falls back to objects/, a write stops the push).
    var unrecorded: RemotePerimeter { RemotePerimeter(root: root, url: url, records: false) }

    // MARK: Refusals

    /// Why a path below the root is refused, with what to do about it.
    func refusal(_ path: String, _ problem: String) -> RemoteError {
        let error = RemoteError.unsafe(
            url: url,
            reason:
                "\(path): \(problem); docsync never reads or writes through a symbolic link (or a file where a folder belongs) under a folder remote's root. Replace it with the real folder or file, then run again"
        )
        guard records else { return error }
        mutex.lock()
        if refusals.count < 16 { refusals.append(error) }
        mutex.unlock()
        return error
    }

    /// Throws the first refusal met so far (also those a caller met with `try?`).
    func checkPerimeter() throws {
        mutex.lock()
        let first = refusals.first
        mutex.unlock()
        if let first { throw first }
    }

    /// What is wrong with `name` in the folder `dirfd` as a folder on the way (nil: it is
    /// a folder, or it cannot be told).
    private static func problem(at dirfd: Int32, _ name: String, wantFolder: Bool) -> String? {
        var st = stat()
        guard fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFLNK: return "it is a symbolic link"
        case S_IFDIR: return wantFolder ? nil : "it is a folder where a file belongs"
        case S_IFREG: return wantFolder ? "it is a file where a folder belongs" : nil
        default: return "it is not a regular file or folder"
        }
    }

    // MARK: Walking

    /// The components of `path` below the root (empty: the root itself).
    func components(_ path: String) throws -> [String] {
        if path == root { return [] }
        guard path.hasPrefix(root), path.utf8.count > root.utf8.count,
            path.utf8[path.utf8.index(path.utf8.startIndex, offsetBy: root.utf8.count)] == UInt8(ascii: "/")
        else { throw refusal(path, "it is not below the remote's root \(root)") }
        let parts = path.utf8.dropFirst(root.utf8.count + 1).split(separator: UInt8(ascii: "/")).map {
            String(decoding: $0, as: UTF8.self)
        }
        if parts.contains(where: { $0 == "." || $0 == ".." }) { throw refusal(path, "it has a '.' or '..' component") }
        return parts
    }

    /// An open descriptor of the folder made of `parts` below the root, every component
    /// opened without following a symlink; missing folders made with `create`.
    func openFolder(_ parts: ArraySlice<String>, create: Bool) throws -> Int32 {
        var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError(path: root, operation: "open", code: errno) }
        var walked = root
        for part in parts {
            walked += "/" + part
            var next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, errno == ENOENT, create {
                if mkdirat(fd, part, 0o755) != 0, errno != EEXIST {
                    let code = errno
                    close(fd)
                    throw FileSystemError(path: walked, operation: "mkdir", code: code)
                }
                next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            if next < 0 {
                let code = errno
                let problem = Self.problem(at: fd, part, wantFolder: true)
                close(fd)
                if let problem { throw refusal(walked, problem) }
                throw FileSystemError(path: walked, operation: "open", code: code)
            }
            close(fd)
            fd = next
        }
        return fd
    }

    /// The descriptor of `path`'s folder (made if `create`) and `path`'s name in it.
    func openParent(_ path: String, create: Bool = false) throws -> (fd: Int32, name: String) {
        let parts = try components(path)
        guard let name = parts.last else { throw refusal(path, "it is the remote's root, not a file in it") }
        return (try openFolder(parts.dropLast(), create: create), name)
    }

    /// Opens `path` (never through a symlink) with `flags`; refuses a symlink or a folder.
    func openFile(_ path: String, _ flags: Int32, mode: mode_t = 0o644, create: Bool = false) throws -> Int32 {
        let (dir, name) = try openParent(path, create: create)
        defer { close(dir) }
        let fd = openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let code = errno
            if code != ENOENT, let problem = Self.problem(at: dir, name, wantFolder: false) {
                throw refusal(path, problem)
            }
            throw FileSystemError(path: path, operation: "open", code: code)
        }
        return fd
    }

    // MARK: Reading

    func readFile(_ path: String) throws -> [UInt8] { try readFile(path, from: 0) }

    /// The bytes of `path` from `offset` on.
    func readFile(_ path: String, from offset: Int) throws -> [UInt8] {
        let fd = try openFile(path, O_RDONLY)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw FileSystemError(path: path, operation: "fstat", code: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw refusal(path, "it is not a regular file") }
        return try FileSystem.readAll(fd, from: offset, size: Int(st.st_size), path: path)
    }

    /// The bytes of `path`, nil if it (or a folder on the way) does not exist.
    func readFileIfPresent(_ path: String) throws -> [UInt8]? {
        do { return try readFile(path) } catch let error as FileSystemError where error.isNotFound { return nil }
    }

    /// The first `count` bytes of a file (a commit's header line), nil if unreadable.
    func readPrefix(_ path: String, count: Int = 4096) -> [UInt8]? {
        guard let fd = try? openFile(path, O_RDONLY) else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, count) }
        guard n > 0 else { return nil }
        return Array(buffer[0..<n])
    }

    /// What `path` is, not following a symlink at its end (`FileSystem.linkStatus`).
    func linkStatus(_ path: String) throws -> FileStat {
        let parts = try components(path)
        guard let name = parts.last else { return try FileSystem.status(root) }
        let dir = try openFolder(parts.dropLast(), create: false)
        defer { close(dir) }
        var st = stat()
        guard fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw FileSystemError(path: path, operation: "lstat", code: errno)
        }
        return FileStat(st)
    }

    /// Whether something is at `path` (a symlink there counts; one on the way is refused,
    /// remembered, and answers false).
    func exists(_ path: String) -> Bool { (try? linkStatus(path)) != nil }

    /// Whether `path` is a real folder (a symlink to one is refused and answers false).
    func isDirectory(_ path: String) -> Bool {
        guard let st = try? linkStatus(path) else { return false }
        if st.isSymbolicLink { _ = refusal(path, "it is a symbolic link") }
        return st.isDirectory
    }

    /// The names in the folder `path` (a symlink on the way or at its end is refused).
    func listDirectory(_ path: String) throws -> [String] {
        try entries(path).map(\.name)
    }

    /// The names in `path`, none if it does not exist; a refusal is thrown.
    func listIfPresent(_ path: String) throws -> [String] {
        do { return try listDirectory(path) } catch let error as FileSystemError where error.isNotFound { return [] }
    }

    /// The entries of the folder `path`, with whether each is a symlink (`d_type`, or
    /// `fstatat` where the file system does not say).
    func entries(_ path: String) throws -> [(name: String, isLink: Bool)] {
        let fd = try openFolder(try components(path)[...], create: false)
        guard let dir = fdopendir(fd) else {
            let code = errno
            close(fd)
            throw FileSystemError(path: path, operation: "opendir", code: code)
        }
        defer { closedir(dir) }
        var out: [(String, Bool)] = []
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(dir) {
            let name = String(
                cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            var isLink = entry.pointee.d_type == UInt8(DT_LNK)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var st = stat()
                isLink = fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
            }
            out.append((name, isLink))
        }
        return out
    }

    // MARK: Writing

    /// Makes the folder `path` and those on the way.
    func createDirectories(_ path: String) throws {
        close(try openFolder(try components(path)[...], create: true))
    }

    /// `FileSystem.writeAtomically` below the root: a temporary file made in the folder's
    /// descriptor, written, fsynced, renamed over `path` with `renameat`; on any failure
    /// the temporary file is removed and `path` is as it was.
    func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644, durable: Bool = true) throws {
        try writeAtomically(path, mode: mode, durable: durable) { fd in try FileSystem.writeAll(fd, bytes, path: path) }
    }

    /// Like `writeAtomically(_:_:)`, the content written by `body` into the temporary
    /// file's descriptor.
    func writeAtomically(
        _ path: String, mode: mode_t = 0o644, durable: Bool = true, writing body: (Int32) throws -> Void
    ) throws {
        let (dir, name) = try openParent(path, create: true)
        defer { close(dir) }
        let (temp, fd) = try FileSystem.createTemporary(in: dir, for: path, name: name, mode: mode)
        do {
            try body(fd)
            if fchmod(fd, mode) != 0 { throw FileSystemError(path: path, operation: "chmod", code: errno) }
            if durable, fsync(fd) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
            close(fd)
        } catch {
            close(fd)
            unlinkat(dir, temp, 0)
            if let error = error as? FileSystemError {
                throw FileSystemError(path: path, operation: error.operation, code: error.code)
            }
            throw error
        }
        guard renameat(dir, temp, dir, name) == 0 else {
            let code = errno
            unlinkat(dir, temp, 0)
            throw FileSystemError(path: path, operation: "rename", code: code)
        }
        if durable { try FileSystem.syncDirectory(fd: dir, path: path) }
    }

    /// Appends `bytes` to `path` (made if missing) and fsyncs it.
    func append(_ path: String, _ bytes: [UInt8], durable: Bool = true) throws {
        let fd = try openFile(path, O_WRONLY | O_APPEND | O_CREAT, create: false)
        defer { close(fd) }
        try FileSystem.writeAll(fd, bytes, path: path)
        if durable, fsync(fd) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
    }

    func truncate(_ path: String, to length: Int) throws {
        let fd = try openFile(path, O_WRONLY)
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw FileSystemError(path: path, operation: "truncate", code: errno)
        }
    }

    /// Removes the file `path` (nothing there is fine; a symlink there is removed itself,
    /// never what it points at).
    func removeFile(_ path: String) throws {
        let (dir, name) = try openParent(path)
        defer { close(dir) }
        if unlinkat(dir, name, 0) != 0, errno != ENOENT {
            throw FileSystemError(path: path, operation: "unlink", code: errno)
        }
    }

    /// Removes the folder `path` if it is empty; false if it is not (or cannot be).
    @discardableResult
    func removeEmptyDirectory(_ path: String) -> Bool {
        guard let (dir, name) = try? openParent(path) else { return false }
        defer { close(dir) }
        return unlinkat(dir, name, AT_REMOVEDIR) == 0
    }

    /// `renameat` of two paths below the root.
    func rename(_ from: String, _ to: String) throws {
        let (a, aName) = try openParent(from)
        defer { close(a) }
        let (b, bName) = try openParent(to)
        defer { close(b) }
        guard renameat(a, aName, b, bName) == 0 else {
            throw FileSystemError(path: from, operation: "rename", code: errno)
        }
    }

    /// `link(2)` of two paths below the root (never following a symlink); 0 or the errno.
    func link(_ from: String, _ to: String) -> Int32 {
        do {
            let (a, aName) = try openParent(from)
            defer { close(a) }
            let (b, bName) = try openParent(to)
            defer { close(b) }
            return linkat(a, aName, b, bName, 0) == 0 ? 0 : errno
        } catch let error as FileSystemError {
            return error.code
        } catch {
            return ELOOP
        }
    }

    /// Sets `path`'s times to now (not through a symlink).
    func touch(_ path: String) {
        guard let (dir, name) = try? openParent(path) else { return }
        defer { close(dir) }
        utimensat(dir, name, nil, AT_SYMLINK_NOFOLLOW)
    }

    /// Flushes the file system holding the remote (one call after many objects).
    func syncFilesystem() {
        FileSystem.syncFilesystem(containing: root)
    }

    /// Removes the `.docsync-tmp-…` files in `folder` that a dead or long gone writer left
    /// (see `FileSystem.isStaleTemporary`): a push killed, or that filled the disk, while
    /// writing a pack or a metadata file. Called by a push under its lock.
    func removeStaleTemporaryFiles(in folder: String) {
        for entry in (try? entries(folder)) ?? [] where entry.name.hasPrefix(".docsync-tmp-") {
            let path = folder + "/" + entry.name
            guard let st = try? linkStatus(path), !st.isDirectory,
                FileSystem.isStaleTemporary(entry.name, modified: st.mtimeNanos)
            else { continue }
            try? removeFile(path)
        }
    }

    // MARK: Verify

    /// Every symlink below the root (and every entry that is neither a file nor a
    /// folder), walked by descriptors without following any: what `docsync verify`
    /// reports. At most `limit` of them.
    func strangeEntries(limit: Int = 100) -> [String] {
        var found: [String] = []
        var folders = [root]
        while let folder = folders.popLast(), found.count < limit {
            guard let list = try? unrecorded.entries(folder) else { continue }
            for entry in list.sorted(by: { $0.name > $1.name }) {
                let path = folder + "/" + entry.name
                if entry.isLink {
                    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map {
                        " (to \($0))"
                    }
                    found.append("\(path) is a symbolic link\(target ?? "")")
                    continue
                }
                guard let st = try? unrecorded.linkStatus(path) else { continue }
                if st.isDirectory {
                    folders.append(path)
                } else if !st.isRegularFile {
                    found.append("\(path) is neither a file nor a folder")
                }
            }
        }
        return found.prefix(limit).map {
            "remote: \($0): docsync never reads or writes through it; replace it with the real folder or file"
        }
    }

    // MARK: The skeleton

    /// Looks at the remote's fixed folders before a run reads or writes anything: the
    /// metadata folder, each entry in it, in `objects/` and in `replicas/` (and in each
    /// replica's folder of the drive layout) must not be a symlink. A few listings, so a
    /// no-op run stays cheap, and a symlink planted there stops every run (a pull too,
    /// which reads through none of them when there is nothing new) with its name.
    /// Deeper paths are refused when an operation reaches them.
    func checkSkeleton() throws {
        let meta = root + "/.docsync"
        guard let st = try? linkStatus(meta) else { return }
        if st.isSymbolicLink { throw refusal(meta, "it is a symbolic link") }
        if !st.isDirectory { throw refusal(meta, "it is a file where a folder belongs") }
        try checkEntries(meta)
        try checkEntries(meta + "/objects")
        for name in try checkEntries(meta + "/replicas") where DriveLayout.isPlainName(name) {
            try checkEntries(meta + "/replicas/" + name)
        }
    }

    /// The names in `folder` if it is a real folder (none if it is not there or is a
    /// file); throws if one of them is a symlink.
    @discardableResult
    private func checkEntries(_ folder: String) throws -> [String] {
        guard let st = try? linkStatus(folder), st.isDirectory else { return [] }
        let found = try entries(folder)
        if let link = found.first(where: \.isLink) { throw refusal(folder + "/" + link.name, "it is a symbolic link") }
        return found.map(\.name)
    }
}
