import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The directory remote's write lock, safe on NFS: each pusher writes a uniquely named
/// file holding its owner and time and hard-links it to `lock`; link(2) is atomic on NFS
/// where O_EXCL historically was not. A lock older than `staleSeconds`, or held by a
/// dead process on this host, is broken by renaming it away (only one breaker wins).
final class RemoteLock {
    let lockPath: String
    private let ownPath: String
    private let ownContent: [UInt8]
    private(set) var held = false

    /// `link(2)`; a test replaces it to play a file system without hard links, which this
    /// machine's kernel cannot mount (no FAT, no SMB).
    private let makeLink: (String, String) -> Int32
    /// The remote's files: the lock, its holder's file and a stale lock renamed away are
    /// never reached through a symlink.
    private let files: RemotePerimeter

    /// - Parameter files: the remote's perimeter (nil: one rooted at `folder`'s parent).
    init(
        folder: String, replica: String, files: RemotePerimeter? = nil,
        link makeLink: ((String, String) -> Int32)? = nil
    ) {
        let files = files ?? RemotePerimeter(root: (folder as NSString).deletingLastPathComponent, url: folder)
        self.files = files
        self.makeLink =
            makeLink ?? { from, to in
                let code = files.link(from, to)
                if code != 0 { errno = code }
                return code == 0 ? 0 : -1
            }
        lockPath = folder + "/lock"
        let host = ProcessInfo.processInfo.hostName
        ownPath = folder + "/lock.\(host).\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let info: [String: Any] = [
            "host": host, "pid": Int(getpid()), "replica": replica, "time": FileSystem.currentTimeNanos / 1_000_000
        ]
        ownContent = Array((try? JSONSerialization.data(withJSONObject: info, options: [.sortedKeys])) ?? Data()) + [10]
    }

    /// The folder cannot hold the lock: its file system has no hard links (some SMB
    /// shares, FAT, some FUSE mounts). Why an error of its own: every attempt failed and
    /// was reported as "locked by another push" (exit 75), so cron retried in silence.
    static func unsupported(folder: String, errno: Int32) -> RemoteError {
        .rejected(
            url: folder,
            reason:
                "the folder does not support hard links (\(String(cString: strerror(errno)))), which the remote lock needs; "
                + "put the remote on a file system that has them (a local disk, NFS, an SMB share with POSIX extensions), or use a git repository"
        )
    }

    /// Tries for up to `waitSeconds`; returns the holder's description if it could not.
    func acquire(waitSeconds: Double, staleSeconds: Double) throws -> String? {
        try files.writeAtomically(ownPath, ownContent)
        defer { try? files.removeFile(ownPath) }
        // The share's clock, read off the file just written: a lock's age is judged by the
        // clock that dated it (an NFS or SMB server's), never by this machine's, which may
        // be a day off. Why: a machine whose clock ran ahead took every live lock for a
        // stale one and broke it.
        let writtenHere = FileSystem.currentTimeNanos
        let writtenThere = (try? files.linkStatus(ownPath).mtimeNanos) ?? writtenHere
        let shareNow = { writtenThere + (FileSystem.currentTimeNanos - writtenHere) }
        let deadline = FileSystem.currentTimeNanos + Int64(waitSeconds * 1e9)
        while true {
            let linked = makeLink(ownPath, lockPath) == 0
            let failure = linked ? 0 : errno
            if linked || ((try? files.linkStatus(ownPath))?.linkCount == 2) {
                held = true
                HeldHere.shared.insert(lockPath)
                return nil
            }
            if [EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS].contains(failure) {
                throw Self.unsupported(folder: (lockPath as NSString).deletingLastPathComponent, errno: failure)
            }
            let holder = describeHolder()
            if let staleInode = staleLockInode(staleSeconds: staleSeconds, now: shareNow()) {
                // Rename, not unlink: only one breaker can win. If what we renamed is not
                // the lock we judged stale, someone took the lock meanwhile: put it back.
                let away = lockPath + ".stale.\(UInt32.random(in: 0...UInt32.max))"
                if (try? files.rename(lockPath, away)) != nil {
                    if (try? files.linkStatus(away))?.inode != staleInode { _ = files.link(away, lockPath) }
                    try? files.removeFile(away)
                }
                continue
            }
            if FileSystem.currentTimeNanos >= deadline { return holder }
            usleep(100_000)
        }
    }

    func release() {
        guard held else { return }
        if let current = try? files.readFile(lockPath), current == ownContent { try? files.removeFile(lockPath) }
        held = false
        HeldHere.shared.remove(lockPath)
    }

    private func holderInfo() -> [String: Any]? {
        guard let bytes = try? files.readFile(lockPath) else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
    }

    private func describeHolder() -> String {
        guard let info = holderInfo() else { return "unknown holder" }
        return "host \(info["host"] ?? "?"), pid \(info["pid"] ?? "?")"
    }

    /// The inode of the current lock if it is stale: older than `staleSeconds` since
    /// its holder last refreshed it (`now` by the share's clock), or held by a dead
    /// process on this host.
    private func staleLockInode(staleSeconds: Double, now: Int64) -> UInt64? {
        guard let st = try? files.linkStatus(lockPath) else { return nil }
        let ageSeconds = Double(now - st.mtimeNanos) / 1e9
        if ageSeconds > staleSeconds { return st.inode }
        if let info = holderInfo(), info["host"] as? String == ProcessInfo.processInfo.hostName,
            let pid = info["pid"] as? Int
        {
            // Our own pid in a lock we do not hold: an earlier process with this pid died
            // holding it. Why: with pids reused (a fresh container per cron run starts at
            // the same pid) such a lock counted as live and blocked pushes for
            // remote.lockStaleSeconds.
            // (Another thread of this process may hold it: the registry says.)
            if pid == Int(getpid()) { return HeldHere.shared.contains(lockPath) ? nil : st.inode }
            if kill(pid_t(pid), 0) != 0, errno == ESRCH { return st.inode }
        }
        return nil
    }

    /// Whether we still hold the lock (nobody judged it stale and broke it).
    var stillHeld: Bool {
        held && (try? files.readFile(lockPath)) == ownContent
    }

    /// Touches the lock so a long push is not taken for an abandoned one.
    func refresh() {
        guard held else { return }
        files.touch(lockPath)
    }
}

/// The remote locks this process holds right now, so that a lock naming this pid can be
/// told apart: held by another thread here (live), or left by an earlier process that had
/// the same pid (stale).
private final class HeldHere: @unchecked Sendable {
    static let shared = HeldHere()
    private let mutex = NSLock()
    private var paths: [String: Int] = [:]

    func insert(_ path: String) {
        mutex.lock()
        paths[path, default: 0] += 1
        mutex.unlock()
    }

    func remove(_ path: String) {
        mutex.lock()
        if let n = paths[path] { paths[path] = n > 1 ? n - 1 : nil }
        mutex.unlock()
    }

    func contains(_ path: String) -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return paths[path] != nil
    }
}
