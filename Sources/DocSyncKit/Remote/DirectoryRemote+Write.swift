import DocSyncJSON
import Foundation

/// Writing to a format-1 folder remote: documents, then the feed line, under the lock.
extension DirectoryRemote {
    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursorText: String?, replica: ReplicaInfo
    ) throws -> String {
        let id = try identity()
        let expected = try parseCursor(cursorText, remoteId: id)
        let lock = RemoteLock(folder: meta, replica: replica.replicaId, files: files)
        if let holder = try lock.acquire(waitSeconds: lockWaitSeconds, staleSeconds: lockStaleSeconds) {
            throw RemoteError.locked(url: displayURL, holder: holder)
        }
        defer { lock.release() }
        let now = try position()
        guard now.generation == expected?.position.generation ?? 0, now.length == expected?.position.length ?? 0 else {
            throw RemoteError.moved
        }
        let feed = try feedCutToCommitted(now)
        let io = SafeTreeIO(perimeter: files)
        removeStaleTemporaryFiles()
        try finishInterruptedPush(at: now, io: io)
        try recordIntent(for: writes)
        let time = FileSystem.currentTimeNanos / 1_000_000
        let heartbeat = Self.heartbeat(refreshing: lock)
        removeLeftoverTemporaryFiles(
            in: Set(writes.compactMap { $0.new.map { ($0.path as NSString).deletingLastPathComponent } }))
        // Every object first, complete (a pack's index in place) before any readable copy:
        // finishing a dead push (PushIntent) removes only copies whose content is in
        // objects/. More than 16 go into one pack instead of a file each.
        try FolderRemoteFiles.storeObjects(of: writes, conflicts: conflicts, in: objects)
        // Bytes, not a String turned into bytes at the end: no second copy of the whole
        // feed text, and no String growth, at a first push's peak.
        var feedData = try writeDocuments(writes, io: io, replica: replica, time: time, heartbeat: heartbeat)
        for shared in conflicts {
            feedData += try feedLine(.sharing(shared, replica: replica.replicaId, time: time))
        }
        // One flush for all documents and objects, before the feed makes them visible.
        files.syncFilesystem()
        // Nothing is committed past a path refused on the way (one met by a lookup too).
        try files.checkPerimeter()
        try CrashPoint.hit("remote.after-documents")
        let next = try appendCommitted(feedData, to: feed, at: now, lock: lock)
        clearIntent()
        let cursor = Cursor(remoteId: id, position: next).text
        try? writeReplicaRecord(replica, seen: cursor)
        return cursor
    }

    /// The commit point: the feed lines appended and `generation` moved past them, only
    /// if the lock is still ours and nobody committed since `now`.
    private func appendCommitted(_ feedData: [UInt8], to feed: String, at now: Position, lock: RemoteLock) throws
        -> Position
    {
        guard lock.stillHeld else {
            throw RemoteError.locked(url: displayURL, holder: "our lock was broken as stale during a long push")
        }
        guard try position() == now else { throw RemoteError.moved }
        try files.append(feed, feedData)
        try CrashPoint.hit("remote.after-feed")
        let next = Position(generation: now.generation + 1, length: now.length + feedData.count, epoch: now.epoch)
        try files.writeAtomically(meta + "/generation", Array(next.text.utf8))
        return next
    }

    /// A call to make between documents: refreshes `lock` every 5 s, so a long push is
    /// not taken for a dead one.
    private static func heartbeat(refreshing lock: RemoteLock) -> () -> Void {
        var lastRefresh = FileSystem.currentTimeNanos
        return {
            if FileSystem.currentTimeNanos - lastRefresh > 5_000_000_000 {
                lock.refresh()
                lastRefresh = FileSystem.currentTimeNanos
            }
        }
    }

    /// The feed of the committed position, with a dead pusher's torn tail (appended, never
    /// committed) cut off; a feed shorter than its committed length is damage.
    private func feedCutToCommitted(_ now: Position) throws -> String {
        let feed = feedPath(epoch: now.epoch)
        let feedBytes = try readFeedFile(from: 0, epoch: now.epoch)
        // Why: appending to a feed cut below the committed length (damage, a partial copy)
        // wrote lines at the wrong offsets and committed them, making it worse.
        guard feedBytes.count >= now.length else {
            throw RemoteError.damaged(
                url: displayURL,
                reason: "\(feed) is shorter than its recorded length (\(feedBytes.count) < \(now.length))")
        }
        if feedBytes.count > now.length {
            // A pusher died after appending but before committing: drop its torn tail.
            try files.truncate(feed, to: now.length)
        }
        return feed
    }

    /// Writes the documents of a push (removals first) and tombstones, keeping a file
    /// someone edited in the folder; returns their feed lines.
    private func writeDocuments(
        _ writes: [RemoteWrite], io: SafeTreeIO, replica: ReplicaInfo, time: Int64, heartbeat: () -> Void
    ) throws -> [UInt8] {
        var feedData: [UInt8] = []
        for write in writes {
            guard let previous = write.previous, write.new?.path != previous.path else { continue }
            try removeDocument(previous, io: io)
        }
        for (written, write) in writes.enumerated() {
            heartbeat()
            defer { writeProgress?(write, written + 1, writes.count) }
            if let new = write.new, let content = try write.content() {
                if let previous = write.previous, previous.path == new.path,
                    let existing = try? io.readIfPresent(new.path),
                    ContentHash.of(existing) != previous.hash, ContentHash.of(existing) != new.hash
                {
                    try keepDisplaced(existing, refId: write.refId)
                }
                do { try io.write(new.path, content, durable: false) } catch let error as SafeTreeIO.Refused {
                    throw RemoteError.unsafe(url: displayURL, reason: error.description)
                }
                try files.removeFile(tombstonePath(write.refId))
                feedData += try feedLine(.version(new, of: write, replica: replica.replicaId, time: time))
            } else {
                let tombstone = FeedLine.deletion(by: write, replica: replica.replicaId, time: time)
                try files.writeAtomically(
                    tombstonePath(write.refId), Array(try tombstone.encodedLine().utf8) + [10])
                feedData += try feedLine(tombstone)
            }
        }
        return feedData
    }

    /// Deletes docsync temporary files (`.docsync-tmp-…`) in the document folders this
    /// push writes to. Only the lock holder writes documents, so any there now were left
    /// by a pusher that died (or whose lock was broken; its rename then fails and it
    /// retries). Why: killed pushes left them in the shared folder, visible to everyone,
    /// for good. Only the folders a push touches are listed, so a push stays O(changes).
    func removeLeftoverTemporaryFiles(in folders: Set<String>) {
        for folder in folders.sorted() {
            FolderRemoteFiles.removeTemporaryFiles(inDocumentFolder: folder, files: files)
        }
    }

    /// Deletes the temporary files a dead push left in the metadata: a pack it was
    /// writing (see `ObjectPacks`), a feed or record it was replacing.
    func removeStaleTemporaryFiles() {
        for folder in [meta, meta + "/objects/packs", meta + "/replicas", meta + "/tombstones"] {
            files.removeStaleTemporaryFiles(in: folder)
        }
    }

    /// Removes the file a document occupied, keeping it aside if it is not the version
    /// we expect (someone edited the remote folder directly): nothing is lost.
    func removeDocument(_ previous: DocVersion, io: SafeTreeIO) throws {
        guard let bytes = try? io.readIfPresent(previous.path) else { return }
        if ContentHash.of(bytes) != previous.hash { try keepDisplaced(bytes, refId: previous.refId) }
        try io.remove(previous.path)
    }

    /// A file in the remote folder that docsync did not write (edited there by hand) is
    /// kept under `.docsync/displaced/` before anything replaces it.
    func keepDisplaced(_ bytes: [UInt8], refId: String) throws {
        try FolderRemoteFiles.keepDisplaced(bytes, refId: refId, meta: meta, files: files)
    }

    func tombstonePath(_ refId: String) -> String {
        meta + "/tombstones/" + DocumentPath.fileName(forRefId: refId) + ".json"
    }

    func feedLine(_ entry: FeedLine) throws -> String.UTF8View {
        ChecksummedLines.encode(try entry.encodedLine()).utf8
    }

    struct ReplicaRecord: Codable {
        var replicaId: String
        var name: String
        var seen: String
        var time: Int64
        /// Absent in records written before docsync kept it.
        var version: String? = nil
        /// A sparse replica's selection (absent: it keeps everything).
        var selection: [String]? = nil
    }

    /// How stale a record may grow while its replica syncs without news: a no-op sync
    /// rewrites it only this often, so `docsync replicas` shows "last synced" to within
    /// this, and a no-op pull still writes nothing most of the time.
    static let replicaRecordRefreshMillis: Int64 = 3_600_000

    func replicaRecordPath(_ replicaId: String) -> String {
        meta + "/replicas/" + DocumentPath.fileName(forRefId: replicaId) + ".json"
    }

    func writeReplicaRecord(_ replica: ReplicaInfo, seen cursor: String) throws {
        let path = replicaRecordPath(replica.replicaId)
        let now = FileSystem.currentTimeNanos / 1_000_000
        if let old = try? files.readFile(path),
            let record = try? JSONDecoder().decode(ReplicaRecord.self, from: Data(old)),
            record.seen == cursor, record.name == replica.name, record.version == replica.version,
            record.selection == replica.selection, now - record.time < Self.replicaRecordRefreshMillis
        {
            return
        }
        let record = ReplicaRecord(
            replicaId: replica.replicaId, name: replica.name, seen: cursor, time: now, version: replica.version,
            selection: replica.selection)
        try files.createDirectories(meta + "/replicas")
        try files.writeAtomically(path, Array(try LineEncoding.json(record).utf8) + [10])
    }

    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        _ = try identity()
        try writeReplicaRecord(replica, seen: cursor)
    }
}
