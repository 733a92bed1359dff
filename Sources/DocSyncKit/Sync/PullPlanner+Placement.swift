extension PullPlanner {
    /// Conflict records other replicas shared: new ones, and settlements of records this
    /// replica holds open. The replica whose version lost hears of it (a conflict of its
    /// own, exit 3); the others just list the record.
    func receiveSharedConflicts(_ shared: [SharedConflict], into plan: inout PullPlan) {
        plan.incoming = shared.filter { shared in
            guard let known = knownConflict(shared.record.refId, shared.record.storeName) else { return true }
            return known.isOpen && !shared.record.isOpen
        }
        plan.conflictSummaries += plan.incoming.compactMap { Self.lossHeard($0.record, by: replicaId) }
    }

    /// Where an incoming version goes: its own path when that is free (`isFree`: not
    /// claimed by this pull, and left by its document or never anyone's), else a sibling
    /// path tagged with its refId, and a notice saying so. Never over another document.
    static func placed(_ version: DocVersion, isFree: (String) -> Bool) -> (
        version: DocVersion, notice: DocumentNotice?
    ) {
        guard !isFree(version.path) else { return (version, nil) }
        var moved = version
        moved.path = DocumentPath.sibling(of: version.path, tag: String(version.refId.prefix(8)), isFree: isFree)
        return (moved, .placedBeside(path: version.path, placedAt: moved.path))
    }
}

extension PullPlanner.PendingVersion {
    /// Each document's pending actions, found by refId rather than by scanning all of them
    /// per document (a pull of many changes over many pending ones was quadratic).
    static func byDocument(_ pending: [JournalEntry]) -> [String: [PullPlanner.PendingVersion]] {
        var out: [String: [PullPlanner.PendingVersion]] = [:]
        for action in pending {
            guard let refId = action.refId else { continue }
            out[refId, default: []].append(
                .init(seq: action.seq, version: action.resultingVersion, madeFrom: action.madeFrom ?? []))
        }
        return out
    }
}
