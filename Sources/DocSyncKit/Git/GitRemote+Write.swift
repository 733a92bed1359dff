import CLibGit2
import DocSyncJSON
import Foundation

/// Writing to a git remote: one commit per push, published with a compare-and-swap.
extension GitRemote {
    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursor: String?, replica: ReplicaInfo
    ) throws -> String {
        let parent = try commitOf(cursor: cursor)
        let baseTree = try parent.map { try repo.commit($0).tree }
        try refuseOverwritingSkipped(writes, baseTree: baseTree)
        var plan = PushPlan()
        let time = FileSystem.currentTimeNanos / 1_000_000
        for write in writes { try plan.add(write, replica: replica.replicaId, time: time, url: displayURL) }
        for shared in conflicts { try plan.add(shared) }
        let message =
            "docsync: \(plan.summary) from \(replica.name)\n\n" + plan.lines.joined(separator: "\n") + "\n\n"
            + Self.trailers(of: replica)
        let commit = try publish(
            baseTree: baseTree, changes: plan.removals + plan.changes, parent: parent, message: message,
            replica: replica)
        // One commit lands all of them at once.
        for (written, write) in writes.enumerated() { writeProgress?(write, written + 1, writes.count) }
        try CrashPoint.hit("remote.after-feed")
        try repo.setReference(trackingRef, to: commit, message: "docsync push")
        return Self.cursorPrefix + commit
    }

    /// Makes one commit on `parent` and pushes it to the branch. A rejected
    /// (non-fast-forward) push throws `RemoteError.moved`: the caller fetches and retries.
    func publish(
        baseTree: GitOID?, changes: [GitRepository.TreeChange], parent: GitOID?, message: String,
        replica: ReplicaInfo
    ) throws -> GitOID {
        do {
            let commit = try repo.makeCommit(
                baseTree: baseTree, changes: changes, parent: parent, message: message,
                author: "docsync (\(replica.name))", email: "\(replica.replicaId)@docsync.invalid")
            if url.scheme == .file {
                // Compare-and-swap on the branch (see GitLocalPush): the local transport
                // would overwrite a branch another replica moved meanwhile.
                try GitLocalPush.push(
                    from: repo, commit: commit, toRepositoryAt: FileSystem.absolute(url.path), branch: branch,
                    expected: parent)
                return commit
            }
            let outgoing = "refs/docsync/outgoing"
            try repo.setReference(outgoing, to: commit, message: "docsync push")
            context.trustProblem = nil
            context.credentialAttempts = 0
            try TrustStore.with(context.settings, url: context.url, scratch: repo.path) {
                try GitTransport.push(repo, url: effectiveURL, localRef: outgoing, branch: branch, context: context)
            }
            return commit
        } catch let error as GitError {
            // Trying again will not help: exit 1 with the server's words, never 75.
            if error.code == GitError.refused { throw RemoteError.rejected(url: displayURL, reason: error.message) }
            if error.code == GitError.nonFastForward, Self.isLockRejection(error.message) {
                try handleLockedRef(error.message)
            }
            if error.code == GitError.nonFastForward || error.message.contains("rejected")
                || error.message.contains("non-fast-forward")
                || error.message.contains("fetch first")
            {
                throw RemoteError.moved
            }
            throw translate(error, during: "push")
        }
    }
}
