import DocSyncJSON

/// The versions a document's outcome lost: the version that lost (content changed on
/// both sides), the deletion an edit beat, the name that lost a rename against rename.
/// Each is kept with its conflict record.
extension DocumentPlanner {
    /// - Parameter winnerBytes: the kept version's bytes, needed only when the fields the
    ///   two versions differ in are not known from the merge.
    static func losses(
        of settled: SettledContent, plan: DocumentPlan, entry: RemoteEntry, content: DocumentContent,
        winnerBytes: [UInt8]?, replicaId: String, time: Int64
    ) -> [DocumentLoss] {
        var losses: [DocumentLoss] = []
        if let loss = lostVersion(
            settled, refId: entry.refId, content: content, winnerBytes: winnerBytes, replicaId: replicaId, time: time)
        {
            losses.append(loss)
        }
        if let loss = lostDeletion(
            settled.decision, plan: plan, entry: entry, content: content, replicaId: replicaId, time: time)
        {
            losses.append(loss)
        }
        if let loss = lostRename(
            settled.decision, plan: plan, entry: entry, content: content, replicaId: replicaId, time: time)
        {
            losses.append(loss)
        }
        return losses
    }

    /// Content changed differently on both sides: the version that lost.
    static func lostVersion(
        _ settled: SettledContent, refId: String, content: DocumentContent, winnerBytes: [UInt8]?,
        replicaId: String, time: Int64
    ) -> DocumentLoss? {
        let decision = settled.decision
        guard let loser = decision.loser else { return nil }
        let winner = decision.result?.changesetId ?? ""
        let loserBytes = loser.side == .remote ? content.remote : content.local
        var fields = settled.settled?.fields ?? []
        if fields.isEmpty, let loserBytes, let winnerBytes,
            let a = try? JSONValueParser.parse(loserBytes), let b = try? JSONValueParser.parse(winnerBytes)
        {
            fields = FieldPaths.differing(a, b)
        }
        var record = ConflictStore.Record(
            refId: refId, changesetId: loser.version.changesetId, path: loser.version.path, side: loser.side,
            winner: winner, time: time, kind: .version(policy: settled.settled?.policy ?? .lww, fields: fields),
            replica: replicaId, lostBy: ChangesetID(loser.version.changesetId)?.replica)
        record.keptBy = ChangesetID(winner)?.replica
        let kept: KeptVersion =
            settled.settled?.merged == true ? .merged : decision.contentFrom == .local ? .local : .remote
        return loss(
            record, bytes: loserBytes, path: decision.result?.path ?? loser.version.path, kept: kept,
            stored: .version(of: loser.side))
    }

    /// An edit beat a deletion: the deleted version. The version that was deleted: this
    /// tree's base, or, when the deleting replica had a later one, that version (never
    /// the base under the deleted one's name). A deletion held aside while the file was
    /// invalid carries only its changesetId.
    static func lostDeletion(
        _ decision: Reconciler.Decision, plan: DocumentPlan, entry: RemoteEntry, content: DocumentContent,
        replicaId: String, time: Int64
    ) -> DocumentLoss? {
        guard let side = decision.lostDeletion, let kept = decision.result else { return nil }
        let base = plan.start.base
        let deletedId = side == .remote ? entry.changesetId : (base?.changesetId ?? kept.changesetId)
        var record = ConflictStore.Record(
            refId: entry.refId, changesetId: deletedId, path: base?.path ?? kept.path, side: side,
            winner: kept.changesetId, time: time, kind: .deletion, replica: replicaId,
            lostBy: side == .local ? replicaId : entry.replica, reason: "an edit beat a deletion")
        // Who made the change that beat the deletion (an edit, or a rename that kept the
        // version's changesetId), not who made the version.
        record.keptBy = side == .local ? entry.replica : replicaId
        let deletedOther = side == .remote && plan.deletesAnotherVersion
        let deletedBytes = deletedOther ? content.deleted : content.base
        if deletedBytes == nil && deletedOther {
            // Never another version under the deleted one's name (it was the base).
            record.reason =
                "an edit beat a deletion (the deleted version is no longer on the remote, so it is not kept)"
        }
        return loss(record, bytes: deletedBytes, path: kept.path, kept: .other(than: side), stored: .deletion(of: side))
    }

    /// Renamed on both sides: the name that lost, kept with whichever side's content
    /// carried it.
    static func lostRename(
        _ decision: Reconciler.Decision, plan: DocumentPlan, entry: RemoteEntry, content: DocumentContent,
        replicaId: String, time: Int64
    ) -> DocumentLoss? {
        guard let lost = decision.renameLoser, let kept = decision.result else { return nil }
        let bytes =
            lost.side == .local || lost.version.hash == plan.start.local?.hash ? content.local : content.remote
        var record = ConflictStore.Record(
            refId: entry.refId, changesetId: lost.version.changesetId, path: lost.version.path, side: lost.side,
            winner: kept.changesetId, time: time, kind: .rename, replica: replicaId,
            lostBy: lost.side == .local ? replicaId : entry.replica, reason: "renamed on both sides")
        // The renames' makers, not the version's (a rename keeps the changesetId).
        record.keptBy = lost.side == .local ? entry.replica : replicaId
        return loss(
            record, bytes: bytes, path: kept.path, kept: .other(than: lost.side), stored: .rename(of: lost.side))
    }

    /// A record with its bytes, what the user is told of it (the document now at
    /// `path`), and the journal entry that notes it.
    private static func loss(
        _ record: ConflictStore.Record, bytes: [UInt8]?, path: String, kept: KeptVersion, stored: StoredVersion
    ) -> DocumentLoss {
        let summary = ConflictSummary(
            refId: record.refId, path: path, kept: kept, keptChangesetId: record.winner, stored: stored,
            storedChangesetId: record.changesetId, file: record.file, fields: record.fields)
        let entry = JournalEntry(
            .conflict(
                refId: record.refId, changesetId: record.changesetId, path: record.path, side: record.side,
                deleted: record.isDeletion))
        return DocumentLoss(record: record, bytes: bytes, summary: summary, entry: entry)
    }
}
