import DocSyncKit

/// Why `status` lists a change the way it does: a delete and a create of one path are a
/// file whose refId was removed or changed (docsync tells documents apart by refId, not by
/// path); a rename says where the document was; a deletion reaches the remote as a
/// tombstone. One note per change, nil when there is nothing to add.
enum ChangeNotes {
    /// `recorded`: the changes are journaled (pending), so a new refId is a real one; for
    /// unrecorded changes a file without a refId shows as a placeholder "(new) PATH".
    static func notes(for changes: [ChangeSummary], recorded: Bool) -> [String?] {
        let pairs = Pairs(changes)
        return changes.map { change in
            switch change.kind {
            case .delete:
                if pairs.createdRefIds.contains(change.refId) {
                    return "deleted, then brought back: the next push sends the document as it is now"
                }
                if let successor = pairs.firstCreate[change.path] {
                    // Recorded, a removed refId was replaced by a fresh one: the two cannot be told apart.
                    let how =
                        successor.refId.hasPrefix("(new) ")
                        ? "was removed from the file"
                        : recorded
                            ? "is no longer in the file (it carries \(successor.refId) now)"
                            : "changed to \(successor.refId) in the file"
                    return
                        "its refId \(change.refId) \(how): the document counts as deleted and the file as a new one"
                        + (recorded ? "" : "; put \"refId\": \"\(change.refId)\" back to keep it one document")
                }
                return recorded
                    ? "a tombstone on the remote after the next push"
                    : "file gone: recorded as a deletion (a tombstone on the remote) by the next push or sync"
            case .create:
                if pairs.deletedRefIds.contains(change.refId) {
                    return "the same document, back after its deletion"
                }
                if let old = pairs.firstDelete[change.path] {
                    return
                        "the file no longer carries refId \(old.refId): it is a new document, the old one is deleted"
                }
                return nil
            default:
                guard let from = change.fromPath, from != change.path else { return nil }
                return "from \(from)"
            }
        }
    }

    /// The creations and deletions among the changes, by refId and by path (the first of
    /// each path). Why: each change looked for its counterpart through the whole list, and
    /// a `status` of 100,000 pending creations (a first push that could not reach the
    /// remote) ran for more than ten minutes.
    private struct Pairs {
        var createdRefIds = Set<String>()
        var deletedRefIds = Set<String>()
        var firstCreate: [String: ChangeSummary] = [:]
        var firstDelete: [String: ChangeSummary] = [:]

        init(_ changes: [ChangeSummary]) {
            for change in changes {
                switch change.kind {
                case .create:
                    createdRefIds.insert(change.refId)
                    if firstCreate[change.path] == nil { firstCreate[change.path] = change }
                case .delete:
                    deletedRefIds.insert(change.refId)
                    if firstDelete[change.path] == nil { firstDelete[change.path] = change }
                default: break
                }
            }
        }
    }

    /// "delete  a.json  (why)".
    static func lines(for changes: [ChangeSummary], recorded: Bool) -> [String] {
        zip(changes, notes(for: changes, recorded: recorded)).map { change, note in
            "\(change.kind.rawValue.padding(6))  \(change.path)" + (note.map { "  (\($0))" } ?? "")
        }
    }
}
