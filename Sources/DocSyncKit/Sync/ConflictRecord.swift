extension ConflictStore {
    /// One version kept aside: what lost, to what, and how it was settled. Stored as
    /// `<name>.meta.json` beside the version's bytes, and shared through the remote; the
    /// JSON keeps the flat shape of docs/JSON.md (`deleted`, `renameLost`, `policy`,
    /// `fields`, `resolved`, `take`, `resolvedBy`) whatever the Swift shape.
    public struct Record: Sendable, Equatable {
        /// What lost.
        public enum Kind: Sendable, Equatable {
            /// Content changed on both sides and this version lost: to `policy` (nil in
            /// records written before docsync kept it), in `fields` (the fields whose
            /// values differ, dotted paths; `resolve --take` replaces exactly these; empty:
            /// the whole document).
            case version(policy: MergePolicy?, fields: [String]?)
            /// A deletion lost to an edit; the bytes are the version that was deleted.
            case deletion
            /// The document was renamed on both sides and this version's *name* lost:
            /// `path` is the rename that was not applied (its content is the kept one's).
            case rename
        }

        /// How `docsync resolve` settled a record: when, taking what (local, remote, a
        /// changesetId, or "as is"), and by which replica.
        public struct Resolution: Sendable, Equatable {
            public var time: Int64
            public var take: String?
            public var by: String?
        }

        public var refId: String
        /// The stored (losing) version.
        public var changesetId: String
        public var path: String
        /// Which side the stored version came from, seen from the replica that recorded it.
        public var side: Reconciler.Side
        /// The changesetId of the version that was kept in the document.
        public var winner: String
        public var time: Int64
        public var file: String?
        public var kind: Kind
        /// The replica that recorded the conflict.
        public var replica: String?
        /// The replica whose version (or deletion) lost: it is told on its next sync.
        public var lostBy: String?
        /// The replica whose action won (its edit, rename or merge). Nil in records of an
        /// older docsync: then the maker of `winner` is named, which for a rename (it keeps
        /// the changesetId) is whoever made the version, not who renamed it.
        public var keptBy: String?
        /// Why the version was kept aside, when it is not a lost collision.
        public var reason: String?
        /// Nil while open.
        public var resolution: Resolution?
        /// False while this record (or its resolution) still has to go to the remote.
        public var shared: Bool?

        public var isOpen: Bool { resolution == nil }
        public var isDeletion: Bool { kind == .deletion }
        public var isRename: Bool { kind == .rename }
        /// The fields a lost version differs in (nil for other kinds, and in old records).
        public var fields: [String]? {
            if case .version(_, let fields) = kind { return fields }
            return nil
        }

        /// The record's name, written in it (`name`) when it is not the one derived from its
        /// other fields: a lost version's record is named `<losing>.version.<winner>`, so that
        /// two replicas that both merged the same remote version, and each kept its own
        /// field over it, keep two records (daemon seed 1127300, step 25: the second
        /// replaced the first on the remote and in every store). Nil in records written
        /// before, named after the losing changesetId alone.
        public var name: String?

        /// The record's name in the store (and on the remote): `name`, else the losing
        /// changesetId; for a deletion that lost, `<deleted changesetId>.deletion.<winner>.<deleter>`,
        /// so a version that lost a field, and each replica's deletion of it that lost to an
        /// edit, are records of their own.
        public var storeName: String {
            name
                ?? ConflictStore.storeName(
                    changesetId: changesetId, deleted: isDeletion, winner: winner, deleter: lostBy, renamed: isRename)
        }

        public init(
            refId: String, changesetId: String, path: String, side: Reconciler.Side, winner: String, time: Int64,
            kind: Kind, replica: String? = nil, lostBy: String? = nil, reason: String? = nil
        ) {
            (self.refId, self.changesetId, self.path, self.side) = (refId, changesetId, path, side)
            (self.winner, self.time, self.kind) = (winner, time, kind)
            (self.replica, self.lostBy, self.reason, self.file) = (replica, lostBy, reason, nil)
            if case .version = kind { name = ConflictStore.versionName(changesetId: changesetId, winner: winner) }
            self.file = ConflictStore.relativeFile(refId: refId, storeName: storeName)
        }

        /// The same record as the remote should hold it (no local bookkeeping).
        var forSharing: Record {
            var copy = self
            copy.shared = nil
            return copy
        }
    }
}

extension ConflictStore.Record: Codable {
    /// The JSON's flat shape: every kind's keys, optional.
    private struct Flat: Codable {
        var refId: String
        var changesetId: String
        var path: String
        var side: Reconciler.Side
        var winner: String
        var time: Int64
        var name: String?
        var file, replica, lostBy, keptBy, reason: String?
        var shared: Bool?
        var policy: MergePolicy?
        var fields: [String]?
        var deleted, renameLost: Bool?
        var resolved: Int64?
        var take, resolvedBy: String?
    }

    public init(from decoder: Decoder) throws {
        let flat = try Flat(from: decoder)
        let kind: Kind =
            flat.deleted == true
            ? .deletion : flat.renameLost == true ? .rename : .version(policy: flat.policy, fields: flat.fields)
        self.init(
            refId: flat.refId, changesetId: flat.changesetId, path: flat.path, side: flat.side, winner: flat.winner,
            time: flat.time, kind: kind, replica: flat.replica, lostBy: flat.lostBy, reason: flat.reason)
        name = flat.name
        file = flat.file
        keptBy = flat.keptBy
        shared = flat.shared
        resolution = flat.resolved.map { Resolution(time: $0, take: flat.take, by: flat.resolvedBy) }
    }

    public func encode(to encoder: Encoder) throws {
        var flat = Flat(
            refId: refId, changesetId: changesetId, path: path, side: side, winner: winner, time: time, name: name,
            file: file,
            replica: replica, lostBy: lostBy, keptBy: keptBy, reason: reason, shared: shared,
            resolved: resolution?.time,
            take: resolution?.take, resolvedBy: resolution?.by)
        switch kind {
        case .version(let policy, let fields): (flat.policy, flat.fields) = (policy, fields)
        case .deletion: flat.deleted = true
        case .rename: flat.renameLost = true
        }
        try flat.encode(to: encoder)
    }
}
