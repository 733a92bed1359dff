#if canImport(Glibc)
import Glibc
#endif

/// Lists the `*.json` files of a working tree with their stat data, using readdir and
/// lstat directly: this runs on every sync over up to 100,000 files.
public struct TreeWalker {
    public struct Entry: Sendable {
        public var path: String        // relative to the tree root
        public var stat: FileStat
    }

    public struct Skipped: Sendable {
        public var path: String
        public var reason: String
    }

    public let root: String
    public let ignore: IgnoreRules

    public init(root: String, ignore: IgnoreRules) {
        self.root = root
        self.ignore = ignore
    }

    /// Files found, sorted by path, plus what was passed over and why (symlinks,
    /// unreadable folders). Ignored paths are not reported.
    /// - Parameter removingStaleTemporaryFiles: delete docsync's own temporary files
    ///   (`.docsync-tmp-<pid>-…`) whose process is gone. Only for a caller holding the
    ///   tree lock. Why: a run killed while writing a document left them in the user's
    ///   folders for good (found by the random-kill tests).
    public func walk(removingStaleTemporaryFiles: Bool = false) -> (files: [Entry], skipped: [Skipped]) {
        var files: [Entry] = []
        var skipped: [Skipped] = []
        var pending: [String] = [""]
        while let relative = pending.popLast() {
            let absolute = relative.isEmpty ? root : root + "/" + relative
            guard let dir = opendir(absolute) else {
                skipped.append(Skipped(path: relative.isEmpty ? "." : relative, reason: "cannot open folder: \(String(cString: strerror(errno)))"))
                continue
            }
            let fd = dirfd(dir)
            while let entry = readdir(dir) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if name == "." || name == ".." { continue }
                // `.docsync/` at any depth is metadata (of this tree, or of a tree or remote
                // nested in it), never documents.
                if name == DocumentPath.metadataFolder || (relative.isEmpty && name == ".git") { continue }
                if name.hasPrefix(".docsync-tmp-") {
                    if removingStaleTemporaryFiles, Self.isStaleTemporary(name) { unlinkat(fd, name, 0) }
                    continue
                }
                let path = relative.isEmpty ? name : relative + "/" + name
                var st = stat()
                guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                let info = FileStat(st)
                if info.isDirectory {
                    if ignore.isIgnored(path, isDirectory: true) { continue }
                    // A folder with a `.docsync/` of its own is another tree or a folder
                    // remote: syncing it as part of this tree would copy it into itself.
                    var inner = stat()
                    if fstatat(fd, name + "/" + DocumentPath.metadataFolder, &inner, AT_SYMLINK_NOFOLLOW) == 0 {
                        skipped.append(Skipped(path: path, reason: "holds a .docsync/ folder (another docsync tree or a folder remote); not synced as part of this tree"))
                        continue
                    }
                    pending.append(path)
                } else if name.hasSuffix(".json") {
                    if ignore.isIgnored(path, isDirectory: false) { continue }
                    if info.isRegularFile {
                        files.append(Entry(path: path, stat: info))
                    } else if info.isSymbolicLink {
                        skipped.append(Skipped(path: path, reason: "symbolic link (not followed)"))
                    }
                }
            }
            closedir(dir)
        }
        files.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        return (files, skipped)
    }

    /// `.docsync-tmp-<pid>-…` of a process that no longer exists on this machine.
    static func isStaleTemporary(_ name: String) -> Bool {
        let rest = name.dropFirst(".docsync-tmp-".count)
        guard let pid = Int32(rest.prefix { $0 != "-" }), pid > 0, pid != getpid() else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
