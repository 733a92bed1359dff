import Foundation

/// What of the remote's changes a sparse replica takes: a change at a selected path, or
/// to a document the replica holds (tracked, in its base, or held aside), whatever path
/// the change gives it. Everything else is passed over; the cursor still moves past it,
/// so a sparse replica holds back no tombstone gc for documents it never selected.
/// Widening the selection reads the remote's whole listing once (see `SparseService`).
enum SelectedChanges {
    /// `changes` with only what `selection` or the replica's own documents (`holds`) take.
    static func filter(
        _ changes: RemoteChanges, by selection: SparseSelection, holds: (String) -> Bool
    ) -> RemoteChanges {
        var kept = changes
        kept.entries = changes.entries.filter { entry in
            holds(entry.refId) || entry.path.map(selection.contains) ?? false
        }
        kept.conflicts = changes.conflicts.filter { shared in
            holds(shared.record.refId) || selection.contains(shared.record.path)
        }
        kept.purgedDeletions = changes.purgedDeletions.filter { holds($0.key) }
        return kept
    }
}
