import Foundation

/// The entries a push records, the same in every layout that writes them.
extension RemoteEntry {
    /// The new version a write sends (`write.new` set), with its rename time.
    static func version(_ new: DocVersion, of write: RemoteWrite, replica: String, time: Int64) -> RemoteEntry {
        var entry = RemoteEntry(
            refId: write.refId, changesetId: new.changesetId, hash: new.hash, path: new.path, deleted: false,
            replica: replica, time: time)
        entry.movedAt = write.movedAt
        return entry
    }

    /// The tombstone of a write that deletes (`write.new` nil): the deleted version where known.
    static func deletion(by write: RemoteWrite, replica: String, time: Int64) -> RemoteEntry {
        RemoteEntry(
            refId: write.refId, changesetId: write.deletedChangesetId ?? write.previous?.changesetId ?? "",
            hash: write.previous?.hash, path: write.previous?.path, deleted: true, replica: replica, time: time)
    }

}

/// The lines a folder remote writes: a push's document lines, and the two kinds of line
/// it keeps beside documents.
extension FeedLine {
    static func version(_ new: DocVersion, of write: RemoteWrite, replica: String, time: Int64) -> FeedLine {
        FeedLine(RemoteEntry.version(new, of: write, replica: replica, time: time))
    }

    static func deletion(by write: RemoteWrite, replica: String, time: Int64) -> FeedLine {
        FeedLine(RemoteEntry.deletion(by: write, replica: replica, time: time))
    }

    /// A folder feed's line sharing a conflict record (see `conflict`).
    static func sharing(_ shared: SharedConflict, replica: String, time: Int64) -> FeedLine {
        FeedLine(
            refId: conflictKey(shared.record), changesetId: shared.record.changesetId,
            hash: shared.bytes.map(ContentHash.of), path: nil, deleted: false, replica: replica, time: time,
            conflict: shared.record)
    }

    /// The line that remembers who deleted a document once `docsync gc` purged its
    /// tombstone (see `purgedDeletion`). The deleted version's hash too: a replica that
    /// still has an older version keeps the one that was deleted (objects/ keeps it) if its
    /// edit beats the deletion.
    static func purgedLine(of tombstone: FeedLine) -> FeedLine {
        var line = FeedLine(
            refId: purgedKey(tombstone.refId), changesetId: tombstone.changesetId, hash: tombstone.hash, path: nil,
            deleted: true, replica: tombstone.replica, time: tombstone.time)
        line.purgedDeletion = true
        return line
    }

    /// Whether a purged deletion's line has had its day: its document is back (`isLive`
    /// says which refIds hold a document). Compaction drops such a line.
    func isPurgedLineOfReturned(_ isLive: (String) -> Bool) -> Bool {
        purgedDeletion == true && isLive(String(refId.dropFirst(Self.purgedPrefix.count)))
    }
}
