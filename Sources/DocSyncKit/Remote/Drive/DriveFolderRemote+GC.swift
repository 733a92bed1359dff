import Foundation

extension DriveFolderRemote {
    /// `docsync gc` on the drive layout: a tombstone goes once every known replica's
    /// record says it has read the commit that made it (its `seen` tip descends from
    /// it), or once it is older than the rule's age. Purging writes a **checkpoint**
    /// commit, the whole state without the purged tombstones plus one purged-deletion
    /// entry per tombstone (who deleted what, as format 1's compaction keeps): a tree
    /// whose cursor is below it reads it as a snapshot. It is a commit like any push, so
    /// it needs no lock and no file another replica writes; older commit files stay.
    public func purgeTombstones(_ rule: TombstoneRule, dryRun: Bool, replica: ReplicaInfo) throws -> TombstonePurge {
        let format = try format()
        let lock = try DriveLocalLock.acquire(
            layout.localLock, waitSeconds: lockWaitSeconds, url: displayURL, files: layout.files)
        defer { lock.release() }
        let files = DriveCommitFiles(layout: layout)
        let now = try scan(from: nil, format: format, files: files)
        var report = TombstonePurge()
        let records = infos()
        report.replicas = records.map(\.replicaId).sorted()
        guard let tip = now.tip else { return report }
        guard let state = DriveHistory.state(at: tip.commit, in: files) else {
            throw RemoteError.damaged(url: displayURL, reason: "a commit on the chain to \(tip.commit) cannot be read")
        }
        let madeIn = commitsMakingLatestEntries(from: tip.commit, files: files)
        let seenTips: [(String, String?, [String]?)] = records.map {
            (
                $0.replicaId, DriveCursor($0.seen).flatMap { $0.remoteId == format.remoteId ? $0.tip : nil },
                $0.selection
            )
        }
        let purged = report.judge(
            state.filter { $0.deleted && $0.isDocument }.map(\.entry), by: rule,
            replicasKnown: !records.isEmpty
        ) { entry in
            seenTips.filter { _, seen, selection in
                guard SparseSelection.mayHold(selection, entry.path) else { return false }
                guard let seen, let made = madeIn[entry.refId] else { return true }
                return !DriveHistory.descends(seen, from: made.commit, in: files)
            }.map(\.0)
        }
        let before = cursor(now, format: format)
        report.cursorBefore = before.text
        guard !purged.isEmpty, !dryRun else { return report }
        let entries = Self.checkpointEntries(of: state, purging: purged)
        let seq = try nextSeq(replica.replicaId, after: now.seen[replica.replicaId] ?? 0)
        var header = DriveCommit.Header(
            commit: DriveCommit.makeId(replica: replica.replicaId, seq: seq), replica: replica.replicaId, seq: seq,
            parent: tip.commit, height: tip.height + 1, time: FileSystem.currentTimeNanos / 1_000_000,
            entries: entries.count)
        header.checkpoint = true
        try writeCommit(DriveCommit(header: header, entries: entries))
        try CrashPoint.hit("gc.after-remote-commit")
        var after = DriveCursor(remoteId: format.remoteId, tip: header.commit, height: header.height, seen: now.seen)
        if (after.seen[replica.replicaId] ?? 0) == seq - 1 { after.seen[replica.replicaId] = seq }
        report.cursorAfter = after.text
        return report
    }

    /// Which commit made each key's latest entry, walking back from `tip` (the walk stops
    /// at a checkpoint, which holds the whole state).
    private func commitsMakingLatestEntries(from tip: String, files: DriveCommitFiles) -> [String: DriveCommit.Header] {
        var chain: [DriveCommit] = []
        var current: String? = tip
        while let id = current, let commit = files.commit(id) {
            chain.append(commit)
            if commit.header.checkpoint == true { break }
            current = commit.header.parent
        }
        var madeIn: [String: DriveCommit.Header] = [:]
        for commit in chain.reversed() {
            for entry in commit.entries { madeIn[entry.refId] = commit.header }
        }
        return madeIn
    }

    /// A checkpoint's entries: the whole `state` but the `purged` tombstones, each of which
    /// becomes a purged deletion's entry (who deleted what); one of those goes once its
    /// document has come back.
    static func checkpointEntries(of state: [FeedLine], purging purged: Set<String>) -> [FeedLine] {
        let live = Set(state.filter { !$0.deleted && $0.isDocument }.map(\.refId))
        var entries = state.filter { !purged.contains($0.refId) && !$0.isPurgedLineOfReturned(live.contains) }
        for entry in state where purged.contains(entry.refId) { entries.append(.purgedLine(of: entry)) }
        return entries
    }
}
