import Foundation

/// One line of the action journal. Local actions (`create`, `update`, `rename`,
/// `delete`) are what the user did; the other kinds record what syncing did with them.
/// See docs/FORMATS.md for the meaning of each field.
public struct JournalEntry: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// Local actions, pending until a `done` names them.
        case create, update, rename, delete
        /// Marks local actions finished: `pushed` (now on the remote) or `superseded`
        /// (replaced by the outcome of a reconciliation).
        case done
        /// A file operation of a pull: the working tree's copy of `refId` becomes this
        /// version (or is removed). Logged before it is done, redone after a crash.
        case apply
        /// The remote's version of a document, which becomes its base.
        case seen
        /// A remote version that arrived while the local file was not a valid document:
        /// held aside (the base does not move) until the file is fixed, then merged
        /// three-way with the fix like any concurrent edit. A later `seen` ends the hold.
        case held
        /// A losing version kept in the conflict store.
        case conflict
        /// The remote position the base now reflects.
        case cursor
        /// A conflict settled by `docsync resolve` (the content change, if any, is an
        /// ordinary update next to it).
        case resolve
    }

    public var seq: Int
    public var kind: Kind
    public var time: Int64
    public var refId: String?
    public var changesetId: String?
    public var hash: String?
    public var path: String?
    public var fromPath: String?
    public var fromHash: String?
    public var deleted: Bool?
    public var seqs: [Int]?
    public var reason: String?
    public var cursor: String?
    /// Set on every entry of an appended batch but the last: the batch goes on in the
    /// next line. Only in the file (entries read or appended come back without it).
    public var more: Bool?

    public init(kind: Kind, refId: String? = nil, changesetId: String? = nil, hash: String? = nil, path: String? = nil,
                fromPath: String? = nil, fromHash: String? = nil, deleted: Bool? = nil, seqs: [Int]? = nil,
                reason: String? = nil, cursor: String? = nil) {
        self.seq = 0
        self.kind = kind
        self.time = FileSystem.currentTimeNanos / 1_000_000
        self.refId = refId
        self.changesetId = changesetId
        self.hash = hash
        self.path = path
        self.fromPath = fromPath
        self.fromHash = fromHash
        self.deleted = deleted
        self.seqs = seqs
        self.reason = reason
        self.cursor = cursor
    }

    public var isLocalAction: Bool {
        switch kind {
        case .create, .update, .rename, .delete: return true
        default: return false
        }
    }

    /// The version a local or applied action leaves the document in (nil: deleted).
    public var resultingVersion: DocVersion? {
        guard deleted != true, kind != .delete, let refId, let changesetId, let hash, let path else { return nil }
        return DocVersion(refId: refId, changesetId: changesetId, hash: hash, path: path)
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    func encodedLine() throws -> String {
        String(decoding: try Self.encoder.encode(self), as: UTF8.self)
    }

    static func decode(_ payload: String) throws -> JournalEntry {
        try JSONDecoder().decode(JournalEntry.self, from: Data(payload.utf8))
    }
}
