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

    /// What one walk found: the files, what it reports passing over, and every entry it
    /// did not look into. A tracked document at or below an `unentered` path is unknown,
    /// never deleted: its file may well be there (SPEC: "what the scan could not look at
    /// is unknown").
    public struct Walk: Sendable {
        public var files: [Entry]
        public var skipped: [Skipped]
        /// Folders and files that exist but were not read: unreadable, symlinks, another
        /// tree, ignored folders, entries that failed to stat. Sorted by path.
        public var unentered: [Skipped]
        /// Every folder listed, with its modification time when it was opened: a file
        /// created, renamed or deleted in it since changes it (see `changedSinceListed`).
        public var folders: [(path: String, modified: Int64)] = []

        /// Whether a folder the walk listed was changed since (or is gone): the files the
        /// walk found are then out of date. One `stat` per folder.
        public func changedSinceListed(root: String) -> Bool {
            for folder in folders {
                var st = stat()
                let absolute = folder.path.isEmpty ? root : root + "/" + folder.path
                guard lstat(absolute, &st) == 0 else { return true }
                if Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec) != folder.modified {
                    return true
                }
            }
            return false
        }

        /// Why the document at `path` could not be looked at (the entry at or above it
        /// the walk did not enter), or nil when the walk looked where it would be.
        public func unenteredReason(for path: String) -> String? {
            guard !unentered.isEmpty else { return nil }
            if let root = unentered.first(where: { $0.path == "." }) { return "the tree's root: \(root.reason)" }
            var prefix = Substring(path)
            while true {
                if let found = unentered.first(where: { $0.path == prefix }) {
                    return found.path == path ? found.reason : "\(found.path): \(found.reason)"
                }
                guard let slash = prefix.lastIndex(of: "/") else { return nil }
                prefix = prefix[..<slash]
            }
        }
    }

    public let root: String
    public let ignore: IgnoreRules

    public init(root: String, ignore: IgnoreRules) {
        self.root = root
        self.ignore = ignore
    }

    /// Files found, sorted by path (`UTF8Order`), plus what was passed over and why
    /// (symlinks, unreadable folders). Ignored paths are not reported.
    /// - Parameter removingStaleTemporaryFiles: delete docsync's own temporary files
    ///   (`.docsync-tmp-<pid>-…`) whose process is gone. Only for a caller holding the
    ///   tree lock. Why: a run killed while writing a document left them in the user's
    ///   folders for good (found by the random-kill tests).
    ///
    /// The root folder is listed first; its subfolders are then walked on every core
    /// (each worker takes the next unwalked subfolder and walks it whole). Why: the walk
    /// is one `fstatat` per entry, and on 100,000 files one core spent most of a no-op
    /// `status` waiting on them. Each folder's entries are sorted as they are listed, a
    /// subfolder's name with a `/` after it, and walked in that order (git's order): the
    /// files come out in path order with no sort of the whole list, which was a tenth of
    /// a no-op `status` at 100,000 files.
    public func walk(removingStaleTemporaryFiles: Bool = false) -> Walk {
        let removing = removingStaleTemporaryFiles
        var top = Listing()
        let rootChildren = list("", removing: removing, into: &top)
        let subfolders = rootChildren.compactMap(\.folder)
        var subtrees: [Listing]
        let workers = min(subfolders.count, max(1, ProcessInfo.processInfo.activeProcessorCount), 8)
        if workers <= 1 {
            subtrees = subfolders.map { folder in
                var part = Listing()
                walkFolder(folder, removing: removing, into: &part)
                return part
            }
        } else {
            let shared = SharedWalk(count: subfolders.count)
            DispatchQueue.concurrentPerform(iterations: workers) { _ in
                while let next = shared.take() {
                    var part = Listing()
                    walkFolder(subfolders[next], removing: removing, into: &part)
                    shared.finish(next, part)
                }
            }
            subtrees = shared.parts
        }
        var files: [Entry] = []
        files.reserveCapacity(top.files.count + subtrees.reduce(0) { $0 + $1.files.count })
        var skipped = top.skipped
        var unentered = top.unentered
        var folders = top.folders
        var nextSubtree = 0
        for child in rootChildren {
            if let file = child.file {
                files.append(file)
            } else {
                files += subtrees[nextSubtree].files
                skipped += subtrees[nextSubtree].skipped
                unentered += subtrees[nextSubtree].unentered
                folders += subtrees[nextSubtree].folders
                subtrees[nextSubtree] = Listing()
                nextSubtree += 1
            }
        }
        skipped.sort { UTF8Order.precedes($0.path, $1.path) }
        unentered.sort { UTF8Order.precedes($0.path, $1.path) }
        return Walk(files: files, skipped: skipped, unentered: unentered, folders: folders)
    }

    struct Listing {
        var files: [Entry] = []
        var skipped: [Skipped] = []
        var unentered: [Skipped] = []
        var folders: [(path: String, modified: Int64)] = []

        /// Passed over and said so.
        mutating func skip(_ path: String, _ reason: String) {
            skipped.append(Skipped(path: path, reason: reason))
            unentered.append(Skipped(path: path, reason: reason))
        }
    }

    /// One entry of a folder that matters: a document file, or a subfolder to walk.
    private struct Child {
        /// The name, with a `/` after a folder's: sorted by it, the folder's paths come
        /// out in byte order (`a.json` < `a/…` < `a-b/…` as paths, as "a.json" < "a/" < "a-b").
        var key: String
        var file: Entry?
        var folder: String?
    }

    /// Hands out the subfolders' numbers to the workers and collects what each found.
    private final class SharedWalk: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private let count: Int
        private(set) var parts: [Listing]

        init(count: Int) {
            self.count = count
            parts = Array(repeating: Listing(), count: count)
        }

        func take() -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard next < count else { return nil }
            next += 1
            return next - 1
        }

        func finish(_ number: Int, _ part: Listing) {
            lock.lock()
            parts[number] = part
            lock.unlock()
        }
    }

    /// Walks the folder `relative` and everything below it, in path order.
    private func walkFolder(_ relative: String, removing: Bool, into result: inout Listing) {
        for child in list(relative, removing: removing, into: &result) {
            if let file = child.file {
                result.files.append(file)
            } else if let folder = child.folder {
                walkFolder(folder, removing: removing, into: &result)
            }
        }
    }

    /// Lists one folder: its `*.json` files and its subfolders (not ignored, not another
    /// tree), sorted; what it passes over goes to `result.skipped`.
    private func list(_ relative: String, removing: Bool, into result: inout Listing) -> [Child] {
        let absolute = relative.isEmpty ? root : root + "/" + relative
        // O_NOFOLLOW: a folder swapped for a symlink after its parent was listed is not
        // entered either. (The root itself may be reached through a symlink the user chose.)
        let openedFd = open(absolute, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (relative.isEmpty ? 0 : O_NOFOLLOW))
        guard openedFd >= 0, let dir = fdopendir(openedFd) else {
            let code = errno
            if openedFd >= 0 { close(openedFd) }
            result.skip(
                relative.isEmpty ? "." : relative,
                code == ENOENT
                    ? "folder vanished while it was being read"
                    : code == ELOOP || code == ENOTDIR
                        ? "became a symbolic link or file while it was being read"
                        : "cannot open folder: \(String(cString: strerror(code)))")
            return []
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        var opened = stat()
        if fstat(fd, &opened) == 0 {
            result.folders.append(
                (relative, Int64(opened.st_mtim.tv_sec) * 1_000_000_000 + Int64(opened.st_mtim.tv_nsec)))
        }
        var children: [Child] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                // NULL with errno set is a failed read, not the end: what is left of the
                // folder is unknown.
                if errno != 0 {
                    result.skip(
                        relative.isEmpty ? "." : relative,
                        "cannot read folder: \(String(cString: strerror(errno)))")
                    return []
                }
                break
            }
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
            guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
                // Gone since it was listed: deleted. Any other failure: not looked at.
                if errno != ENOENT {
                    result.skip(path, "cannot look at it: \(String(cString: strerror(errno)))")
                }
                continue
            }
            let info = FileStat(st)
            if info.isDirectory {
                if isWalkable(folder: name, path: path, fd: fd, into: &result) {
                    children.append(Child(key: name + "/", folder: path))
                }
            } else if info.isSymbolicLink {
                passOverSymlink(name, path: path, isJSON: isJSON, fd: fd, into: &result)
            } else if isJSON {
                if ignore.isIgnored(path, isDirectory: false) { continue }
                if info.isRegularFile {
                    children.append(Child(key: name, file: Entry(path: path, stat: info)))
                } else {
                    result.unentered.append(Skipped(path: path, reason: "not a regular file"))
                }
            }
        }
        return Self.sortedByKey(children)
    }

    /// `children` in the byte order of their keys. Why not `sort` on them: moving the
    /// entries (three strings each) through a merge sort was a tenth of a no-op `status`;
    /// here the keys' bytes go into one buffer, fixed-size references to them are
    /// sorted, and each child is moved once.
    private static func sortedByKey(_ children: [Child]) -> [Child] {
        guard children.count > 1 else { return children }
        var bytes: [UInt8] = []
        var spans: [(start: Int32, count: Int32, child: Int32)] = []
        spans.reserveCapacity(children.count)
        for (i, child) in children.enumerated() {
            let start = bytes.count
            bytes += child.key.utf8
            spans.append((Int32(start), Int32(bytes.count - start), Int32(i)))
        }
        bytes.withUnsafeBytes { buffer in
            let base = buffer.baseAddress!
            spans.sort { a, b in
                UTF8Order.compare(
                    UnsafeRawBufferPointer(start: base + Int(a.start), count: Int(a.count)),
                    UnsafeRawBufferPointer(start: base + Int(b.start), count: Int(b.count))) < 0
            }
        }
        return spans.map { children[Int($0.child)] }
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
        return isJSON || type == UInt8(DT_DIR) || type == UInt8(DT_LNK) || type == UInt8(DT_UNKNOWN)
    }

    /// A symlink is never followed (its target may be anywhere, or loop). One named
    /// `*.json`, or pointing at a folder, is reported; any other is only noted as
    /// unentered (a document tracked under it is unknown, not deleted).
    private func passOverSymlink(_ name: String, path: String, isJSON: Bool, fd: Int32, into result: inout Listing) {
        if ignore.isIgnored(path, isDirectory: false) || ignore.isIgnored(path, isDirectory: true) {
            result.unentered.append(Skipped(path: path, reason: "ignored by .docsyncignore"))
            return
        }
        var target = stat()
        let toFolder = fstatat(fd, name, &target, 0) == 0 && (target.st_mode & S_IFMT) == S_IFDIR
        if toFolder {
            result.skip(path, "symbolic link to a folder (not followed; its documents are not synced)")
        } else if isJSON {
            result.skip(path, "symbolic link (not followed)")
        } else {
            result.unentered.append(Skipped(path: path, reason: "symbolic link (not followed)"))
        }
    }

    /// Whether the subfolder `name` (at `path`) is walked: not ignored, and not another
    /// tree (which is noted in `result.skipped`).
    private func isWalkable(folder name: String, path: String, fd: Int32, into result: inout Listing) -> Bool {
        if ignore.isIgnored(path, isDirectory: true) {
            result.unentered.append(Skipped(path: path, reason: "ignored by .docsyncignore"))
            return false
        }
        // A folder with a `.docsync/` of its own is another tree or a folder
        // remote: syncing it as part of this tree would copy it into itself.
        var inner = stat()
        guard fstatat(fd, name + "/" + DocumentPath.metadataFolder, &inner, AT_SYMLINK_NOFOLLOW) == 0 else {
            return true
        }
        result.skip(
            path, "holds a .docsync/ folder (another docsync tree or a folder remote); not synced as part of this tree")
        return false
    }

    /// `.docsync-tmp-…` of a process that no longer exists on this machine.
    static func isStaleTemporary(_ name: String) -> Bool {
        // Not by age: a tree's files are not stat'ed here, and a dead writer is enough.
        TemporaryName(name)?.isStale(modifiedNanos: nil) ?? false
    }
}
