import Foundation

extension GitRemote {
    /// `docsync gc`: the cache repository in one pack (see `repackReachable`), keeping
    /// the commit `cursor` names even if the branch no longer reaches it.
    public func compactLocalCache(keeping cursor: String?, dryRun: Bool) throws -> GitCacheRepack? {
        try repackCache(keeping: cursor, dryRun: dryRun)
    }

    public func repackCache(keeping cursor: String?, dryRun: Bool) throws -> GitCacheRepack {
        let commit = (try? commitOf(cursor: cursor)) ?? nil
        return try repo.repackReachable(keeping: commit.map { [$0] } ?? [], dryRun: dryRun)
    }

    /// How far back gc reads the branch's first-parent history to learn the replicas
    /// and when each tombstone appeared. Replicas whose last push is older are unknown to
    /// it; tombstones older than that go by age only.
    static let gcHistoryLimit = 20_000

    /// Purges tombstones with one ordinary commit that deletes their files (message
    /// `docsync: gc, N tombstones purged from NAME`), pushed like any push: a rejected
    /// push fetches and tries again, up to 5 times.
    ///
    /// The replicas a git remote knows are those that pushed (the `Replica:` line of
    /// docsync's commit messages). A replica has seen a tombstone when it pushed a commit
    /// on top of the one that added it (it had fetched it), or made that commit. A
    /// replica that only pulls is not known; that is safe, because a git pull diffs its
    /// last synced commit against the new one and sees the document's file go whether a
    /// tombstone is still there or not. A replica retired by `docsync replicas forget` (a
    /// `Retired-Replica:` commit) is not counted until it commits again (`scanHistory`).
    public func purgeTombstones(_ rule: TombstoneRule, dryRun: Bool, replica: ReplicaInfo) throws -> TombstonePurge {
        var attempts = 0
        while true {
            attempts += 1
            guard let head = try fetchHead() else { return TombstonePurge() }
            let (report, paths) = try plan(head: head, rule: rule)
            if dryRun || paths.isEmpty { return report }
            let count = paths.count
            var lines = report.purged.map {
                "purge \($0.path ?? $0.refId) (\($0.refId), deleted \($0.changesetId), \($0.reason))"
            }
            lines.sort()
            // Who deleted each document, kept in the history: a replica that meets the
            // deletion later (its tombstone gone) can still tell the deleter if an edit wins.
            let deleters = report.purged.map { "\(Self.purgedByTrailer) \($0.deletedBy) \($0.refId)" }.sorted()
            let message =
                "docsync: gc, \(count) tombstone\(count == 1 ? "" : "s") purged from \(replica.name)\n\n"
                + lines.joined(separator: "\n")
                + "\n\n" + Self.trailers(of: replica) + deleters.map { $0 + "\n" }.joined()
            do {
                let commit = try publish(
                    baseTree: try repo.commit(head).tree, changes: paths.map { ($0, nil) }, parent: head,
                    message: message, replica: replica)
                try CrashPoint.hit("gc.after-remote-commit")
                try repo.setReference(trackingRef, to: commit, message: "docsync gc")
                var done = report
                done.commit = commit
                return done
            } catch RemoteError.moved {
                guard attempts < 5 else {
                    throw Workspace.Failure.contended(
                        "the remote kept changing during 5 gc attempts (other replicas are pushing); try again shortly")
                }
            }
        }
    }

