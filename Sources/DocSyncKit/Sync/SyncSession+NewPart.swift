import Foundation

/// What a sparse replica takes from the remote's whole listing besides the changes since
/// its cursor: the documents a widened selection adds, and the remote's version of a
/// document whose refId a file here carries but the tree does not hold.
extension SyncSession {
    /// Documents recorded as new here whose refId came with the file (not one docsync
    /// gave it) and that have no base: on a sparse replica, possibly a document the remote
    /// has outside the selection (copied in, or written back after it left). Sent as new,
    /// it would replace the remote's version unmerged; the pull meets them first.
    static func carriedRefIds(_ state: SyncState) -> Set<String> {
        let base = state.baseVersions
        var carried = Set<String>()
        for action in state.pending where action.mintedId != true {
            guard case .local(.create, let version, _) = action.event, base[version.refId] == nil else { continue }
            carried.insert(version.refId)
        }
        return carried
    }

    /// Whether a push must pull first although the remote may not have moved.
    var mustMeetCarriedRefIds: Bool { selection != nil && !Self.carriedRefIds(state).isEmpty }

    /// The remote's whole listing, when this pull needs some of it (see `add`): read once
    /// for a widened selection, and whenever documents carry refIds the tree does not hold
    /// (returned with them).
    func readNewPart() throws -> (whole: RemoteChanges, carried: Set<String>)? {
        guard selection != nil || widening else { return nil }
        let carried = selection != nil ? Self.carriedRefIds(state) : []
        guard widening || !carried.isEmpty else { return nil }
        widening = false
        let whole = try remote.changes(since: nil).checked(url: remote.displayURL)
        try state.readBase()
        return (whole, carried)
    }

    /// Adds to `changes` the live documents of `whole` it does not name that the tree does
    /// not hold (the selection's filter then takes those at selected paths: the new part),
    /// and those whose refId a file here carries. Why only documents the tree does not
    /// hold: the changes since the cursor say everything about the others (a deletion
    /// whose tombstone is gone included), and `whole` is as new as them or older.
    func add(_ whole: RemoteChanges, carried: Set<String>, to changes: inout RemoteChanges) {
        let named = Set(changes.entries.map(\.refId))
        let (tracked, base) = (state.trackedVersions, state.baseVersions)
        for entry in whole.entries where !entry.deleted && !named.contains(entry.refId) {
            let unknown = tracked[entry.refId] == nil && base[entry.refId] == nil
            if unknown || carried.contains(entry.refId) { changes.entries.append(entry) }
        }
    }
}
