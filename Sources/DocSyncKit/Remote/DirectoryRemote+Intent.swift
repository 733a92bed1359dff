import Foundation

/// What a push is about to touch in a folder remote, written to `.docsync/intent` before
/// the first document write and removed after the commit point.
///
/// Why: a push that dies between its document writes and its commit leaves readable
/// copies nobody committed. The next push of the same document overwrites them, but a
/// document moved meanwhile never is pushed to that path again: the stale copy stayed in
/// the shared folder for good, a ghost record for anyone browsing it, and a committed
/// document the dead push had already removed from its old path stayed missing (found by
/// the random-kill tests). With the intent, the next lock holder puts exactly those paths
/// back to what the remote has committed.
struct PushIntent: Codable {
    /// Document paths written or removed.
    var paths: [String]
    /// refIds whose tombstone file is written or removed.
    var tombstones: [String]
}

extension DirectoryRemote {
    var intentPath: String { meta + "/intent" }

    func recordIntent(for writes: [RemoteWrite]) throws {
        var paths = Set<String>()
        for write in writes {
            if let path = write.previous?.path { paths.insert(path) }
            if let path = write.new?.path { paths.insert(path) }
        }
        let intent = PushIntent(paths: paths.sorted(), tombstones: writes.map(\.refId).sorted())
        try files.writeAtomically(intentPath, Array(try LineEncoding.json(intent).utf8) + [10])
    }

    func clearIntent() { try? files.removeFile(intentPath) }

    /// Puts every path a dead pusher's intent names back to the committed state at `now`:
    /// the committed version's readable copy where one belongs, nothing where none does
    /// (only files docsync wrote are removed: their content is in `objects/`), and the
    /// tombstone files of the committed deletions. Called under the remote lock. Reads the
    /// whole feed, which only happens after a push died.
    func finishInterruptedPush(at now: Position, io: SafeTreeIO) throws {
        guard files.exists(intentPath) else { return }
        guard let bytes = try? files.readFile(intentPath),
            let intent = try? JSONDecoder().decode(PushIntent.self, from: Data(bytes))
        else {
            // Torn while being written: the pusher died before its first document write.
            clearIntent()
            return
        }
        var latest: [String: FeedLine] = [:]
        for entry in try readFeed(from: 0, to: now.length, epoch: now.epoch) { latest[entry.refId] = entry }
        var committedAt: [String: FeedLine] = [:]
        for entry in latest.values where !entry.deleted { if let path = entry.path { committedAt[path] = entry } }

        for path in intent.paths {
            let present = try? io.readIfPresent(path)
            if let entry = committedAt[path], let hash = entry.hash {
                guard present.map(ContentHash.of) != hash, objects.contains(hash) else { continue }
                if let present, !objects.contains(ContentHash.of(present)) {
                    try keepDisplaced(present, refId: entry.refId)
                }
                try io.write(path, try objects.get(hash), durable: false)
            } else if let present, objects.contains(ContentHash.of(present)) {
                try io.remove(path)
            }
        }
        for refId in intent.tombstones {
            if let entry = latest[refId], entry.deleted {
                if !files.exists(tombstonePath(refId)) {
                    try files.writeAtomically(tombstonePath(refId), Array(try entry.encodedLine().utf8) + [10])
                }
            } else {
                try? files.removeFile(tombstonePath(refId))
            }
        }
        files.syncFilesystem()
        clearIntent()
    }
}
