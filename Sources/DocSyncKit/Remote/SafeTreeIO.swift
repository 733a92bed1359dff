import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads and writes documents below a root folder without ever leaving it: the path is
/// checked with `DocumentPath`, and every folder on the way must be a real folder, not a
/// symlink that could point elsewhere.
public struct SafeTreeIO: Sendable {
    public let root: String
    /// Set for a folder remote's readable copies: every operation by descriptors, never
    /// through a symlink (see `RemotePerimeter`), its refusals thrown as `Refused`.
    let perimeter: RemotePerimeter?

    public init(root: String) {
        self.root = root
        perimeter = nil
    }

    init(perimeter: RemotePerimeter) {
        root = perimeter.root
        self.perimeter = perimeter.unrecorded
    }

    /// `body` with a perimeter's refusal as a `Refused` of `relative`.
    private func refusing<T>(_ relative: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch RemoteError.unsafe(_, let reason) {
            throw Refused(path: relative, reason: reason)
        }
    }

    public struct Refused: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Checks the path and the folders leading to it; creates missing folders if asked.
    public func resolve(_ relative: String, createFolders: Bool) throws -> String {
        if let problem = DocumentPath.problem(relative) { throw Refused(path: relative, reason: problem) }
        var current = root
        let parts = relative.split(separator: "/")
        for part in parts.dropLast() {
            current += "/" + part
            var st = stat()
            if lstat(current, &st) == 0 {
                guard (st.st_mode & S_IFMT) == S_IFDIR else {
                    throw Refused(path: relative, reason: "'\(current)' is a symbolic link or file, not a folder")
                }
            } else if createFolders {
                if mkdir(current, 0o755) != 0 && errno != EEXIST {
                    throw FileSystemError(path: current, operation: "mkdir", code: errno)
                }
            } else {
                throw FileSystemError(path: current, operation: "lstat", code: ENOENT)
            }
        }
        let target = root + "/" + relative
        var st = stat()
        if lstat(target, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK {
            throw Refused(path: relative, reason: "is a symbolic link")
        }
        return target
    }

    public func read(_ relative: String) throws -> [UInt8] {
        if let perimeter {
            if let problem = DocumentPath.problem(relative) { throw Refused(path: relative, reason: problem) }
            return try refusing(relative) { try perimeter.readFile(root + "/" + relative) }
        }
        return try FileSystem.readFile(try resolve(relative, createFolders: false))
    }

    public func readIfPresent(_ relative: String) throws -> [UInt8]? {
        do { return try read(relative) } catch let error as FileSystemError where error.isNotFound { return nil }
    }

    /// Returns what the new file is (its inode), in a working tree: the caller's stat
    /// cache keeps it even if the user moves the file away at once.
    @discardableResult
    public func write(_ relative: String, _ bytes: [UInt8], mode: mode_t = 0o644, durable: Bool = true) throws
        -> FileStat?
    {
        if let perimeter {
            if let problem = DocumentPath.problem(relative) { throw Refused(path: relative, reason: problem) }
            try refusing(relative) {
                try perimeter.writeAtomically(root + "/" + relative, bytes, mode: mode, durable: durable)
            }
            return nil
        }
        let path = try resolve(relative, createFolders: true)
        var written: FileStat?
        try FileSystem.writeAtomically(path, mode: mode, durable: durable) { fd in
            try FileSystem.writeAll(fd, bytes, path: path)
            var st = stat()
            if fstat(fd, &st) == 0 { written = FileStat(st) }
        }
        return written
    }

    /// Removes a document file and then any folders it leaves empty.
    public func remove(_ relative: String) throws {
        if let perimeter {
            if let problem = DocumentPath.problem(relative) { throw Refused(path: relative, reason: problem) }
            try refusing(relative) { try perimeter.removeFile(root + "/" + relative) }
            var folder = (relative as NSString).deletingLastPathComponent
            while !folder.isEmpty, perimeter.removeEmptyDirectory(root + "/" + folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
            return
        }
        // Gone already, with its folder (a removal that also removed the folder it left
        // empty): nothing to do. Why: the redo of such a removal after a kill threw here,
        // was taken for a file the user changed, and the next run pushed the document's
        // deletion, also for one that had only left a sparse selection (model check,
        // folder seed 24102).
        let target: String
        do { target = try resolve(relative, createFolders: false) } catch let error as FileSystemError
            where error.isNotFound
        {
            return
        }
        try FileSystem.removeFile(target)
        FileSystem.removeEmptyDirectories(from: (target as NSString).deletingLastPathComponent, upTo: root)
    }

    /// Writes `bytes` over the tree's file at `relative` only if what it replaces still
    /// hashes to `expectedHash` (see `FileSystem.replaceIfUnchanged`): a save made since
    /// the caller read it is left in place.
    public func replace(
        _ relative: String, _ bytes: [UInt8], ifStill expectedHash: String, durable: Bool = true,
        written: (FileStat) -> Void = { _ in }
    ) throws -> FileSystem.Replacement {
        precondition(perimeter == nil, "a working tree's file, not a remote's")
        return try FileSystem.replaceIfUnchanged(
            try resolve(relative, createFolders: true), with: bytes, mode: 0o644, expectedHash: expectedHash,
            durable: durable, written: written)
    }

    /// Removes the tree's file at `relative` only if it still hashes to `expectedHash`,
    /// then any folders it leaves empty (see `FileSystem.removeIfUnchanged`).
    public func remove(_ relative: String, ifStill expectedHash: String) throws -> FileSystem.Replacement {
        precondition(perimeter == nil, "a working tree's file, not a remote's")
        let target = try resolve(relative, createFolders: false)
        let outcome = try FileSystem.removeIfUnchanged(target, expectedHash: expectedHash)
        if outcome == .replaced {
            FileSystem.removeEmptyDirectories(from: (target as NSString).deletingLastPathComponent, upTo: root)
        }
        return outcome
    }
}
