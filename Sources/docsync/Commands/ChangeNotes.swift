import DocSyncKit

/// Why `status` lists a change the way it does: a delete and a create of one path are a
/// file whose refId was removed or changed (docsync tells documents apart by refId, not by
/// path); a rename says where the document was; a deletion reaches the remote as a
/// tombstone. One note per change, nil when there is nothing to add.
enum ChangeNotes {
    /// `recorded`: the changes are journaled (pending), so a new refId is a real one; for
    /// unrecorded changes a file without a refId shows as a placeholder "(new) PATH".
    static func notes(for changes: [ChangeSummary], recorded: Bool) -> [String?] {
        changes.map { change in
            switch change.kind {
            case .delete:
                if changes.contains(where: { $0.kind == .create && $0.refId == change.refId }) {
                    return "deleted, then brought back: the next push sends the document as it is now"
                }
                if let successor = changes.first(where: { $0.kind == .create && $0.path == change.path }) {
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
                if changes.contains(where: { $0.kind == .delete && $0.refId == change.refId }) {
                    return "the same document, back after its deletion"
                }
                if let old = changes.first(where: { $0.kind == .delete && $0.path == change.path }) {
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

    /// "delete  a.json  (why)".
    static func lines(for changes: [ChangeSummary], recorded: Bool) -> [String] {
        zip(changes, notes(for: changes, recorded: recorded)).map { change, note in
            "\(change.kind.rawValue.padding(6))  \(change.path)" + (note.map { "  (\($0))" } ?? "")
        }
    }
}
