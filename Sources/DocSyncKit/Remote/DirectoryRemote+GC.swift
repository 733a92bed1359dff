import Foundation

extension DirectoryRemote {
    /// Purges tombstones by compacting the feed: the new feed holds the latest line of
    /// every document except the purged tombstones, under a new name (`feed-<epoch>`),
    /// and is committed like a push, by replacing `generation` under the remote lock.
    /// A cursor from before that generation cannot be continued in the new feed, so such
    /// a tree reads it whole as a snapshot (see `changes(since:)`).
    ///
    /// Order, each step safe to die after: write `feed-<epoch>` (invisible until the
    /// commit); replace `generation` (the commit point); delete the purged tombstone files
    /// (a leftover is removed by the next gc: no committed deletion names it); delete
    /// feeds older than the previous one (a reader that read the old `generation` a
    /// moment ago still finds its feed).
    public func purgeTombstones(_ rule: TombstoneRule, dryRun: Bool, replica: ReplicaInfo) throws -> TombstonePurge {
        let id = try identity()
        let lock = RemoteLock(folder: meta, replica: replica.replicaId, files: files)
        if !dryRun {
            if let holder = try lock.acquire(waitSeconds: lockWaitSeconds, staleSeconds: lockStaleSeconds) {
                throw RemoteError.locked(url: displayURL, holder: holder)
            }
        }
        defer { if !dryRun { lock.release() } }
        let now = try position()
        // Lines and entries correspond one to one: without `refuse`, any bad line throws.
        let lines = try committedFeedLines(from: 0, to: now.length, epoch: now.epoch)
        let entries = try entries(of: lines, epoch: now.epoch)
        let (latest, tombstones) = Self.latestLines(of: entries)
        let tombstoned = Set(tombstones.map { entries[$0].refId })
        var report = TombstonePurge()
        report.feedBytesBefore = now.length
        let records = replicaRecords()
        report.replicas = records.map(\.replicaId).sorted()
        let purged = report.judge(
            tombstones.map { entries[$0].entry }, by: rule, replicasKnown: !records.isEmpty
        ) { entry in
            // Seen: the replica's last recorded cursor is in this epoch and past the line.
            let end = lines[latest[entry.refId]!].endOffset
            return records.filter { record in
                guard SparseSelection.mayHold(record.selection, entry.path) else { return false }
                guard let cursor = Cursor(record.seen), cursor.remoteId == id else { return true }
                return cursor.position.generation < now.epoch || cursor.position.length < end
            }.map(\.replicaId)
        }
        if dryRun { return report }
        if purged.isEmpty {
            removeUncommittedTombstones(keeping: tombstoned)
            report.feedBytesAfter = now.length
            return report
        }
        let bytes = try Self.compactedFeed(lines: lines, entries: entries, latest: latest, purged: purged)
        let next = try commitCompactedFeed(bytes, replacing: now, lock: lock)
        report.feedBytesAfter = bytes.count
        report.cursorBefore = Cursor(remoteId: id, position: now).text
        report.cursorAfter = Cursor(remoteId: id, position: next).text
        removeUncommittedTombstones(keeping: tombstoned.subtracting(purged))
        removeFeeds(olderThan: now.epoch)
        return report
    }

    /// The index of each document's latest line, and those of the latest lines that are
    /// deletions (not purged deletions' lines): the tombstones there are now, in feed order.
    static func latestLines(of entries: [FeedLine]) -> (latest: [String: Int], tombstones: [Int]) {
        var latest: [String: Int] = [:]
        for (i, e) in entries.enumerated() { latest[e.refId] = i }
        let tombstones = entries.indices.filter {
            latest[entries[$0].refId] == $0 && entries[$0].deleted && entries[$0].purgedDeletion != true
        }
        return (latest, tombstones)
    }

    /// Writes the compacted feed under a new epoch and commits it by replacing
    /// `generation`, if the lock is still ours and nobody committed since `now`.
    private func commitCompactedFeed(_ bytes: [UInt8], replacing now: Position, lock: RemoteLock) throws -> Position {
        let next = Position(generation: now.generation + 1, length: bytes.count, epoch: now.generation + 1)
        try files.writeAtomically(feedPath(epoch: next.epoch), bytes)
        try CrashPoint.hit("gc.after-remote-feed")
        guard lock.stillHeld else {
            throw RemoteError.locked(url: displayURL, holder: "our lock was broken as stale during gc")
        }
        guard try position() == now else { throw RemoteError.moved }
        try files.writeAtomically(meta + "/generation", Array(next.text.utf8))
        try CrashPoint.hit("gc.after-remote-commit")
        return next
    }

    /// The replica records in `replicas/` (unreadable ones are skipped: a replica whose
    /// record cannot be read is one gc knows nothing about).
    public func replicaNamesAtHand() -> [String: String] {
        var names: [String: String] = [:]
        for record in replicaRecords() where !record.name.isEmpty { names[record.replicaId] = record.name }
        return names
    }

    func replicaRecords() -> [ReplicaRecord] {
        guard let names = try? files.listDirectory(meta + "/replicas") else { return [] }
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { name in
            (try? files.readFile(meta + "/replicas/" + name)).flatMap {
                try? JSONDecoder().decode(ReplicaRecord.self, from: Data($0))
            }
        }
    }

    /// Deletes tombstone files that no committed deletion names: purged ones, and those a
    /// push wrote before dying short of its commit. Only under the remote lock.
    private func removeUncommittedTombstones(keeping refIds: Set<String>) {
        let folder = meta + "/tombstones"
        let expected = Set(refIds.map { DocumentPath.fileName(forRefId: $0) + ".json" })
        guard let names = try? files.listDirectory(folder) else { return }
        for name in names where !expected.contains(name) { try? files.removeFile(folder + "/" + name) }
    }

    /// Deletes the feeds of epochs before `previous` (and leftover temporary files next to
    /// them). The feed of `previous` stays until the next compaction, for readers that
    /// read `generation` just before this one committed.
    private func removeFeeds(olderThan previous: Int) {
        guard let names = try? files.listDirectory(meta) else { return }
        for name in names {
            let epoch: Int? = name == "feed" ? 0 : name.hasPrefix("feed-") ? Int(name.dropFirst(5)) : nil
            if let epoch, epoch < previous { try? files.removeFile(meta + "/" + name) }
        }
    }

    /// The feed after a purge: each document's latest line, but the purged deletions',
    /// which become a line saying who deleted what (and go once the document is back).
    static func compactedFeed(
        lines: [ChecksummedLines.Line], entries: [FeedLine], latest: [String: Int], purged: Set<String>
    ) throws -> [UInt8] {
        var compacted = ""
        for (i, entry) in entries.enumerated() where latest[entry.refId] == i && !purged.contains(entry.refId) {
            // A purged deletion's line goes once the document has come back.
            if entry.isPurgedLineOfReturned({ latest[$0] != nil }) { continue }
            compacted += ChecksummedLines.encode(lines[i].payload)
        }
        // Who deleted each purged document stays in the feed (see `FeedLine.purgedDeletion`).
        // Not `encodedLine()`: these lines have always been written with slashes escaped.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for (i, entry) in entries.enumerated() where latest[entry.refId] == i && purged.contains(entry.refId) {
            let line = FeedLine.purgedLine(of: entry)
            compacted += ChecksummedLines.encode(String(decoding: try encoder.encode(line), as: UTF8.self))
        }
        return Array(compacted.utf8)
    }
}
