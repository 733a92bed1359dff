import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Watches a working tree's folders with inotify, for `docsync watch`: one watch per folder
/// the sync would walk (not `.docsync/`, not ignored folders, not a nested tree), added
/// as folders appear and dropped as they go. It only says *whether* something that
/// matters changed; the sync itself finds out what (it scans the tree anyway).
public final class TreeWatcher {
    public enum Failure: Error, LocalizedError {
        /// `inotify_add_watch` failed with ENOSPC: the per-user watch limit is reached.
        case watchLimit(limit: String, folders: Int)
        /// `inotify_init1` failed (EMFILE: too many inotify instances).
        case cannotWatch(String)

        public var errorDescription: String? {
            switch self {
            case let .watchLimit(limit, folders):
                return
                    "cannot watch every folder of the tree: the inotify watch limit (fs.inotify.max_user_watches = \(limit), shared by all of this user's programs) "
                    + "was reached after \(folders) folders. Raise it, e.g. `sudo sysctl fs.inotify.max_user_watches=524288` "
                    + "(and put `fs.inotify.max_user_watches=524288` in /etc/sysctl.d/90-docsync.conf to keep it), or sync from cron instead"
            case let .cannotWatch(reason):
                return "cannot start watching the tree: \(reason)"
            }
        }
    }

    /// What a batch of events amounted to.
    public struct Changes: Sendable {
        /// A document, a folder or `.docsyncignore` changed: a sync is due.
        public var relevant = false
        /// The kernel's queue overflowed: events were lost, the watches were rebuilt and a
        /// full sync is due.
        public var overflowed = false
        /// Documents (tree-relative) that had events. When these are all a batch had, the
        /// caller may find they are exactly as the last sync left them (its own writes).
        public var documents: Set<String> = []
        /// Something other than a document changed (a folder, `.docsyncignore`, an
        /// overflow): a sync is due whatever the documents look like.
        public var structural = false

        /// Something other than a document changed: a sync is due.
        mutating func markStructural() {
            relevant = true
            structural = true
        }
    }

    public let root: String
    public let fd: Int32
    private var ignore: IgnoreRules
    private var paths: [Int32: String] = [:]  // watch descriptor → folder, relative ("" = root)
    private var descriptors: [String: Int32] = [:]

