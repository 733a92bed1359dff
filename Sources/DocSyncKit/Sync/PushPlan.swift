/// What a push sends: the latest recorded version of every document with pending
/// actions (nothing for a document whose remote version is held aside), and the
/// conflict records not yet shared.
struct PushPlan {
    var writes: [RemoteWrite] = []
    var finished: [Int] = []
    var conflicts: [SharedConflict] = []
    var summaries: [ChangeSummary] = []
    var isEmpty: Bool { finished.isEmpty && conflicts.isEmpty }

    /// Per document, the published versions its pending content carries beyond the base
    /// (see `JournalEntry.madeFrom`).
    static func carried(_ pending: [JournalEntry]) -> [String: [String]] {
        var carried: [String: [String]] = [:]
        for action in pending {
            if let refId = action.refId, let from = action.madeFrom { carried[refId, default: []] += from }
        }
        return carried
    }

    /// What a pushed version is made from: the version the tree synced, and the
    /// published versions its content carries beyond it; never itself.
    static func parents(previous: DocVersion?, carried: [String], new: DocVersion?) -> [String] {
        var out: [String] = []
        for id in [previous?.changesetId].compactMap({ $0 }) + carried where id != new?.changesetId && !out.contains(id)
        { out.append(id) }
        return out
    }
}