    /// Which tombstones at `head` may go, and their files.
    private func plan(head: GitOID, rule: TombstoneRule) throws -> (TombstonePurge, [String]) {
        let tombstones = try repo.files(inTree: try repo.commit(head).tree).filter {
            $0.path.hasPrefix(Self.tombstoneFolder)
        }
        var report = TombstonePurge()
        guard !tombstones.isEmpty else { return (report, []) }
        let blobAtHead = Dictionary(tombstones.map { ($0.path, $0.blob) }, uniquingKeysWith: { a, _ in a })
        let scan = try scanHistory(head: head, tombstones: blobAtHead)
        let latestPush = scan.latestPush
        let introduced = scan.introduced
        let selections = scan.selection
        report.replicas = latestPush.keys.sorted()
        var paths: [String] = []
        for file in tombstones.sorted(by: { $0.path < $1.path }) {
            guard let bytes = try? smallBlob(file.blob),
                let entry = try? JSONDecoder().decode(RemoteEntry.self, from: Data(bytes))
            else {
                continue
            }
            // Not seen: the replica's latest commit is older than the one that wrote it.
            // A sparse replica that does not select the deleted document's path is not waited for.
            let unseenBy =
                introduced[file.path].map { at in
                    latestPush.filter { $0.value > at && SparseSelection.mayHold(selections[$0.key], entry.path) }
                        .map(\.key).sorted()
                } ?? []
            let seenByAll = introduced[file.path] != nil && !latestPush.isEmpty && unseenBy.isEmpty
            let reason = rule.reason(deletedAt: entry.time, seenByAll: seenByAll)
            if reason != nil { paths.append(file.path) }
            report.record(entry, purgedBecause: reason, unseenBy: unseenBy)
        }
        return (report, paths)
    }

    /// The replica named by the `Replica:` line docsync writes at the end of its commits.
    static func replicaId(inMessage message: String) -> String? {
        trailer("Replica:", in: message)
    }

    /// The last `Key: value` line of a commit message with this key, trimmed; nil if none
    /// or empty.
    static func trailer(_ key: String, in message: String) -> String? {
        for line in message.split(separator: "\n").reversed() where line.hasPrefix(key + " ") {
            let value = line.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        return nil
    }
}

extension GitRemote {
    /// The purge commit's trailer naming who deleted a purged document:
    /// `Purged-Deletion-By: <replica> <refId>`.
    static let purgedByTrailer = "Purged-Deletion-By:"

    /// The deletions of `refIds` whose tombstones the purge commits between `from`
    /// (exclusive) and `head` removed (first parent, at most `limit` commits back): each as
    /// its tombstone said (the deleted changesetId, the deleted version's hash, who, when),
    /// read from the purge commit's parent; where that cannot be read, only who deleted it
    /// (the trailer). Only read when a pull meets a document whose file went without a
    /// tombstone. Why the tombstone: a replica whose base is an older version must not
    /// take that version for the deleted one.
    func purgedDeletions(of refIds: Set<String>, from: GitOID?, head: GitOID, limit: Int = 10_000) -> [String:
        RemoteEntry]
    {
        var deletions: [String: RemoteEntry] = [:]
        var current: GitOID? = head
        var steps = 0
        while let id = current, id != from, steps < limit, deletions.count < refIds.count {
            steps += 1
            guard let info = try? repo.commit(id) else { break }
            for line in info.message.split(separator: "\n") where line.hasPrefix(Self.purgedByTrailer) {
                let rest = line.dropFirst(Self.purgedByTrailer.count).drop { $0 == " " }
                guard let space = rest.firstIndex(of: " ") else { continue }
                let refId = String(rest[rest.index(after: space)...])
                guard refIds.contains(refId), deletions[refId] == nil else { continue }
                let deleter = String(rest[..<space])
                let recorded = info.parents.first.flatMap { parent in
                    (try? repo.commit(parent)).flatMap {
                        try? repo.blobId(atPath: Self.tombstoneFolder + refId + ".json", inTree: $0.tree)
                    }
                }.flatMap { self.tombstone($0) }
                if var entry = recorded, entry.refId == refId, entry.deleted {
                    entry.replica = deleter
                    deletions[refId] = entry
                } else {
                    deletions[refId] = RemoteEntry(
                        refId: refId, changesetId: "", hash: nil, path: nil, deleted: true, replica: deleter,
                        time: info.time * 1000)
                }
            }
            current = info.parents.first
        }
        return deletions
    }
}
