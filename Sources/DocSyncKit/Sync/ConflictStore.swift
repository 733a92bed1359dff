import Foundation

/// Versions that lost a reconciliation, kept under `.docsync/conflicts/<refId>/`: the
/// document bytes as `<changesetId>.json` and what happened as `<changesetId>.meta.json`.
/// Outside the document namespace, so no two live files ever share a refId.
///
/// Records travel through the remote (see `SharedConflict`): the replica whose version
/// lost learns of it on its next sync, and a resolve on any replica settles the record
/// everywhere. A record is identified by its document and its name (`Record.storeName`):
/// the losing changesetId and what it lost to.
public struct ConflictStore {
    public let root: String

    public init(root: String) { self.root = root }

    func folder(for refId: String) -> String { root + "/" + DocumentPath.fileName(forRefId: refId) }

    static func storeName(changesetId: String, deleted: Bool, winner: String, deleter: String?, renamed: Bool = false)
        -> String
    {
        if renamed { return changesetId + ".rename." + winner + "." + (deleter ?? "") }
        return deleted ? changesetId + ".deletion." + winner + "." + (deleter ?? "") : changesetId
    }

    /// A lost version's record name since records carry one (see `Record.name`).
    static func versionName(changesetId: String, winner: String) -> String {
        changesetId + ".version." + winner
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
            dir + "/" + name + ".meta.json", Array(try LineEncoding.json(record).utf8) + [10])
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

    /// Records an earlier, unfinished try made of the same loss as `record`: the same
    /// version, deletion or rename lost (same document, version, path, kind and loser),
    /// recorded here and not shared, open, under another winner. A run that finished would
    /// have taken the losing side out of the tree, so the same loss recorded again means the
    /// run that wrote these died before it journaled its pull (model check git seed
    /// 955664108, step 18: the retry's remote had moved on, and the deletion was listed as
    /// lost twice). A lost version's name carries its winner too (see `Record.name`).
    func earlierTries(of record: Record) -> [Record] {
        list(refId: record.refId).filter {
            $0.storeName != record.storeName && $0.isDeletion == record.isDeletion && $0.isRename == record.isRename
                && $0.changesetId == record.changesetId && $0.path == record.path && $0.lostBy == record.lostBy
                && $0.replica == record.replica && $0.isOpen && $0.shared == false
        }
    }

    /// The record of `refId` named `storeName` (see `Record.storeName`), if there is one.
    public func record(refId: String, storeName: String) -> Record? {
        let path = folder(for: refId) + "/" + DocumentPath.fileName(forRefId: storeName) + ".meta.json"
        guard let bytes = try? FileSystem.readFile(path) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: Data(bytes))
    }

    /// Marks every open record of `refId` settled (to be shared with the remote).
    public func markResolved(_ refId: String, take: ResolveTake, by replica: String) throws -> [Record] {
        var settled: [Record] = []
        for var record in list() where record.refId == refId && record.isOpen {
            record.resolution = .init(time: FileSystem.currentTimeNanos / 1_000_000, take: take.text, by: replica)
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
        local.resolution = record.resolution
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
                record.resolution == shared.resolution
            else { continue }
            record.shared = true
            try save(record)
        }
    }

    public func bytes(of record: Record) throws -> [UInt8] {
        try FileSystem.readFile(
            folder(for: record.refId) + "/" + DocumentPath.fileName(forRefId: record.storeName) + ".json")
    }

    /// The records of one document.
    func list(refId: String) -> [Record] { records(in: folder(for: refId)) }

    public func list() -> [Record] {
        guard let folders = try? FileSystem.listDirectory(root) else { return [] }
        let all = folders.sorted().flatMap { records(in: root + "/" + $0) }
        return all.sorted { ($0.time, $0.changesetId) < ($1.time, $1.changesetId) }
    }

    /// The records kept in one document's folder, by file name. Not a temporary file a
    /// killed write left (`.docsync-tmp-…`): that listed one record twice (model check
    /// folder seed 223943604, step 147).
    private func records(in dir: String) -> [Record] {
        guard let names = try? FileSystem.listDirectory(dir) else { return [] }
        return names.sorted().compactMap { name in
            guard name.hasSuffix(".meta.json"), !name.hasPrefix("."),
                let bytes = try? FileSystem.readFile(dir + "/" + name)
            else { return nil }
            return try? JSONDecoder().decode(Record.self, from: Data(bytes))
        }
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
