import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Watches a folder remote on this machine (a local disk, a drive folder, or a mount
/// that reports changes) for pushes, for `docsync watch`, without polling:
/// - format 1: every push ends by replacing `.docsync/generation` (its commit point, see
///   DirectoryRemote), so one watch on `.docsync/` is enough;
/// - the drive layout: every push ends with a new file in `replicas/<id>/commits/`
///   (see DriveFolderRemote), so each of those folders is watched, and `replicas/` for
///   replicas that join.
/// Pushes this replica makes come back too; the caller drains them after its own sync.
public final class RemoteFolderWatcher {
    public let fd: Int32
    public let folder: String
    private let drive: DriveLayout?
    private var watched = Set<String>()
    private var replicasWatch: Int32 = -1
    /// This replica's own folder is never watched: its pushes need no wake-up.
    private let ownReplica: String
    /// Watches that only say "a replica folder changed": look for new commit folders.
    private var joinWatches = Set<Int32>()

    /// Nil when the remote is not a folder that can be watched here (a git remote, a
    /// folder that is not there yet, or inotify refusing).
    public init?(config: Config) {
        guard let url = config["remote.url"],
            (config["remote.kind"] ?? RemoteKind.detect(url).rawValue) == RemoteKind.dir.rawValue
        else { return nil }
        let root = DirectoryRemote(url: url).root
        folder = root + "/.docsync"
        drive = FolderRemoteFormat.of(url) == .drive ? DriveLayout(root: root) : nil
        ownReplica = config.replicaId
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR)
        if let drive {
            replicasWatch = inotify_add_watch(fd, drive.replicas, mask | UInt32(IN_CREATE))
            guard replicasWatch >= 0 else {
                close(fd)
                return nil
            }
            watchCommitFolders()
        } else if inotify_add_watch(fd, folder, mask) < 0 {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// Adds a watch on every replica's commit folder not watched yet; true if one of
    /// them already holds a commit (it arrived before its folder was watched).
    @discardableResult
    private func watchCommitFolders() -> Bool {
        guard let drive else { return false }
        var arrived = false
        for name in (try? drive.files.listDirectory(drive.replicas)) ?? []
        where DriveLayout.isPlainName(name) && !watched.contains(name) && name != ownReplica {
            let commits = drive.commits(name)
            // Only ever read: the folder is replica `name`'s. Until it has a commits
            // folder, its own folder is watched for one to appear.
            guard drive.files.isDirectory(commits) else {
                if let wd = Optional(
                    inotify_add_watch(
                        fd, drive.replicaFolder(name),
                        UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW))),
                    wd >= 0
                {
                    joinWatches.insert(wd)
                }
                continue
            }
            if inotify_add_watch(
                fd, commits, UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW))
                >= 0
            {
                watched.insert(name)
                arrived =
                    arrived
                    || ((try? drive.files.listDirectory(commits)) ?? []).contains { DriveLayout.commitName($0) != nil }
            }
        }
        return arrived
    }

    /// Reads every queued event (never blocks); true when another push may have landed.
    public func drain() -> Bool {
        var pushed = false
        var joined = false
        InotifyEvents.drain(fd) { wd, mask, name in
            if mask & UInt32(IN_Q_OVERFLOW) != 0 { pushed = true }
            if drive == nil {
                if name == "generation" { pushed = true }
            } else if wd == replicasWatch || joinWatches.contains(wd) {
                joined = true
            } else if !name.hasPrefix(".") {
                pushed = true
            }
        }
        if joined, watchCommitFolders() { pushed = true }
        return pushed
    }
}
