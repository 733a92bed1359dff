import Foundation

/// Versions that lost a reconciliation, kept under `.docsync/conflicts/<refId>/`: the
/// document bytes as `<changesetId>.json` and what happened as `<changesetId>.meta.json`.
/// Outside the document namespace, so no two live files ever share a refId.
///
/// Records travel through the remote (see `SharedConflict`): the replica whose version
/// lost learns of it on its next sync, and a resolve on any replica settles the record
/// everywhere. A record is identified by its document and the losing changesetId.
public struct ConflictStore {
    public struct Record: Codable, Sendable, Equatable {
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
        /// The policy that decided.
        public var policy: MergePolicy?
        /// Fields whose values differ between the two versions (collided, or for a whole
        /// document decision every differing field), dotted paths. `resolve --take`
        /// replaces exactly these.
        public var fields: [String]?
        /// When `docsync resolve` settled it; nil while open.
        public var resolved: Int64?
        /// The stored side is a deletion that lost to an edit (the bytes are the version
        /// that was deleted).
        public var deleted: Bool?
        /// The replica that recorded the conflict.
        public var replica: String?
        /// The replica whose version (or deletion) lost: it is told on its next sync.
        public var lostBy: String?
        /// Why the version was kept aside, when it is not a lost collision.
        public var reason: String?
        /// How it was settled: local, remote, a changesetId, or "as is"; and by whom.
        public var take: String?
        public var resolvedBy: String?
        /// False while this record (or its resolution) still has to go to the remote.
        public var shared: Bool?
        /// The stored version's *name* lost: the document was renamed on both sides, and
        /// `path` is the rename that was not applied (its content is the kept one's).
        public var renameLost: Bool?

        public var isOpen: Bool { resolved == nil }

        /// The record's name in the store (and on the remote): the losing changesetId; for
        /// a deletion that lost, `<deleted changesetId>.deletion.<winner>.<deleter>`, so a
        /// version that lost a field, and each replica's deletion of it that lost to an
        /// edit, are records of their own.
        public var storeName: String {
            ConflictStore.storeName(
                changesetId: changesetId, deleted: deleted == true, winner: winner, deleter: lostBy,
                renamed: renameLost == true)
        }

        public init(
            refId: String, changesetId: String, path: String, side: Reconciler.Side, winner: String, time: Int64,
            policy: MergePolicy? = nil, fields: [String]? = nil, deleted: Bool? = nil, replica: String? = nil,
            lostBy: String? = nil,
            reason: String? = nil, renameLost: Bool? = nil
        ) {
            self.refId = refId
            self.changesetId = changesetId
            self.path = path
            self.side = side
            self.winner = winner
            self.time = time
            self.policy = policy
            self.fields = fields
            self.deleted = deleted
            self.replica = replica
            self.lostBy = lostBy
            self.reason = reason
            self.renameLost = renameLost
            self.file = ConflictStore.relativeFile(
                refId: refId,
                storeName: ConflictStore.storeName(
                    changesetId: changesetId, deleted: deleted == true,
                    winner: winner, deleter: lostBy,
                    renamed: renameLost == true))
        }

        /// The same record as the remote should hold it (no local bookkeeping).
        var forSharing: Record {
            var copy = self
            copy.shared = nil
            return copy
        }
    }

    public let root: String

    public init(root: String) { self.root = root }

    func folder(for refId: String) -> String { root + "/" + DocumentPath.fileName(forRefId: refId) }

    static func storeName(changesetId: String, deleted: Bool, winner: String, deleter: String?, renamed: Bool = false)
        -> String
    {
        if renamed { return changesetId + ".rename." + winner + "." + (deleter ?? "") }
        return deleted ? changesetId + ".deletion." + winner + "." + (deleter ?? "") : changesetId
    }

    static func relativeFile(refId: String, storeName: String) -> String {
        ".docsync/conflicts/" + DocumentPath.fileName(forRefId: refId) + "/"
            + DocumentPath.fileName(forRefId: storeName) + ".json"
    }

    /// Keeps `bytes` as the losing version described by `record`. Idempotent.
    @discardableResult
    public func keep(_ record: Record, bytes: [UInt8]?) throws -> Record {
        let dir = folder(for: record.refId)
        try FileSystem.createDirectories(dir)
        if let bytes {
            try FileSystem.writeAtomically(
                dir + "/" + DocumentPath.fileName(forRefId: record.storeName) + ".json", bytes)
        }
        try save(record)
        return record
    }