    static let mask: UInt32 =
        UInt32(IN_CLOSE_WRITE) | UInt32(IN_MODIFY) | UInt32(IN_CREATE) | UInt32(IN_DELETE)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_MOVED_TO) | UInt32(IN_DELETE_SELF) | UInt32(IN_ONLYDIR)
        | UInt32(IN_DONT_FOLLOW)
        | UInt32(IN_EXCL_UNLINK)

    /// Starts watching every folder of the tree at `root`.
    public init(root: String) throws {
        self.root = root
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Failure.cannotWatch("inotify_init1: \(String(cString: strerror(errno)))") }
        ignore = IgnoreRules.load(from: TreeLayout(root: root).ignoreFile)
        do { try watchTree("") } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// How many folders are watched.
    public var folderCount: Int { paths.count }

    /// Adds watches for `relative` and every folder under it the sync would walk.
    private func watchTree(_ relative: String) throws {
        var pending = [relative]
        while let folder = pending.popLast() {
            let absolute = folder.isEmpty ? root : root + "/" + folder
            let wd = inotify_add_watch(fd, absolute, Self.mask)
            if wd < 0 {
                let code = errno
                if code == ENOSPC { throw Failure.watchLimit(limit: Self.watchLimit, folders: paths.count) }
                continue  // gone already, or unreadable: the sync reports what it cannot read
            }
            if let old = paths[wd], old != folder { descriptors.removeValue(forKey: old) }
            paths[wd] = folder
            descriptors[folder] = wd
            guard let dir = opendir(absolute) else { continue }
            let dfd = dirfd(dir)
            while let entry = readdir(dir) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if name == "." || name == ".." { continue }
                let path = folder.isEmpty ? name : folder + "/" + name
                guard isWatchable(name: name, path: path, parent: folder) else { continue }
                var st = stat()
                guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                    continue
                }
                var inner = stat()
                if fstatat(dfd, name + "/" + DocumentPath.metadataFolder, &inner, AT_SYMLINK_NOFOLLOW) == 0 { continue }
                pending.append(path)
            }
            closedir(dir)
        }
    }

    /// Whether a folder named `name` at `path` is one the sync walks (TreeWalker's rules).
    private func isWatchable(name: String, path: String, parent: String) -> Bool {
        if name == DocumentPath.metadataFolder || (parent.isEmpty && name == ".git") { return false }
        return !ignore.isIgnored(path, isDirectory: true)
    }

    /// Drops the watches of `relative` and everything under it (a folder moved away or removed).
    private func unwatchTree(_ relative: String) {
        for (folder, wd) in descriptors where folder == relative || folder.hasPrefix(relative + "/") {
            inotify_rm_watch(fd, wd)
            descriptors.removeValue(forKey: folder)
            paths.removeValue(forKey: wd)
        }
    }

    /// Rebuilds every watch from the tree as it is now (after an overflow, or when
    /// `.docsyncignore` changed).
    private func rewatch() throws {
        for wd in paths.keys { inotify_rm_watch(fd, wd) }
        paths = [:]
        descriptors = [:]
        ignore = IgnoreRules.load(from: TreeLayout(root: root).ignoreFile)
        try watchTree("")
    }

    /// Reads every event queued now (never blocks) and says whether a sync is due.
    public func drain() throws -> Changes {
        var changes = Changes()
        var rewatchNeeded = false
        try InotifyEvents.drain(fd) { wd, mask, name in
            if try take(wd: wd, mask: mask, name: name, into: &changes) { rewatchNeeded = true }
        }
        if rewatchNeeded { try rewatch() }
        return changes
    }

    /// Notes one event in `changes`, keeping the watches in step with folders created,
    /// moved and removed. Returns whether every watch must be rebuilt.
    private func take(wd: Int32, mask: UInt32, name: String, into changes: inout Changes) throws -> Bool {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            changes.overflowed = true
            changes.markStructural()
            return true
        }
        if mask & UInt32(IN_IGNORED) != 0 {
            // The folder was removed (or its watch dropped): forget it.
            if let folder = paths.removeValue(forKey: wd), descriptors[folder] == wd {
                descriptors.removeValue(forKey: folder)
            }
            return false
        }
        guard let folder = paths[wd] else { return false }
        if mask & UInt32(IN_DELETE_SELF) != 0 {
            changes.markStructural()
            return false
        }
        let path = folder.isEmpty ? name : folder + "/" + name
        if folder.isEmpty && name == ".docsyncignore" {
            // New ignore rules: which folders are watched may change.
            changes.markStructural()
            return true
        }
        if mask & UInt32(IN_ISDIR) != 0 {
            guard isWatchable(name: name, path: path, parent: folder) else { return false }
            if mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO)) != 0 {
                // Files may be in it already (a folder moved in, or filled before
                // its watch was added): the sync scans them.
                try watchTree(path)
            } else if mask & UInt32(IN_MOVED_FROM) != 0 {
                unwatchTree(path)
            }
            changes.markStructural()
            return false
        }
        // Only documents matter: editors' and sed's temporary files, docsync's own
        // `.docsync-tmp-…` files and ignored documents do not.
        guard name.hasSuffix(".json"), !name.hasPrefix(".docsync-tmp-"), !ignore.isIgnored(path, isDirectory: false)
        else { return false }
        changes.relevant = true
        changes.documents.insert(path)
        return false
    }

    /// `fs.inotify.max_user_watches` as the kernel reports it (or the user namespace's
    /// limit when that is lower).
    static var watchLimit: String {
        let read = { (path: String) -> String? in
            (try? FileSystem.readFile(path)).map {
                String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        let global = read("/proc/sys/fs/inotify/max_user_watches")
        let namespace = read("/proc/sys/user/max_inotify_watches")
        if let g = global.flatMap(Int.init), let n = namespace.flatMap(Int.init), n < g { return String(n) }
        return global ?? "unknown"
    }
}
