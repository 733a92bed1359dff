import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Lists the `*.json` files of a working tree with their stat data, using readdir and
/// lstat directly: this runs on every sync over up to 100,000 files.
public struct TreeWalker: Sendable {
    public struct Entry: Sendable {
        public var path: String  // relative to the tree root
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
    ///
    /// The root folder is listed first; its subfolders are then walked on every core
    /// (each worker takes the next unwalked subfolder and walks it whole). Why: the walk
    /// is one `fstatat` per entry, and on 100,000 files one core spent most of a no-op
    /// `status` waiting on them.
    public func walk(removingStaleTemporaryFiles: Bool = false) -> (files: [Entry], skipped: [Skipped]) {
        var top = Listing()
        var subfolders: [String] = []
        list("", removing: removingStaleTemporaryFiles, into: &top, subfolders: &subfolders)
        let workers = min(subfolders.count, max(1, ProcessInfo.processInfo.activeProcessorCount), 8)
        if workers <= 1 {
            walkSubtrees(subfolders, removing: removingStaleTemporaryFiles, into: &top)
        } else {
            let shared = SharedWalk(subfolders: subfolders, workers: workers)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                var part = Listing()
                while let next = shared.take() {
                    walkSubtrees([next], removing: removingStaleTemporaryFiles, into: &part)
                }
                shared.finish(worker, part)
            }
            for part in shared.parts {
                top.files += part.files
                top.skipped += part.skipped
            }
        }
        top.files.sort { UTF8Order.precedes($0.path, $1.path) }
        top.skipped.sort { UTF8Order.precedes($0.path, $1.path) }
        return (top.files, top.skipped)
    }

    struct Listing {
        var files: [Entry] = []
        var skipped: [Skipped] = []
    }

    /// Hands out subfolders to the workers and collects what each found.
    private final class SharedWalk: @unchecked Sendable {
        private let lock = NSLock()
        private var subfolders: [String]
        private(set) var parts: [Listing]

        init(subfolders: [String], workers: Int) {
            self.subfolders = subfolders.reversed()
            parts = Array(repeating: Listing(), count: workers)
        }

        func take() -> String? {
            lock.lock()
            defer { lock.unlock() }
            return subfolders.popLast()
        }

        func finish(_ worker: Int, _ part: Listing) {
            lock.lock()
            parts[worker] = part
            lock.unlock()
        }
    }

    /// Walks each folder in `folders` and everything below it, depth first.
    private func walkSubtrees(_ folders: [String], removing: Bool, into result: inout Listing) {
        var pending = Array(folders.reversed())
        while let relative = pending.popLast() {
            var found: [String] = []
            list(relative, removing: removing, into: &result, subfolders: &found)
            pending += found.reversed()
        }
    }

    /// Lists one folder: its `*.json` files into `result`, its subfolders (not ignored,
    /// not another tree) into `subfolders`.
    private func list(_ relative: String, removing: Bool, into result: inout Listing, subfolders: inout [String]) {
        let absolute = relative.isEmpty ? root : root + "/" + relative
        guard let dir = opendir(absolute) else {
            result.skipped.append(
                Skipped(
                    path: relative.isEmpty ? "." : relative,
                    reason: "cannot open folder: \(String(cString: strerror(errno)))"))
            return
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            let isJSON = name.hasSuffix(".json")
            let atRoot = relative.isEmpty
            guard
                mayMatter(name, isJSON: isJSON, type: entry.pointee.d_type, atRoot: atRoot, fd: fd, removing: removing)
            else { continue }
            let path = atRoot ? name : relative + "/" + name
            var st = stat()
            guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let info = FileStat(st)
            if info.isDirectory {
                if isWalkable(folder: name, path: path, fd: fd, into: &result) { subfolders.append(path) }
            } else if isJSON {
                if ignore.isIgnored(path, isDirectory: false) { continue }
                if info.isRegularFile {
                    result.files.append(Entry(path: path, stat: info))
                } else if info.isSymbolicLink {
                    result.skipped.append(Skipped(path: path, reason: "symbolic link (not followed)"))
                }
            }
        }
    }

    /// Whether a folder entry named `name` may be a document or a folder to walk. Only
    /// folders and `*.json` files matter: anything else is not stat'ed. Removes docsync's
    /// own temporary file when its process is gone and `removing` is set.
    private func mayMatter(_ name: String, isJSON: Bool, type: UInt8, atRoot: Bool, fd: Int32, removing: Bool) -> Bool {
        if name == "." || name == ".." { return false }
        // `.docsync/` at any depth is metadata (of this tree, or of a tree or remote
        // nested in it), never documents.
        if name == DocumentPath.metadataFolder || (atRoot && name == ".git") { return false }
        if name.hasPrefix(".docsync-tmp-") {
            if removing, Self.isStaleTemporary(name) { unlinkat(fd, name, 0) }
            return false
        }
        return isJSON || type == UInt8(DT_DIR) || type == UInt8(DT_UNKNOWN)
    }

    /// Whether the subfolder `name` (at `path`) is walked: not ignored, and not another
    /// tree (which is noted in `result.skipped`).
    private func isWalkable(folder name: String, path: String, fd: Int32, into result: inout Listing) -> Bool {
        if ignore.isIgnored(path, isDirectory: true) { return false }
        // A folder with a `.docsync/` of its own is another tree or a folder
        // remote: syncing it as part of this tree would copy it into itself.
        var inner = stat()
        guard fstatat(fd, name + "/" + DocumentPath.metadataFolder, &inner, AT_SYMLINK_NOFOLLOW) == 0 else {
            return true
        }
        result.skipped.append(
            Skipped(
                path: path,
                reason:
                    "holds a .docsync/ folder (another docsync tree or a folder remote); not synced as part of this tree"
            ))
        return false
    }

    /// `.docsync-tmp-<pid>-…` of a process that no longer exists on this machine.
    static func isStaleTemporary(_ name: String) -> Bool {
        let rest = name.dropFirst(".docsync-tmp-".count)
        guard let pid = Int32(rest.prefix { $0 != "-" }), pid > 0, pid != getpid() else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }
}
