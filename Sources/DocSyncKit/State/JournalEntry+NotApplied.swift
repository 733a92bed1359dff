extension JournalEntry {
    /// A document whose pull could not be applied (the user saved, moved or deleted its
    /// file under the pull): the entries that put its recorded state back to what the
    /// user had. Its old base (so the file is compared with what it really came from);
    /// the pull's own local action (a merge to push) finished; and the user's pending
    /// actions that the pull had finished, journaled again as they were.
    /// Why the last two: the file still holds the user's version, not the merge. Left
    /// tracked as the merge, the file read as an edit made after it, dated after the
    /// merge, and won every collision with a later save elsewhere (model check, daemon
    /// seed 20261122: a file moved into an `lww` folder during the pull).
    /// - Parameters:
    ///   - superseded: the user's pending actions the pull finished (superseded).
    ///   - pendingNow: the document's pending actions now (those and the pull's own).
    static func notApplied(
        refId: String, base: DocVersion?, superseded: [JournalEntry], pendingNow: [JournalEntry]
    ) -> [JournalEntry] {
        var entries = [notApplied(refId: refId, base: base)]
        let before = Set(superseded.map(\.seq)), now = Set(pendingNow.map(\.seq))
        let pulls = pendingNow.filter { !before.contains($0.seq) }.map(\.seq)
        if !pulls.isEmpty { entries.append(JournalEntry(.done(refId: refId, seqs: pulls, reason: .superseded))) }
        for action in superseded where !now.contains(action.seq) {
            var again = action
            again.seq = 0
            again.more = nil
            entries.append(again)
        }
        return entries
    }
}
