import DocSyncJSON

/// The conflict records a pull plan keeps and tells.
extension PullPlanner {
    /// What `replicaId` is told of an incoming record: its own version (or deletion) lost
    /// there (nil when the record is settled, its own, or about another replica's loss).
    static func lossHeard(_ record: ConflictStore.Record, by replicaId: String) -> ConflictSummary? {
        guard record.isOpen, record.replica != replicaId, record.lostBy == replicaId else { return nil }
        return ConflictSummary(
            refId: record.refId, path: record.path, kept: .remote, keptChangesetId: record.winner,
            stored: record.isDeletion ? .deletion : .version, storedChangesetId: record.changesetId,
            file: record.file, fields: record.fields, recordedBy: record.replica)
    }

    func keepFetched(_ hash: String, _ bytes: [UInt8], in plan: inout PullPlan) throws {
        if let storeFetched { try storeFetched(hash, bytes) } else { plan.objects[hash] = bytes }
    }

    /// A version the outcome lost: its record (not shared yet) and bytes go with the plan.
    func keep(_ loss: DocumentLoss, in plan: inout PullPlan) {
        var record = loss.record
        record.shared = false
        plan.conflicts.append(record)
        if let bytes = loss.bytes { plan.conflictBytes[PullPlan.key(record)] = bytes }
        plan.conflictSummaries.append(loss.summary)
        plan.batch.append(loss.entry)
    }
}
