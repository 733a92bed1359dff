extension PullPlanner {
    /// The journal entries that follow a document's outcome, and what the pull did to
    /// its file. A pure function of the outcome (see `bookkeeping`).
    struct Bookkeeping: Equatable {
        var entries: [JournalEntry] = []
        var pulled: ChangeSummary?
    }

    /// After a document is decided (`result`: the version the tree ends with, nil for
    /// deleted), in this order:
    /// - its pending actions describe the old local state: finished (superseded) when
    ///   the outcome is what the remote has or differs from what they describe;
    /// - the remote's version is the new base (`seen`);
    /// - the file operation, when the outcome is not the file's version;
    /// - a local action, when the outcome differs from what the remote has (a path kept
    ///   apart, a local edit that won, a merge): pushed next. It names what it was made
    ///   from: the replaced actions' `madeFrom` (or, decided again from the user's version,
    ///   only what that was made from, not what this merge dropped: named as a parent, it
    ///   would read as overwritten on purpose), then the pushes of this tree that landed
    ///   unjournaled.
    static func bookkeeping(
        refId: String, local: DocVersion?, result: DocVersion?, published: DocVersion?,
        remoteChangesetId: String, remotePath: String?, pending: [PendingVersion],
        remerged: Bool, userMadeFrom: [String], landedPending: Set<String>
    ) -> Bookkeeping {
        var out = Bookkeeping()
        let pendingSeqs = pending.map(\.seq)
        if !pendingSeqs.isEmpty && (result != local || result == published) {
            out.entries.append(JournalEntry(.done(refId: refId, seqs: pendingSeqs, reason: .superseded)))
        }
        out.entries.append(
            JournalEntry(
                .seen(
                    refId: refId,
                    published.map { .version($0) } ?? .deleted(changesetId: remoteChangesetId, path: remotePath),
                    reason: nil)))
        if result != local {
            out.entries.append(
                JournalEntry(
                    .apply(
                        .init(
                            refId: refId, changesetId: result?.changesetId ?? remoteChangesetId, result: result,
                            fromPath: local?.path, fromHash: local?.hash))))
            out.pulled = ChangeSummary(from: local, to: result, refId: refId, changesetId: result?.changesetId)
        }
        if let result, result != published, result != local || pendingSeqs.isEmpty {
            let kind: JournalEntry.LocalAction =
                published == nil ? .create : (result.hash == published?.hash ? .rename : .update)
            var action = JournalEntry(
                .local(kind, version: result, fromPath: published?.path != result.path ? published?.path : nil))
            let from = remerged ? userMadeFrom : pending.flatMap(\.madeFrom)
            var carried: [String] = []
            for id in from + landedPending.sorted() where !carried.contains(id) { carried.append(id) }
            if !carried.isEmpty { action.madeFrom = carried }
            out.entries.append(action)
        }
        return out
    }
}
