import Foundation

extension GitRemote {
    /// How old a ref lock in a repository on this file system must be before it counts as
    /// left by a killed process. Why so short: git holds such a lock only while it writes
    /// one ref (it gives up after `core.filesRefLockTimeout`, 100 ms by default), so a lock
    /// this old belongs to nobody alive.
    static let staleRefLockSeconds: Double = 10

    /// A push refused because the branch's ref is locked in the remote repository.
    ///
    /// For a repository reached by path or `file://`, libgit2 updates the ref in this
    /// process, so a push killed at that moment leaves `refs/heads/<branch>.lock` behind,
    /// and git never removes it: every later push was refused, read as "the remote kept
    /// changing" and retried in vain, and cron (exit 75) never said why (found by the
    /// random-kill tests). Such a lock is waited for while it is young and removed once it
    /// is stale; then the caller retries. Over a network the server cleans up its own
    /// locks, so only the refusal is reported there.
    func handleLockedRef(_ rejection: String) throws -> Never {
        guard url.scheme == .file, let lockPath = remoteRefLock() else {
            throw RemoteError.locked(
                url: displayURL,
                holder:
                    "the server refused to update the branch: \(rejection); if no push is running, a crashed one left refs/heads/\(branch).lock in the repository there"
            )
        }
        // The lock's age by the clock that dated it (the file system's: an NFS server's),
        // not this machine's, which may be hours off: ahead, it broke live locks; behind,
        // it never broke a dead one.
        let skew = FileSystem.clockSkew(of: remoteGitDirectory())
        let deadline = FileSystem.currentTimeNanos + Int64(Self.staleRefLockSeconds * 2 * 1e9)
        while FileSystem.currentTimeNanos < deadline {
            guard let status = try? FileSystem.linkStatus(lockPath) else { throw RemoteError.moved }  // released: retry
            let age = Double(FileSystem.currentTimeNanos + skew - status.mtimeNanos) / 1e9
            if age > Self.staleRefLockSeconds {
                // Renamed first, so that of two replicas breaking it only one succeeds.
                let aside = lockPath + ".stale-\(UInt32.random(in: 0 ... .max))"
                if rename(lockPath, aside) == 0 { unlink(aside) }
                throw RemoteError.moved
            }
            usleep(200_000)
        }
        throw RemoteError.locked(url: displayURL, holder: "\(lockPath) exists; if no push is running, delete it")
    }

    /// The lock file of the branch's ref in the remote repository, if it exists (bare, or
    /// the `.git` folder of a repository with a working tree).
    private func remoteRefLock() -> String? {
        let gitDir = remoteGitDirectory()
        for candidate in [gitDir + "/refs/heads/" + branch + ".lock", gitDir + "/packed-refs.lock"]
        where FileSystem.exists(candidate) {
            return candidate
        }
        return nil
    }

    /// The remote repository's git folder (bare, or the `.git` of one with a working tree).
    private func remoteGitDirectory() -> String {
        let root = FileSystem.absolute(url.path)
        return FileSystem.isDirectory(root + "/.git") ? root + "/.git" : root
    }

    /// Whether the server refused the branch's update itself, not for being behind.
    /// `git receive-pack` says only "failed to update ref" for a ref it could not lock (a
    /// push in progress there, or a lock file a crashed one left); read as "the remote
    /// moved", five quick retries ended in "the remote kept changing", which was not so
    /// (found by the model check on a git daemon).
    static func isLockRejection(_ message: String) -> Bool {
        let lower = message.lowercased()
        return (lower.contains("lock") || lower.contains("failed to update ref")) && !lower.contains("non-fast-forward")
            && !lower.contains("fetch first")
    }
}
