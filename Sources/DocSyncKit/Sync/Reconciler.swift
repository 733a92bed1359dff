/// The three-way decision for one document: base (last synced), local (recorded) and
/// remote (latest entry). Pure: it decides, the workspace carries it out.
///
/// | local \ remote | unchanged | changed            | deleted             |
/// |----------------|-----------|--------------------|---------------------|
/// | unchanged      | nothing   | take remote        | delete locally      |
/// | changed        | push      | merge (see below)  | keep local (record) |
/// | deleted        | push      | take remote (rec.) | nothing             |
///
/// An edit beats a deletion; the deletion that lost is recorded like a conflict.
///
/// Both changed: path and content are decided separately, so a rename on one side and
/// an edit on the other both apply. Content changed on both sides differently: the later
/// changesetId wins and the other version goes to the conflict store.
public enum Reconciler {
    public enum Side: String, Sendable, Codable { case local, remote }

    public struct Decision: Sendable, Equatable {
        /// What the working tree should hold afterwards (nil: no document).
        public var result: DocVersion?
        /// Where the result's content comes from.
        public var contentFrom: Side
        /// A version that lost and must be kept aside.
        public var loser: (side: Side, version: DocVersion)?
        /// What to tell the user about the content decision.
        public var notice: DocumentNotice?
        /// What to tell the user about the path decision (a rename that was not applied).
        public var pathNotice: DocumentNotice?
        /// The side whose deletion lost to an edit on the other side (recorded like a
        /// conflict, so the replica that deleted learns why the document came back).
        public var lostDeletion: Side?
        /// Renamed on both sides to different paths: the version whose name lost (recorded
        /// like a conflict, and resolvable: `resolve --take` moves the document there).
        public var renameLoser: (side: Side, version: DocVersion)? = nil

        public static func == (a: Decision, b: Decision) -> Bool {
            a.result == b.result && a.contentFrom == b.contentFrom && a.loser?.side == b.loser?.side
                && a.loser?.version == b.loser?.version
                && a.notice == b.notice && a.pathNotice == b.pathNotice && a.lostDeletion == b.lostDeletion
                && a.renameLoser?.side == b.renameLoser?.side && a.renameLoser?.version == b.renameLoser?.version
        }
    }

    /// - Parameters: `localMovedAt` and `remoteMovedAt`: when each side's rename was made
    ///   (ms), where known. Of two renames to different paths the later one wins, so every
    ///   replica ends with the same name whichever syncs first; without both times, the
    ///   later changesetId decides.
    /// - Returns: nil when the remote entry brings nothing new (it is the base).
    public static func decide(
        base: DocVersion?, local: DocVersion?, remote: DocVersion?, localMovedAt: Int64? = nil,
        remoteMovedAt: Int64? = nil
    ) -> Decision? {
        if remote == base { return nil }
        if local == base { return Decision(result: remote, contentFrom: .remote) }
        if local == remote { return Decision(result: remote, contentFrom: .remote) }
        guard let local else {
            return Decision(
                result: remote, contentFrom: .remote,
                notice: .editBeatDeletion(deletedOn: .local, renamedOnly: remote?.hash == base?.hash),
                lostDeletion: .local)
        }
        guard let remote else {
            return Decision(
                result: local, contentFrom: .local,
                notice: .editBeatDeletion(deletedOn: .remote, renamedOnly: local.hash == base?.hash),
                lostDeletion: .remote)
        }
        let localIsLater = changesetOrder(remote.changesetId, local.changesetId)
        let (contentFrom, loser) = content(base: base, local: local, remote: remote, localIsLater: localIsLater)
        let (path, pathNotice, renameLoser) = path(
            base: base, local: local, remote: remote, localIsLater: localIsLater, localMovedAt: localMovedAt,
            remoteMovedAt: remoteMovedAt)
        let winner = contentFrom == .local ? local : remote
        var result = winner
        result.path = path
        return Decision(
            result: result, contentFrom: contentFrom, loser: loser,
            notice: loser.map { _ in .changedOnBothSides(kept: contentFrom) },
            pathNotice: pathNotice, renameLoser: renameLoser)
    }

    /// Whose content the document keeps, and the version that lost (content changed on
    /// both sides differently: the later changesetId wins).
    static func content(base: DocVersion?, local: DocVersion, remote: DocVersion, localIsLater: Bool) -> (
        Side, (Side, DocVersion)?
    ) {
        if local.hash == base?.hash { return (.remote, nil) }
        if remote.hash == base?.hash { return (.local, nil) }
        if local.hash == remote.hash { return (.remote, nil) }
        return localIsLater ? (.local, (.remote, remote)) : (.remote, (.local, local))
    }

    /// Where the document ends up: a rename on one side applies; renamed on both sides,
    /// the later rename (or, without both times, the later changesetId) wins and the
    /// other is said and kept as a conflict.
    static func path(
        base: DocVersion?, local: DocVersion, remote: DocVersion, localIsLater: Bool, localMovedAt: Int64?,
        remoteMovedAt: Int64?
    ) -> (String, DocumentNotice?, (Side, DocVersion)?) {
        if local.path == base?.path { return (remote.path, nil, nil) }
        if remote.path == base?.path { return (local.path, nil, nil) }
        if base == nil {
            // Both sides brought the document back (or made it) at different paths: no
            // rename lost, the later version's path is kept.
            let path = localIsLater ? local.path : remote.path
            guard local.path != remote.path else { return (path, nil, nil) }
            let notice = DocumentNotice.differentPaths(
                kept: path, notApplied: localIsLater ? remote.path : local.path,
                notAppliedSide: localIsLater ? .remote : .local)
            return (path, notice, nil)
        }
        let byTime = localMovedAt.flatMap { l in remoteMovedAt.flatMap { r in l == r ? nil : l > r } }
        let localRenameWins = byTime ?? localIsLater
        let path = localRenameWins ? local.path : remote.path
        // The rename that lost is said and kept, so the user can take that name after all.
        guard local.path != remote.path else { return (path, nil, nil) }
        let lostSide: Side = localRenameWins ? .remote : .local
        let notice = DocumentNotice.renamedOnBothSides(
            kept: path, byRenameTime: byTime != nil, lostSide: lostSide,
            lostPath: localRenameWins ? remote.path : local.path)
        return (path, notice, (lostSide, lostSide == .local ? local : remote))
    }
}
