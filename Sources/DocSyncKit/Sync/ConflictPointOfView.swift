/// A conflict record seen from one replica. A record names its two versions by the
/// replica that made each (`lostBy` for the stored version or deletion, the replica in
/// the kept changesetId) and by changesetId; which of them is "local" depends on who looks.
///
/// - The stored version is local on the replica that made it (its edit, or its deletion,
///   lost), and remote everywhere else.
/// - On a replica that made neither version, "local" is what it holds now: the kept one.
///
/// So `resolve --take local` always means "what this replica has", and on a replica that
/// was not party to the conflict it deletes nothing and changes nothing. Why: flipped for
/// every replica but the one that recorded it, a record made a third replica see another
/// replica's deletion as its own, and taking "local" deleted the document everywhere.
public struct ConflictPointOfView: Sendable, Equatable {
    /// Who made the stored (losing) version or deletion; nil for records of an older
    /// docsync that did not say.
    public var storedBy: String?
    /// Who made the kept version (for a merge: the replica that merged).
    public var keptBy: String?
    /// The stored version is this replica's own.
    public var storedIsLocal: Bool
    /// The replica looking.
    public var replicaId: String

    public var storedSide: Reconciler.Side { storedIsLocal ? .local : .remote }

    public init(_ record: ConflictStore.Record, replica: String) {
        replicaId = replica
        storedBy = record.lostBy
        keptBy = record.keptBy ?? ChangesetID(record.winner)?.replica
        if let lostBy = record.lostBy {
            // Both versions this replica's own, recorded here: its earlier push (the
            // remote's side) against its later edit, as on a sparse replica that wrote back
            // a document it had let go. The side it recorded says which is which; by maker
            // alone the remote's version read as local, and `--take remote` kept the local
            // one (model check, folder seed 30118).
            if lostBy == replica, keptBy == replica, record.replica == replica {
                storedIsLocal = record.side == .local
            } else {
                storedIsLocal = lostBy == replica
            }
        } else {
            // No author recorded: the recording replica's side, flipped for the others.
            let recordedHere = record.replica.map { $0 == replica } ?? true
            storedIsLocal = recordedHere ? record.side == .local : record.side == .remote
        }
    }

    /// "r1's deletion lost to r2's edit", with names for the replica ids where known and
    /// "this replica" for this one.
    public func sentence(_ record: ConflictStore.Record, name: (String) -> String) -> String {
        let stored =
            storedIsLocal
            ? "this replica's"
            : storedBy == replicaId
                ? "the remote's (this replica's pushed)" : storedBy.map { name($0) + "'s" } ?? "another replica's"
        let keptIsLocal = keptBy == replicaId && !storedIsLocal
        let kept = keptIsLocal ? "this replica's" : keptBy.map { name($0) + "'s" } ?? "another replica's"
        if record.isRename {
            return "\(stored) rename to \(record.path) lost to \(kept) rename (version \(record.winner))"
        }
        let what = record.isDeletion ? "deletion" : "version"
        let winner = record.isDeletion ? "edit" : "version"
        return "\(stored) \(what) \(record.changesetId) lost to \(kept) \(winner) \(record.winner)"
    }
}

extension ConflictService {
    /// Where a document is now in this tree (nil: not tracked here).
    public func currentPath(of refId: String) -> String? { state.trackedVersions[refId]?.path }

    /// The record as this replica sees it (see `ConflictPointOfView`).
    public func pointOfView(of record: ConflictStore.Record) -> ConflictPointOfView {
        ConflictPointOfView(record, replica: config.replicaId)
    }
}
