import Foundation

/// Versions that lost a reconciliation, kept under `.docsync/conflicts/<refId>/`: the
/// document bytes as `<changesetId>.json` and what happened as `<changesetId>.meta.json`.
/// Outside the document namespace, so no two live files ever share a refId.
public struct ConflictStore {
    public struct Record: Codable, Sendable, Equatable {
        public var refId: String
        public var changesetId: String
        public var path: String
        public var side: String
        public var winner: String
        public var time: Int64
        public var file: String?
    }

    public let root: String

    public init(root: String) { self.root = root }

    func folder(for refId: String) -> String { root + "/" + DocumentPath.fileName(forRefId: refId) }

    /// Keeps `bytes` as the losing version. Idempotent for the same version.
    @discardableResult
    public func keep(_ bytes: [UInt8], version: DocVersion, side: Reconciler.Side, winner: String) throws -> Record {
        let dir = folder(for: version.refId)
        try FileSystem.createDirectories(dir)
        let name = DocumentPath.fileName(forRefId: version.changesetId)
        try FileSystem.writeAtomically(dir + "/" + name + ".json", bytes)
        let record = Record(refId: version.refId, changesetId: version.changesetId, path: version.path, side: side.rawValue,
                            winner: winner, time: FileSystem.currentTimeNanos / 1_000_000,
                            file: ".docsync/conflicts/" + DocumentPath.fileName(forRefId: version.refId) + "/" + name + ".json")
        try FileSystem.writeAtomically(dir + "/" + name + ".meta.json", Array(try DirectoryRemote.json(record).utf8) + [10])
        return record
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
