import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The drive layout's push lock: flock(2) on `.docsync/push.lock`, a file that is
/// created empty and never written, so a sync service has nothing to copy or to
/// conflict over. It serialises pushes that share a kernel (or an NFS server's lock
/// manager) and so saves them a fork; it is not needed for correctness, and a lock held
/// on another machine of a drive is never seen, never waited for and never stale.
struct DriveLocalLock {
    private let fd: Int32

    static func acquire(_ path: String, waitSeconds: Double, url: String, files: RemotePerimeter) throws
        -> DriveLocalLock
    {
        // Never through a symlink: a push.lock (or .docsync) that is one is refused.
        let fd: Int32
        do { fd = try files.openFile(path, O_RDONLY | O_CREAT) } catch let error as RemoteError {
            throw error
        } catch {
            // A folder where the lock file cannot be made (read-only for this user) still
            // fails later at the commit file; without the lock the push may only fork.
            return DriveLocalLock(fd: -1)
        }
        let deadline = FileSystem.currentTimeNanos + Int64(waitSeconds * 1e9)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno != EWOULDBLOCK && errno != EINTR { return DriveLocalLock(fd: fd) }
            if FileSystem.currentTimeNanos > deadline {
                close(fd)
                throw RemoteError.locked(url: url, holder: "another push on this machine")
            }
            usleep(20_000)
        }
        return DriveLocalLock(fd: fd)
    }

    func release() {
        if fd >= 0 { close(fd) }
    }
}
