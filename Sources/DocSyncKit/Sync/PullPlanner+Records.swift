import DocSyncJSON

/// The conflict records a pull plan keeps and tells.
extension PullPlanner {
    /// What `replicaId` is told of an incoming record: its own version (or deletion) lost
    /// there (nil when the record is settled, its own, or about another replica's loss).
    static func lossHeard(_ record: ConflictStore.Record, by replicaId: String) -> ConflictSummary? {
        guard record.isOpen, record.replica != replicaId, record.lostBy == replicaId else { return nil }
        return ConflictSummary(
            refId: record.refId, path: record.path, kept: .remote, keptChangesetId: record.winner,
            stored: record.deleted == true ? .deletion : .version, storedChangesetId: record.changesetId,
            file: record.file, fields: record.fields, recordedBy: record.replica)
    }

    func keepFetched(_ hash: String, _ bytes: [UInt8], in plan: inout PullPlan) throws {
        if let storeFetched { try storeFetched(hash, bytes) } else { plan.objects[hash] = bytes }
    }

    func keep(_ record: ConflictStore.Record, bytes: [UInt8]?, in plan: inout PullPlan) {
        var record = record
        record.shared = false
        plan.conflicts.append(record)
        if let bytes { plan.conflictBytes[PullPlan.key(record)] = bytes }
    }

    /// The conflict records a document's outcome leaves: the version that lost (content
    /// changed on both sides), the deletion an edit beat, the name that lost a rename
    /// against rename. Each keeps the losing version's bytes with its record.
    func recordLosses(
        of decision: Reconciler.Decision, change: RemoteEntry, base: DocVersion?, mergeLocal: DocVersion?,
        settled: Settled?, remoteBytes: [UInt8]?,
        bytes: () throws -> [UInt8], time: Int64, in plan: inout PullPlan
    ) throws {
        try recordLoser(
            of: decision, refId: change.refId, settled: settled, remoteBytes: remoteBytes, time: time, in: &plan)
        try recordLostDeletion(of: decision, change: change, base: base, time: time, in: &plan)
        try recordLostRename(
            of: decision, change: change, mergeLocal: mergeLocal, remoteBytes: remoteBytes, bytes: bytes, time: time,
            in: &plan)
    }

    /// Content changed differently on both sides: the version that lost.
    private func recordLoser(
        of decision: Reconciler.Decision, refId: String,
        settled: Settled?, remoteBytes: [UInt8]?, time: Int64,
        in plan: inout PullPlan
    ) throws {
        let winner = decision.result?.changesetId ?? ""
        if let loser = decision.loser {
            let loserBytes = loser.side == .remote ? remoteBytes : try readObject(loser.version.hash)
            var fields = settled?.fields ?? []
            if fields.isEmpty, let loserBytes,
                let winnerBytes = try? decision.result.map({ try plan.objects[$0.hash] ?? readObject($0.hash) }),
                let a = try? JSONValueParser.parse(loserBytes), let b = try? JSONValueParser.parse(winnerBytes)
            {
                fields = FieldPaths.differing(a, b)
            }
            let record = ConflictStore.Record(
                refId: refId, changesetId: loser.version.changesetId, path: loser.version.path, side: loser.side,
                winner: winner, time: time, policy: settled?.policy ?? .lww, fields: fields, replica: replicaId,
                lostBy: ChangesetID(loser.version.changesetId)?.replica)
            keep(record, bytes: loserBytes, in: &plan)
            plan.conflictSummaries.append(
                ConflictSummary(
                    refId: refId, path: decision.result?.path ?? loser.version.path,
                    kept: settled?.merged == true ? .merged : decision.contentFrom == .local ? .local : .remote,
                    keptChangesetId: winner, stored: .version(of: loser.side),
                    storedChangesetId: loser.version.changesetId, file: record.file, fields: record.fields))
            plan.batch.append(
                JournalEntry(
                    .conflict(
                        refId: refId, changesetId: loser.version.changesetId, path: loser.version.path,
                        side: loser.side, deleted: false)))
        }
    }

    /// An edit beat a deletion: the deleted version.
    private func recordLostDeletion(
        of decision: Reconciler.Decision, change: RemoteEntry, base: DocVersion?, time: Int64,
        in plan: inout PullPlan
    ) throws {
        let refId = change.refId
        if let side = decision.lostDeletion, let kept = decision.result {
            // An edit beat a deletion: the deleted version is kept with the record.
            let deletedId = side == .remote ? change.changesetId : (base?.changesetId ?? kept.changesetId)
            var record = ConflictStore.Record(
                refId: refId, changesetId: deletedId, path: base?.path ?? kept.path, side: side,
                winner: kept.changesetId,
                time: time, deleted: true, replica: replicaId,
                lostBy: side == .local ? replicaId : change.replica, reason: "an edit beat a deletion")
            // The version that was deleted: this tree's base, or, when the deleting replica
            // had a later one, that version (never the base under the deleted one's name).
            // (A deletion held aside while the file was invalid carries only its changesetId.)
            let deletedOther =
                change.hash.map { $0 != base?.hash } ?? (change.changesetId != base?.changesetId)
            let deletedBytes =
                try side == .remote && deletedOther
                ? readDeleted(change) : base.map { try readObject($0.hash) }
            if deletedBytes == nil && side == .remote && deletedOther {
                // Never another version under the deleted one's name (it was the base).
                record.reason =
                    "an edit beat a deletion (the deleted version is no longer on the remote, so it is not kept)"
            }
            keep(record, bytes: deletedBytes, in: &plan)
            plan.conflictSummaries.append(
                ConflictSummary(
                    refId: refId, path: kept.path, kept: .other(than: side),
                    keptChangesetId: kept.changesetId, stored: .deletion(of: side),
                    storedChangesetId: deletedId, file: record.file))
            plan.batch.append(
                JournalEntry(
                    .conflict(refId: refId, changesetId: deletedId, path: record.path, side: side, deleted: true)))
        }

    }

    /// Renamed on both sides: the name that lost.
    private func recordLostRename(
        of decision: Reconciler.Decision, change: RemoteEntry, mergeLocal: DocVersion?, remoteBytes: [UInt8]?,
        bytes: () throws -> [UInt8], time: Int64, in plan: inout PullPlan
    ) throws {
        let refId = change.refId
        if let lost = decision.renameLoser, let kept = decision.result {
            // The name that lost is kept with the record; its content is whichever side's
            // version carried it.
            let bytes =
                try lost.side == .local || lost.version.hash == mergeLocal?.hash
                ? mergeLocal.map { try readObject($0.hash) } : (remoteBytes ?? bytes())
            let record = ConflictStore.Record(
                refId: refId, changesetId: lost.version.changesetId, path: lost.version.path, side: lost.side,
                winner: kept.changesetId, time: time, replica: replicaId,
                lostBy: lost.side == .local ? replicaId : change.replica,
                reason: "renamed on both sides", renameLost: true)
            keep(record, bytes: bytes, in: &plan)
            plan.conflictSummaries.append(
                ConflictSummary(
                    refId: refId, path: kept.path, kept: .other(than: lost.side),
                    keptChangesetId: kept.changesetId, stored: .rename(of: lost.side),
                    storedChangesetId: lost.version.changesetId, file: record.file))
            plan.batch.append(
                JournalEntry(
                    .conflict(
                        refId: refId, changesetId: lost.version.changesetId, path: lost.version.path,
                        side: lost.side, deleted: false)))
        }
    }
}
