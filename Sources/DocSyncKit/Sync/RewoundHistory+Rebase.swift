extension RewoundHistory {
    /// The journal entries that put a tree's base back on the last position the remote's
    /// history still shares with it, keeping everything the tree holds:
    ///
    /// | base (what the tree synced) | common (what the remote still has) | entries |
    /// |---|---|---|
    /// | same version | same version | none |
    /// | version b | version c, or none | base := c; a local action that makes it b again |
    /// | none (deleted, synced) | version c | base := c; a local delete of c |
    ///
    /// A document with local actions still pending keeps them: they already lead from
    /// what the tree synced to what it holds, and whatever base they now start from, a
    /// push sends them and a pull merges them three-way like any local edit. So nothing
    /// the remote lost is read as deleted there, and the push that follows sends it again.
    ///
    /// Every local action written here names the version the tree had synced as one its
    /// content is made from (`madeFrom`), and so does the push that sends it: where two
    /// chains meet again, the merge is measured from what that content descends from.
    static func entries(base: [String: DocVersion], pending: [JournalEntry], common: [String: DocVersion])
        -> [JournalEntry]
    {
        let pendingRefIds = Set(pending.compactMap(\.refId))
        var tracked = base
        for action in pending { SyncState.applyLocal(action, to: &tracked) }
        var entries: [JournalEntry] = []
        for refId in Set(base.keys).union(common.keys).sorted() {
            let synced = base[refId], shared = common[refId]
            if synced == shared { continue }
            let state: JournalEntry.RemoteState =
                shared.map { .version($0) }
                ?? .deleted(changesetId: synced?.changesetId ?? "", path: synced?.path)
            entries.append(JournalEntry(.seen(refId: refId, state, reason: .historyRewritten)))
            if pendingRefIds.contains(refId) {
                // The pending actions stay; one more, of what they lead to, says what it is made from.
                if let synced, let current = tracked[refId], current.changesetId != synced.changesetId {
                    var carried = JournalEntry(
                        .local(shared == nil ? .create : .update, version: current, fromPath: nil))
                    carried.madeFrom = [synced.changesetId]
                    entries.append(carried)
                }
                continue
            }
            if let synced {
                let moved = shared.map { $0.path != synced.path } ?? false
                let kind: JournalEntry.LocalAction =
                    shared == nil ? .create : (moved && shared?.hash == synced.hash ? .rename : .update)
                var resent = JournalEntry(.local(kind, version: synced, fromPath: moved ? shared?.path : nil))
                resent.madeFrom = [synced.changesetId]
                entries.append(resent)
            } else if let shared {
                entries.append(JournalEntry(.local(.delete, version: shared, fromPath: nil)))
            }
        }
        return entries
    }

    /// How many document versions `entries` send again.
    static func resent(_ entries: [JournalEntry]) -> Int {
        entries.count { entry in
            // Not the action that only says what pending actions' content is made from.
            guard case let .local(_, version, _) = entry.event else { return false }
            return entry.madeFrom.map { $0.contains(version.changesetId) } ?? true
        }
    }
}
