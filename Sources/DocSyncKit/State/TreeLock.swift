import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One docsync run per working tree at a time: an flock on `.docsync/lock`. The kernel
/// drops it when the process dies, so there is never a stale lock to clean up.
public final class TreeLock {
    private var fd: Int32 = -1

    public struct Busy: Error {
        public var holder: String
    }

    /// Waits up to `waitSeconds` for the lock, then throws `Busy`.
    public init(path: String, waitSeconds: Double) throws {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
        let deadline = FileSystem.currentTimeNanos + Int64(waitSeconds * 1e9)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if FileSystem.currentTimeNanos >= deadline {
                let holder = (try? FileSystem.readFile(path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
                close(fd)
                fd = -1
                throw Busy(holder: holder.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            usleep(50_000)
        }
        let note = Array("pid \(getpid())\n".utf8)
        ftruncate(fd, 0)
        _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    public func release() {
        if fd >= 0 {
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
