extension JournalEntry {
    /// A document whose pull could not be applied (the user saved, moved or deleted its
    /// file under the pull): the entries that put its recorded state back to what the
    /// user had. Its old base (so the file is compared with what it really came from), and
    /// the pull's own local action (a merge to push) finished.
    /// Why: the file still holds the user's version, not the merge. Left tracked as the
    /// merge, the file read as an edit made after it, dated after the merge, and won every
    /// collision with a later save elsewhere (model check, daemon seed 20261122: a file
    /// moved into an `lww` folder during the pull). The user's own actions the pull
    /// finished need no entry: the next scan records the file again from its stamp and
    /// mtime, under the id it was stamped with (`earlierEditMovedIntoLWWWhileMerging`).
    /// - Parameters:
    ///   - superseded: the user's pending actions the pull finished (superseded).
    ///   - pendingNow: the document's pending actions now (those and the pull's own).
    static func notApplied(
        refId: String, base: DocVersion?, superseded: [JournalEntry], pendingNow: [JournalEntry]
    ) -> [JournalEntry] {
        var entries = [notApplied(refId: refId, base: base)]
        let before = Set(superseded.map(\.seq))
        let pulls = pendingNow.filter { !before.contains($0.seq) }.map(\.seq)
        if !pulls.isEmpty { entries.append(JournalEntry(.done(refId: refId, seqs: pulls, reason: .superseded))) }
        return entries
    }
}
