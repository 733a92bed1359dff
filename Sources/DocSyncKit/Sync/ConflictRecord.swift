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

        /// The record's name in the store (and on the remote): the losing changesetId; for
        /// a deletion that lost, `<deleted changesetId>.deletion.<winner>.<deleter>`, so a
        /// version that lost a field, and each replica's deletion of it that lost to an
        /// edit, are records of their own.
        public var storeName: String {
            ConflictStore.storeName(
                changesetId: changesetId, deleted: isDeletion, winner: winner, deleter: lostBy, renamed: isRename)
        }

        public init(
            refId: String, changesetId: String, path: String, side: Reconciler.Side, winner: String, time: Int64,
            kind: Kind, replica: String? = nil, lostBy: String? = nil, reason: String? = nil
        ) {
            self.refId = refId
            self.changesetId = changesetId
            self.path = path
            self.side = side
            self.winner = winner
            self.time = time
            self.kind = kind
            self.replica = replica
            self.lostBy = lostBy
            self.reason = reason
            self.file = nil
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
    private enum CodingKeys: String, CodingKey {
        case refId, changesetId, path, side, winner, time, file, replica, lostBy, reason, shared
        case policy, fields, deleted, renameLost
        case resolved, take, resolvedBy
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        refId = try c.decode(String.self, forKey: .refId)
        changesetId = try c.decode(String.self, forKey: .changesetId)
        path = try c.decode(String.self, forKey: .path)
        side = try c.decode(Reconciler.Side.self, forKey: .side)
        winner = try c.decode(String.self, forKey: .winner)
        time = try c.decode(Int64.self, forKey: .time)
        file = try c.decodeIfPresent(String.self, forKey: .file)
        replica = try c.decodeIfPresent(String.self, forKey: .replica)
        lostBy = try c.decodeIfPresent(String.self, forKey: .lostBy)
        reason = try c.decodeIfPresent(String.self, forKey: .reason)
        shared = try c.decodeIfPresent(Bool.self, forKey: .shared)
        if try c.decodeIfPresent(Bool.self, forKey: .deleted) == true {
            kind = .deletion
        } else if try c.decodeIfPresent(Bool.self, forKey: .renameLost) == true {
            kind = .rename
        } else {
            kind = .version(
                policy: try c.decodeIfPresent(MergePolicy.self, forKey: .policy),
                fields: try c.decodeIfPresent([String].self, forKey: .fields))
        }
        resolution = try c.decodeIfPresent(Int64.self, forKey: .resolved).map {
            Resolution(
                time: $0, take: try c.decodeIfPresent(String.self, forKey: .take),
                by: try c.decodeIfPresent(String.self, forKey: .resolvedBy))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(refId, forKey: .refId)
        try c.encode(changesetId, forKey: .changesetId)
        try c.encode(path, forKey: .path)
        try c.encode(side, forKey: .side)
        try c.encode(winner, forKey: .winner)
        try c.encode(time, forKey: .time)
        try c.encodeIfPresent(file, forKey: .file)
        try c.encodeIfPresent(replica, forKey: .replica)
        try c.encodeIfPresent(lostBy, forKey: .lostBy)
        try c.encodeIfPresent(reason, forKey: .reason)
        try c.encodeIfPresent(shared, forKey: .shared)
        switch kind {
        case .version(let policy, let fields):
            try c.encodeIfPresent(policy, forKey: .policy)
            try c.encodeIfPresent(fields, forKey: .fields)
        case .deletion: try c.encode(true, forKey: .deleted)
        case .rename: try c.encode(true, forKey: .renameLost)
        }
        try c.encodeIfPresent(resolution?.time, forKey: .resolved)
        try c.encodeIfPresent(resolution?.take, forKey: .take)
        try c.encodeIfPresent(resolution?.by, forKey: .resolvedBy)
    }
}

// TRANSITIONAL (removed once every reader uses `kind` and `resolution`).
extension ConflictStore.Record {
    public var deleted: Bool? { isDeletion ? true : nil }
    public var renameLost: Bool? { isRename ? true : nil }
    public var policy: MergePolicy? {
        if case .version(let policy, _) = kind { return policy }
        return nil
    }
    public var resolved: Int64? { resolution?.time }
    public var take: String? { resolution?.take }
    public var resolvedBy: String? { resolution?.by }
}
