import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads and writes documents below a root folder without ever leaving it: the path is
/// checked with `DocumentPath`, and every folder on the way must be a real folder, not a
/// symlink that could point elsewhere.
public struct SafeTreeIO: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

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
        try FileSystem.readFile(try resolve(relative, createFolders: false))
    }

    public func readIfPresent(_ relative: String) throws -> [UInt8]? {
        do { return try read(relative) } catch let error as FileSystemError where error.isNotFound { return nil }
    }

    public func write(_ relative: String, _ bytes: [UInt8], mode: mode_t = 0o644, durable: Bool = true) throws {
        try FileSystem.writeAtomically(try resolve(relative, createFolders: true), bytes, mode: mode, durable: durable)
    }

    /// Removes a document file and then any folders it leaves empty.
    public func remove(_ relative: String) throws {
        let target = try resolve(relative, createFolders: false)
        try FileSystem.removeFile(target)
        FileSystem.removeEmptyDirectories(from: (target as NSString).deletingLastPathComponent, upTo: root)
    }
}
