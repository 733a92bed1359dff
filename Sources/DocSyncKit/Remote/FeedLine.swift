import DocSyncJSON

/// One line of a folder remote's feed or of a drive commit: a document's version or
/// tombstone (the `RemoteEntry` fields), or one of the two kinds of line only folder
/// remotes keep beside documents (`conflict`, `purgedDeletion`). Only document lines
/// leave the remote, as `entry`.
struct FeedLine: Codable, Sendable, Equatable {
    // A document line's fields are a `RemoteEntry`'s (see there for each).
    var refId, changesetId: String
    var hash, path: String?
    var deleted: Bool
    var replica: String
    var time: Int64
    var publishedHash: String? = nil
    var movedAt: Int64? = nil
    var parents: [String]? = nil
    /// Set on a line that shares a conflict record rather than a document version:
    /// `refId` is then `conflictKey(record)` (`conflict:<storeName>:<refId>`), `hash` the
    /// losing version's bytes in `objects/`, `path` nil. Such lines are never documents.
    var conflict: ConflictStore.Record? = nil
    /// Set on a line that remembers who made a deletion whose tombstone `docsync gc`
    /// purged: `refId` is then `purgedKey(refId)`, `replica` the deleter, `path` nil. Such
    /// lines are never documents. Why: a replica that brings the document back with an
    /// edit records that the deletion lost, and the deleter is told (exit 3), as the
    /// tombstone would have said.
    var purgedDeletion: Bool? = nil

    /// The feed key of a shared conflict record: one line per record, so the latest line
    /// (open, then resolved) is the record's state, and feed compaction keeps it.
    static func conflictKey(_ record: ConflictStore.Record) -> String {
        "conflict:" + record.storeName + ":" + record.refId
    }

    /// The feed key of a purged deletion's line (see `purgedDeletion`).
    static func purgedKey(_ refId: String) -> String { purgedPrefix + refId }
    static let purgedPrefix = "purged:"

    /// A document's version or tombstone: not a line sharing a conflict record, nor a
    /// purged deletion's (folder feeds and drive commits hold those beside documents).
    var isDocument: Bool { conflict == nil && purgedDeletion != true }

    var version: DocVersion? {
        guard !deleted, let hash, let path else { return nil }
        return DocVersion(refId: refId, changesetId: changesetId, hash: hash, path: path)
    }
}

extension FeedLine {
    /// A document line carrying `e`.
    init(_ e: RemoteEntry) {
        self.init(
            refId: e.refId, changesetId: e.changesetId, hash: e.hash, path: e.path, deleted: e.deleted,
            replica: e.replica, time: e.time, publishedHash: e.publishedHash, movedAt: e.movedAt, parents: e.parents)
    }

    /// The document line as the engine sees it (meaningful when `isDocument`).
    var entry: RemoteEntry {
        var e = RemoteEntry(
            refId: refId, changesetId: changesetId, hash: hash, path: path, deleted: deleted, replica: replica,
            time: time)
        (e.publishedHash, e.movedAt, e.parents) = (publishedHash, movedAt, parents)
        return e
    }
}

extension FeedLine: LineEncodable {
    /// A feed line's fields, in sorted order (see `LineEncodable`); a line sharing a
    /// conflict record (a nested object) goes through the encoder.
    func writeFields(to line: inout JSONObjectLine) -> Bool {
        guard conflict == nil else { return false }
        line.field("changesetId", changesetId)
        line.field("deleted", deleted)
        line.field("hash", hash)
        line.field("movedAt", movedAt)
        line.field("parents", parents)
        line.field("path", path)
        line.field("publishedHash", publishedHash)
        line.field("purgedDeletion", purgedDeletion)
        line.field("refId", refId)
        line.field("replica", replica)
        line.field("time", time)
        return true
    }
}
