#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The directory remote's write lock, safe on NFS: each pusher writes a uniquely named
/// file holding its owner and time and hard-links it to `lock`; link(2) is atomic on NFS
/// where O_EXCL historically was not. A lock older than `staleSeconds`, or held by a
/// dead process on this host, is broken by renaming it away (only one breaker wins).
final class RemoteLock {
    let lockPath: String
    private let ownPath: String
    private let ownContent: [UInt8]
    private(set) var held = false

    init(folder: String, replica: String) {
        lockPath = folder + "/lock"
        let host = ProcessInfo.processInfo.hostName
        ownPath = folder + "/lock.\(host).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let info: [String: Any] = ["host": host, "pid": Int(getpid()), "replica": replica, "time": FileSystem.currentTimeNanos / 1_000_000]
        ownContent = Array((try? JSONSerialization.data(withJSONObject: info, options: [.sortedKeys])) ?? Data()) + [10]
    }

    /// Tries for up to `waitSeconds`; returns the holder's description if it could not.
    func acquire(waitSeconds: Double, staleSeconds: Double) throws -> String? {
        try FileSystem.writeAtomically(ownPath, ownContent)
        defer { unlink(ownPath) }
        let deadline = FileSystem.currentTimeNanos + Int64(waitSeconds * 1e9)
        while true {
            if link(ownPath, lockPath) == 0 || ((try? FileSystem.status(ownPath))?.linkCount == 2) {
                held = true
                return nil
            }
            let holder = describeHolder()
            if isStale(staleSeconds: staleSeconds) {
                let away = lockPath + ".stale.\(UInt32.random(in: 0...UInt32.max))"
                if rename(lockPath, away) == 0 { unlink(away) }
                continue
            }
            if FileSystem.currentTimeNanos >= deadline { return holder }
            usleep(100_000)
        }
    }

    func release() {
        guard held else { return }
        if let current = try? FileSystem.readFile(lockPath), current == ownContent { unlink(lockPath) }
        held = false
    }

    private func holderInfo() -> [String: Any]? {
        guard let bytes = try? FileSystem.readFile(lockPath) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    private func describeHolder() -> String {
        guard let info = holderInfo() else { return "unknown holder" }
        return "host \(info["host"] ?? "?"), pid \(info["pid"] ?? "?")"
    }

    private func isStale(staleSeconds: Double) -> Bool {
        guard let st = try? FileSystem.status(lockPath) else { return false }
        let ageSeconds = Double(FileSystem.currentTimeNanos - st.mtimeNanos) / 1e9
        if ageSeconds > staleSeconds { return true }
        if let info = holderInfo(), info["host"] as? String == ProcessInfo.processInfo.hostName,
           let pid = info["pid"] as? Int, pid != Int(getpid()), kill(pid_t(pid), 0) != 0, errno == ESRCH {
            return true
        }
        return false
    }
}
