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
        // Removals first: a document may take over a path another one leaves in the same
        // push (deleted here, or moved away).
        var removals: [GitRepository.TreeChange] = []
        var changes: [GitRepository.TreeChange] = []
        var lines: [String] = []
        var counts: [String: Int] = [:]
        let time = FileSystem.currentTimeNanos / 1_000_000
        for write in writes {
            let tombstonePath = Self.tombstoneFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            let movedPath = Self.movedFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            if let previous = write.previous, previous.path != write.new?.path { removals.append((previous.path, nil)) }
            if let movedAt = write.movedAt, let new = write.new {
                let bytes =
                    Array(
                        try DirectoryRemote.json(
                            MovedRecord(
                                refId: write.refId, path: new.path, movedAt: movedAt,
                                replica: replica.replicaId)
                        ).utf8) + [10]
                changes.append((movedPath, { bytes }))
            } else if write.new == nil {
                removals.append((movedPath, nil))
            }
            if let new = write.new {
                guard DocumentPath.isSafe(new.path) else {
                    throw RemoteError.unsafe(url: displayURL, reason: "path \(new.path)")
                }
                changes.append((new.path, { try write.content() ?? [] }))  // never nil: `new` is set
                removals.append((tombstonePath, nil))
                let kind =
                    write.previous == nil
                    ? "create"
                    : (write.previous?.path != new.path
                        ? (write.previous?.hash == new.hash ? "rename" : "move+update") : "update")
                counts[kind, default: 0] += 1
                lines.append(
                    "\(kind) \(new.path)"
                        + (write.previous.map { $0.path != new.path ? " (from \($0.path))" : "" } ?? ""))
            } else {
                let tombstone = RemoteEntry(
                    refId: write.refId, changesetId: write.deletedChangesetId ?? write.previous?.changesetId ?? "",
                    hash: write.previous?.hash, path: write.previous?.path, deleted: true, replica: replica.replicaId,
                    time: time)
                let bytes = Array(try DirectoryRemote.json(tombstone).utf8) + [10]
                changes.append((tombstonePath, { bytes }))
                counts["delete", default: 0] += 1
                lines.append("delete \(write.previous?.path ?? write.refId)")
            }
        }
        for shared in conflicts {
            let paths = Self.conflictPaths(shared.record)
            let meta = Array(try DirectoryRemote.json(shared.record).utf8) + [10]
            changes.append((paths.meta, { meta }))
            if let bytes = shared.bytes { changes.append((paths.bytes, { bytes })) }
            let what = shared.record.isOpen ? "conflict" : "resolve"
            counts[what, default: 0] += 1
            lines.append("\(what) \(shared.record.path) (\(shared.record.changesetId))")
        }
        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let message =
            "docsync: \(summary) from \(replica.name)\n\n" + lines.joined(separator: "\n") + "\n\n"
            + Self.trailers(of: replica)
        let commit = try publish(
            baseTree: baseTree, changes: removals + changes, parent: parent, message: message, replica: replica)
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
