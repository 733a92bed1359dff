#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Watches a folder remote on this machine (a local disk, or a mount that reports
/// changes) for pushes, for `docsync watch`: every push ends by replacing the remote's
/// `.docsync/generation` (its commit point, see DirectoryRemote), so one inotify watch on
/// that folder says "another replica pushed" without polling. Pushes this replica makes
/// come back too; the caller drains them after its own sync.
public final class RemoteFolderWatcher {
    public let fd: Int32
    public let folder: String

    /// Nil when the remote is not a folder that can be watched here (a git remote, a
    /// folder that is not there yet, or inotify refusing).
    public init?(config: Config) {
        guard let url = config["remote.url"], (config["remote.kind"] ?? RemoteKind.detect(url).rawValue) == RemoteKind.dir.rawValue else { return nil }
        folder = DirectoryRemote(url: url).root + "/.docsync"
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, folder, UInt32(IN_MOVED_TO) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR)) >= 0 else {
            close(fd)
            return nil
        }
    }

    deinit { close(fd) }

    /// Reads every queued event (never blocks); true when the commit point was replaced.
    public func drain() -> Bool {
        var pushed = false
        InotifyEvents.drain(fd) { _, mask, name in
            if name == "generation" || mask & UInt32(IN_Q_OVERFLOW) != 0 { pushed = true }
        }
        return pushed
    }
}
