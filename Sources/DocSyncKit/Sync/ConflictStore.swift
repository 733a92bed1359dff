import Foundation

/// Versions that lost a reconciliation, kept under `.docsync/conflicts/<refId>/`: the
/// document bytes as `<changesetId>.json` and what happened as `<changesetId>.meta.json`.
/// Outside the document namespace, so no two live files ever share a refId.
public struct ConflictStore {
    public struct Record: Codable, Sendable, Equatable {
        public var refId: String
        /// The stored (losing) version.
        public var changesetId: String
        public var path: String
        /// Which side the stored version came from: local or remote.
        public var side: String
        /// The changesetId of the version that was kept in the document.
        public var winner: String
        public var time: Int64
        public var file: String?
        /// The policy that decided (merge, lww, local, remote, manual).
        public var policy: String?
        /// Fields changed differently on both sides (field merge), dotted paths.
        public var fields: [String]?
        /// When `docsync resolve` settled it; nil while open.
        public var resolved: Int64?
        public var isOpen: Bool { resolved == nil }
    }

    public let root: String

    public init(root: String) { self.root = root }

    func folder(for refId: String) -> String { root + "/" + DocumentPath.fileName(forRefId: refId) }

    /// Keeps `bytes` as the losing version. Idempotent for the same version.
    @discardableResult
    public func keep(_ bytes: [UInt8], version: DocVersion, side: Reconciler.Side, winner: String, policy: String? = nil,
                     fields: [String]? = nil) throws -> Record {
        let dir = folder(for: version.refId)
        try FileSystem.createDirectories(dir)
        let name = DocumentPath.fileName(forRefId: version.changesetId)
        try FileSystem.writeAtomically(dir + "/" + name + ".json", bytes)
        let record = Record(refId: version.refId, changesetId: version.changesetId, path: version.path, side: side.rawValue,
                            winner: winner, time: FileSystem.currentTimeNanos / 1_000_000,
                            file: ".docsync/conflicts/" + DocumentPath.fileName(forRefId: version.refId) + "/" + name + ".json",
                            policy: policy, fields: fields, resolved: nil)
        try save(record)
        return record
    }

    func save(_ record: Record) throws {
        let dir = folder(for: record.refId)
        let name = DocumentPath.fileName(forRefId: record.changesetId)
        try FileSystem.writeAtomically(dir + "/" + name + ".meta.json", Array(try DirectoryRemote.json(record).utf8) + [10])
    }

    /// Marks every open record of `refId` settled.
    public func markResolved(_ refId: String) throws -> [Record] {
        var settled: [Record] = []
        for var record in list() where record.refId == refId && record.isOpen {
            record.resolved = FileSystem.currentTimeNanos / 1_000_000
            try save(record)
            settled.append(record)
        }
        return settled
    }

    public func bytes(of record: Record) throws -> [UInt8] {
        try FileSystem.readFile(folder(for: record.refId) + "/" + DocumentPath.fileName(forRefId: record.changesetId) + ".json")
    }

    public func list() -> [Record] {
        guard let folders = try? FileSystem.listDirectory(root) else { return [] }
        var records: [Record] = []
        for folder in folders.sorted() {
            guard let names = try? FileSystem.listDirectory(root + "/" + folder) else { continue }
            for name in names.sorted() where name.hasSuffix(".meta.json") {
                if let bytes = try? FileSystem.readFile(root + "/" + folder + "/" + name),
                   let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)) {
                    records.append(record)
                }
            }
        }
        return records.sorted { $0.time < $1.time }
    }
}