    func save(_ record: Record) throws {
        let dir = folder(for: record.refId)
        try FileSystem.createDirectories(dir)
        let name = DocumentPath.fileName(forRefId: record.storeName)
        try FileSystem.writeAtomically(
            dir + "/" + name + ".meta.json", Array(try DirectoryRemote.json(record).utf8) + [10])
    }

    /// Takes back a record this replica made and has not shared: a retry of the same
    /// run decided the document again (see `PullPlan.remerged`). The record goes first, so
    /// a crash leaves at most an unlisted copy, never a record without its bytes.
    func withdraw(_ record: Record) throws {
        guard let current = self.record(refId: record.refId, storeName: record.storeName),
            current.shared == false || current.shared == nil,
            current.replica == nil || current.replica == record.replica
        else { return }
        let base = folder(for: record.refId) + "/" + DocumentPath.fileName(forRefId: record.storeName)
        try FileSystem.removeFile(base + ".meta.json")
        try FileSystem.removeFile(base + ".json")
    }

    /// The record of `refId` named `storeName` (see `Record.storeName`), if there is one.
    public func record(refId: String, storeName: String) -> Record? {
        let path = folder(for: refId) + "/" + DocumentPath.fileName(forRefId: storeName) + ".meta.json"
        guard let bytes = try? FileSystem.readFile(path) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: Data(bytes))
    }

    /// Marks every open record of `refId` settled (to be shared with the remote).
    public func markResolved(_ refId: String, take: String, by replica: String) throws -> [Record] {
        var settled: [Record] = []
        for var record in list() where record.refId == refId && record.isOpen {
            record.resolved = FileSystem.currentTimeNanos / 1_000_000
            record.take = take
            record.resolvedBy = replica
            record.shared = false
            try save(record)
            settled.append(record)
        }
        return settled
    }

    /// A record from the remote: kept if new, and a resolution made elsewhere settles
    /// the local copy. Returns the record if it changed anything here.
    func receive(_ incoming: SharedConflict) throws -> Record? {
        var record = incoming.record
        record.shared = true
        record.file = Self.relativeFile(refId: record.refId, storeName: record.storeName)
        guard var local = self.record(refId: record.refId, storeName: record.storeName) else {
            try keep(record, bytes: incoming.bytes)
            return record
        }
        guard local.isOpen, !record.isOpen else { return nil }
        local.resolved = record.resolved
        local.take = record.take
        local.resolvedBy = record.resolvedBy
        local.shared = true
        try save(local)
        return local
    }

    /// Records (and resolutions) this replica made that the remote does not have yet.
    func unshared() -> [SharedConflict] {
        list().filter { $0.shared == false }.map { record in
            SharedConflict(record: record.forSharing, bytes: try? bytes(of: record))
        }
    }

    func markShared(_ records: [Record]) throws {
        for shared in records {
            guard var record = record(refId: shared.refId, storeName: shared.storeName),
                record.resolved == shared.resolved
            else { continue }
            record.shared = true
            try save(record)
        }
    }

    public func bytes(of record: Record) throws -> [UInt8] {
        try FileSystem.readFile(
            folder(for: record.refId) + "/" + DocumentPath.fileName(forRefId: record.storeName) + ".json")
    }

    public func list() -> [Record] {
        guard let folders = try? FileSystem.listDirectory(root) else { return [] }
        var records: [Record] = []
        for folder in folders.sorted() {
            guard let names = try? FileSystem.listDirectory(root + "/" + folder) else { continue }
            // Not a temporary file a killed write left (`.docsync-tmp-…`): that listed one
            // record twice (model check folder seed 223943604, step 147).
            for name in names.sorted() where name.hasSuffix(".meta.json") && !name.hasPrefix(".") {
                if let bytes = try? FileSystem.readFile(root + "/" + folder + "/" + name),
                    let record = try? JSONDecoder().decode(Record.self, from: Data(bytes))
                {
                    records.append(record)
                }
            }
        }
        return records.sorted { ($0.time, $0.changesetId) < ($1.time, $1.changesetId) }
    }
}

/// A conflict record as it travels through the remote: the record and the losing
/// version's bytes (nil for a resolution of a record the remote already holds).
public struct SharedConflict: Sendable, Equatable {
    public var record: ConflictStore.Record
    public var bytes: [UInt8]?

    public init(record: ConflictStore.Record, bytes: [UInt8]?) {
        self.record = record
        self.bytes = bytes
    }
}
