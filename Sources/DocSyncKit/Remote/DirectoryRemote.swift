import DocSyncJSON
import Foundation

/// A plain folder as the remote. Documents sit at their paths, readable by anyone; the
/// folder's `.docsync/` holds the rest (see docs/REMOTE-LAYOUT.md):
///
///     format          identity of this remote (a random id) and the layout version
///     generation      "<generation> <feed length>": the commit point of every push
///     feed            one checksummed line per document change, appended by pushes
///     objects/        every pushed version by content hash (immutable; packs/ for large pushes)
///     tombstones/     one file per deleted document
///     replicas/       one file per replica: what it has seen, for tombstone gc
///     lock            held while a push writes
///
/// A push writes documents and tombstones, appends to the feed, then replaces
/// `generation`; readers trust feed bytes only up to the length it names. So a no-op
/// pull reads one small file, and a pull reads only the feed lines it has not seen.
public final class DirectoryRemote: Remote {
    public let root: String
    public let displayURL: String
    let meta: String
    /// Every pushed version, content-addressed and immutable: what readers fall back to.
    let objects: ObjectStore
    let lockStaleSeconds: Double
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    let lockWaitSeconds: Double

    public init(url: String, lockStaleSeconds: Double = 600, lockWaitSeconds: Double = 10) {
        displayURL = url
        root = FileSystem.absolute(url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url)
        meta = root + "/.docsync"
        objects = ObjectStore(root: meta + "/objects")
        self.lockStaleSeconds = lockStaleSeconds
        self.lockWaitSeconds = lockWaitSeconds
    }

    static let formatHeader = "docsync-remote 1"

    /// Makes `url` a new, empty remote. The folder may exist but must hold nothing.
    public static func create(at url: String) throws {
        let remote = DirectoryRemote(url: url)
        if FileSystem.exists(remote.meta + "/format") { return }
        if FileSystem.exists(remote.root), !(try FileSystem.listDirectory(remote.root)).isEmpty {
            throw RemoteError.damaged(
                url: url,
                reason: "folder exists and is not empty, and is not a docsync remote; pick an empty or new folder")
        }
        try FileSystem.createDirectories(remote.meta + "/tombstones")
        try FileSystem.createDirectories(remote.meta + "/replicas")
        try FileSystem.writeAtomically(remote.meta + "/feed", [])
        try FileSystem.writeAtomically(remote.meta + "/generation", Array("0 0\n".utf8))
        try FileSystem.writeAtomically(
            remote.meta + "/format", Array("\(formatHeader)\nid \(UUIDString.random())\n".utf8))
    }

    /// Whether `url` holds a folder remote of either layout.
    public static func isRemote(_ url: String) -> Bool {
        FileSystem.exists(DirectoryRemote(url: url).meta + "/format")
    }

    // MARK: Reading

    /// The remote's id. Its absence means the folder is missing or not mounted, which
    /// must read as "unreachable", never as "empty".
    func identity() throws -> String {
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.unreachable(url: displayURL, reason: "folder \(root) does not exist (not mounted?)")
        }
        guard let bytes = try? FileSystem.readFile(meta + "/format") else {
            throw RemoteError.unreachable(
                url: displayURL, reason: "\(meta)/format is missing: not a docsync remote, or the share is not mounted")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n")
        guard lines.first == Substring(Self.formatHeader), lines.count >= 2, lines[1].hasPrefix("id ") else {
            throw RemoteError.damaged(
                url: displayURL, reason: "\(meta)/format is not a docsync remote format this version understands")
        }
        return String(lines[1].dropFirst(3))
    }

    struct Position: Equatable {
        var generation: Int
        var length: Int
        /// The generation at which `docsync gc` last compacted the feed (0: never). Feed
        /// offsets are only comparable within one epoch, so a cursor from an earlier
        /// generation reads the whole feed as a snapshot.
        var epoch = 0

        /// What `generation` holds: the third field only once the feed was compacted, so
        /// a remote that never was keeps the original two-field format.
        var text: String { epoch == 0 ? "\(generation) \(length)\n" : "\(generation) \(length) \(epoch)\n" }
    }

    func position() throws -> Position {
        guard let bytes = try? FileSystem.readFile(meta + "/generation") else {
            throw RemoteError.damaged(url: displayURL, reason: "\(meta)/generation is missing")
        }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2 || parts.count == 3, let g = Int(parts[0]), let l = Int(parts[1]),
            let e = parts.count == 3 ? Int(parts[2]) : 0, e >= 0, e <= g
        else {
            throw RemoteError.damaged(url: displayURL, reason: "\(meta)/generation is damaged")
        }
        return Position(generation: g, length: l, epoch: e)
    }

    /// The feed of an epoch: `feed` until the first compaction, then `feed-<epoch>`. A new
    /// name per epoch, so a reader that read the old `generation` still finds the feed
    /// its offsets belong to while a compaction commits.
    func feedPath(epoch: Int) -> String {
        epoch == 0 ? meta + "/feed" : meta + "/feed-\(epoch)"
    }

    struct Cursor {
        var remoteId: String
        var position: Position
        var text: String { "\(remoteId):\(position.generation):\(position.length)" }

        init(remoteId: String, position: Position) {
            self.remoteId = remoteId
            self.position = position
            // The epoch is not part of the cursor: a cursor's generation says which epoch
            // it belongs to (every compaction is a generation of its own).
            self.position.epoch = 0
        }

        init?(_ text: String) {
            let p = text.split(separator: ":")
            guard p.count == 3, let g = Int(p[1]), let l = Int(p[2]) else { return nil }
            remoteId = String(p[0])
            position = Position(generation: g, length: l)
        }
    }

    func parseCursor(_ text: String?, remoteId: String) throws -> Cursor? {
        guard let text else { return nil }
        guard let cursor = Cursor(text) else {
            throw RemoteError.damaged(url: displayURL, reason: "this tree's remote cursor '\(text)' is not valid")
        }
        guard cursor.remoteId == remoteId else {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "this is a different remote than the one this tree last synced with (remote id \(remoteId), expected \(cursor.remoteId))"
            )
        }
        return cursor
    }

    public func changes(since cursorText: String?) throws -> RemoteChanges {
        do { return try changesOnce(since: cursorText) } catch FeedGone.gone {
            // A compaction committed between reading `generation` and opening its feed
            // (and another one removed that feed): read the new generation.
            do { return try changesOnce(since: cursorText) } catch FeedGone.gone {
                throw RemoteError.damaged(
                    url: displayURL,
                    reason:
                        "\(meta)/feed of the current generation is missing: the remote is damaged or was only partly copied"
                )
            }
        }
    }

    private enum FeedGone: Error { case gone }

    private func changesOnce(since cursorText: String?) throws -> RemoteChanges {
        let id = try identity()
        let from = try parseCursor(cursorText, remoteId: id)
        let now = try position()
        if let from, from.position.generation == now.generation, from.position.length == now.length {
            return RemoteChanges(entries: [], cursor: from.text)
        }
        guard FileSystem.exists(feedPath(epoch: now.epoch)) || now.epoch == 0 else { throw FeedGone.gone }
        // A cursor from before the last compaction: its offsets mean nothing in this
        // feed. Read all of it; the engine compares it with the whole base.
        let snapshot = from.map { $0.position.generation < now.epoch } ?? false
        let start = snapshot ? 0 : from?.position.length ?? 0
        guard start <= now.length, (from?.position.generation ?? 0) <= now.generation else {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "the remote's history is shorter than what this tree has seen (was it restored from an old backup?)"
            )
        }
        // Why per entry: one planted line with an unsafe path (or id) refused the whole
        // feed, so nobody could pull anything until someone repaired the share by hand.
        var refused: [String] = []
        let entries = try readFeed(from: start, to: now.length, epoch: now.epoch) { refused.append($0) }
        var latest: [String: Int] = [:]
        for (i, e) in entries.enumerated() { latest[e.refId] = i }
        let kept = entries.enumerated().filter { latest[$0.element.refId] == $0.offset }.map(\.element)
        return RemoteChanges(
            folding: kept, cursor: Cursor(remoteId: id, position: now).text, snapshot: snapshot, warnings: refused,
            objects: objects)
    }

    /// The feed's entries. One whose path or refId is unsafe is passed to `refuse` and
    /// left out, or without `refuse` makes the whole read fail.
    func readFeed(from start: Int, to end: Int, epoch: Int, refuse: ((String) -> Void)? = nil) throws -> [RemoteEntry] {
        try entries(of: try committedFeedLines(from: start, to: end, epoch: epoch), epoch: epoch, refuse: refuse)
    }

    /// The feed's lines from byte `start` to the committed length `end` (only the part
    /// after the cursor: a pull reads what it has not seen). A feed shorter than `end`, or
    /// damaged before it, is an error naming the file.
    func committedFeedLines(from start: Int, to end: Int, epoch: Int) throws -> [ChecksummedLines.Line] {
        let bytes = try readFeedFile(from: start, epoch: epoch)
        guard start + bytes.count >= end else {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "\(feedPath(epoch: epoch)) is shorter than its recorded length (\(start + bytes.count) < \(end))")
        }
        let parsed = ChecksummedLines.parse(bytes[0..<(end - start)], baseOffset: start)
        guard parsed.validLength == end else {
            throw RemoteError.damaged(
                url: displayURL, reason: "\(feedPath(epoch: epoch)) is damaged near byte \(parsed.validLength)")
        }
        return parsed.lines
    }

    /// The entries of feed `lines`; without `refuse`, one per line (or an error).
    func entries(of lines: [ChecksummedLines.Line], epoch: Int, refuse: ((String) -> Void)? = nil) throws
        -> [RemoteEntry]
    {
        let decoder = JSONDecoder()
        return try lines.compactMap { line in
            guard let entry = try? decoder.decode(RemoteEntry.self, from: Data(line.payload.utf8)) else {
                throw RemoteError.damaged(
                    url: displayURL,
                    reason: "\(feedPath(epoch: epoch)) has an unreadable entry ending at byte \(line.endOffset)")
            }
            guard let problem = Self.problem(of: entry) else { return entry }
            guard let refuse else { throw RemoteError.unsafe(url: displayURL, reason: problem) }
            refuse("\(displayURL): refused \(problem); not pulled")
            return nil
        }
    }

    /// Why a feed entry cannot be taken (an unsafe path, an unacceptable id), or nil.
    /// Shared by both folder layouts: every entry a reader takes passes here.
    static func problem(of entry: RemoteEntry) -> String? {
        if let record = entry.conflict {
            // A shared conflict record: its ids go into this tree's conflict store.
            if RefID.isAcceptable(record.refId), RefID.isAcceptable(record.changesetId),
                entry.refId == RemoteEntry.conflictKey(record)
            {
                return nil
            }
            return "conflict record for \(record.refId.debugDescription): not acceptable ids"
        } else if entry.purgedDeletion == true {
            let refId = String(entry.refId.dropFirst(RemoteEntry.purgedPrefix.count))
            if entry.refId.hasPrefix(RemoteEntry.purgedPrefix), RefID.isAcceptable(refId),
                RefID.isAcceptable(entry.replica)
            {
                return nil
            }
            return
                "purged deletion \(entry.refId.debugDescription) by \(entry.replica.debugDescription): not acceptable ids"
        } else if let path = entry.path, let pathProblem = DocumentPath.problem(path) {
            return "path '\(path)' of document \(entry.refId.debugDescription): \(pathProblem)"
        } else if !RefID.isAcceptable(entry.refId) {
            // Why: ids are written into the journal and state; a NUL or newline in one
            // was taken as is.
            return
                "document \(entry.refId.debugDescription) at '\(entry.path ?? "?")': not an acceptable refId (empty, too long or control characters)"
        }
        return nil
    }

    /// The feed's bytes from `start`. Why: a remote copied only partly (or damaged by
    /// hand) without its feed failed with a bare "open failed", not saying it is the remote.
    func readFeedFile(from start: Int, epoch: Int) throws -> [UInt8] {
        let path = feedPath(epoch: epoch)
        guard FileSystem.exists(path) else {
            throw RemoteError.damaged(
                url: displayURL, reason: "\(path) is missing: the remote is damaged or was only partly copied")
        }
        return try FileSystem.readFile(path, from: start)
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        guard let path = entry.path, let hash = entry.hash else {
            throw RemoteError.damaged(url: displayURL, reason: "entry for \(entry.refId) has no content")
        }
        // The readable copy at the document's path is tried first; if a push is under
        // way (or died) it may hold a newer, uncommitted version, so the immutable copy
        // in objects/ is the fallback.
        do {
            if let bytes = try SafeTreeIO(root: root).readIfPresent(path), ContentHash.of(bytes) == hash {
                return bytes
            }
        } catch let error as SafeTreeIO.Refused {
            // Why: a readable copy replaced by a symlink (or under a symlinked folder)
            // refused the whole pull; the copy is only a convenience, objects/ is the truth.
            if let bytes = try? objects.get(hash) { return bytes }
            throw RemoteError.unsafe(url: displayURL, reason: error.description)
        }
        if let bytes = try? objects.get(hash) { return bytes }
        if !FileSystem.isDirectory(root) {
            throw RemoteError.unreachable(url: displayURL, reason: "folder disappeared")
        }
        throw RemoteError.damaged(
            url: displayURL, reason: "version \(entry.changesetId) of \(path) is missing from the remote")
    }

    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursorText: String?, replica: ReplicaInfo
    ) throws -> String {
        let id = try identity()
        let expected = try parseCursor(cursorText, remoteId: id)
        let lock = RemoteLock(folder: meta, replica: replica.replicaId)
        if let holder = try lock.acquire(waitSeconds: lockWaitSeconds, staleSeconds: lockStaleSeconds) {
            throw RemoteError.locked(url: displayURL, holder: holder)
        }
        defer { lock.release() }
        let now = try position()
        guard now.generation == expected?.position.generation ?? 0, now.length == expected?.position.length ?? 0 else {
            throw RemoteError.moved
        }
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
            try FileSystem.truncate(feed, to: now.length)
        }
        let io = SafeTreeIO(root: root)
        try finishInterruptedPush(at: now, io: io)
        try recordIntent(for: writes)
        let time = FileSystem.currentTimeNanos / 1_000_000
        // Bytes, not a String turned into bytes at the end: that copy, with the String's
        // own growth, was a fifth of a first push's peak memory.
        var feedData: [UInt8] = []
        var lastRefresh = FileSystem.currentTimeNanos
        func heartbeat() {
            if FileSystem.currentTimeNanos - lastRefresh > 5_000_000_000 {
                lock.refresh()
                lastRefresh = FileSystem.currentTimeNanos
            }
        }
        removeLeftoverTemporaryFiles(
            in: Set(writes.compactMap { $0.new.map { ($0.path as NSString).deletingLastPathComponent } }))
        // Every object first, complete (a pack's index in place) before any readable copy:
        // finishing a dead push (PushIntent) removes only copies whose content is in
        // objects/. More than 16 go into one pack instead of a file each.
        for write in writes {
            if let new = write.new, !objects.contains(new.hash), let content = try write.content() {
                try objects.put(content, hash: new.hash)
            }
        }
        for shared in conflicts {
            if let bytes = shared.bytes { try objects.put(bytes) }
        }
        try objects.seal()
        // Removals first, so a document may move onto a path another one just left.
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
                try FileSystem.removeFile(tombstonePath(write.refId))
                var entry = RemoteEntry(
                    refId: write.refId, changesetId: new.changesetId, hash: new.hash, path: new.path,
                    deleted: false, replica: replica.replicaId, time: time)
                entry.movedAt = write.movedAt
                feedData += try feedLine(entry)
            } else {
                let deletedId = write.deletedChangesetId ?? write.previous?.changesetId ?? ""
                let tombstone = RemoteEntry(
                    refId: write.refId, changesetId: deletedId, hash: write.previous?.hash, path: write.previous?.path,
                    deleted: true, replica: replica.replicaId, time: time)
                try FileSystem.writeAtomically(tombstonePath(write.refId), Array(try Self.json(tombstone).utf8) + [10])
                feedData += try feedLine(tombstone)
            }
        }
        for shared in conflicts {
            let hash = shared.bytes.map(ContentHash.of)
            feedData += try feedLine(
                RemoteEntry(
                    refId: RemoteEntry.conflictKey(shared.record), changesetId: shared.record.changesetId, hash: hash,
                    path: nil, deleted: false, replica: replica.replicaId, time: time, conflict: shared.record))
        }
        // One flush for all documents and objects, before the feed makes them visible.
        FileSystem.syncFilesystem(containing: meta)
        try CrashPoint.hit("remote.after-documents")
        // The commit point is only ours if the lock still is and nobody committed since.
        guard lock.stillHeld else {
            throw RemoteError.locked(url: displayURL, holder: "our lock was broken as stale during a long push")
        }
        guard try position() == now else { throw RemoteError.moved }
        try FileSystem.append(feed, feedData)
        try CrashPoint.hit("remote.after-feed")
        let next = Position(generation: now.generation + 1, length: now.length + feedData.count, epoch: now.epoch)
        try FileSystem.writeAtomically(meta + "/generation", Array(next.text.utf8))
        clearIntent()
        let cursor = Cursor(remoteId: id, position: next).text
        try? writeReplicaRecord(replica, seen: cursor)
        return cursor
    }

    /// Deletes docsync temporary files (`.docsync-tmp-…`) in the document folders this
    /// push writes to. Only the lock holder writes documents, so any there now were left
    /// by a pusher that died (or whose lock was broken; its rename then fails and it
    /// retries). Why: killed pushes left them in the shared folder, visible to everyone,
    /// for good. Only the folders a push touches are listed, so a push stays O(changes).
    private func removeLeftoverTemporaryFiles(in folders: Set<String>) {
        for folder in folders.sorted() {
            guard let (absolute, names) = FolderRemoteFiles.documentFolder(folder, root: root) else { continue }
            for name in names where name.hasPrefix(".docsync-tmp-") { unlink(absolute + "/" + name) }
        }
    }

    /// Removes the file a document occupied, keeping it aside if it is not the version
    /// we expect (someone edited the remote folder directly): nothing is lost.
    private func removeDocument(_ previous: DocVersion, io: SafeTreeIO) throws {
        guard let bytes = try? io.readIfPresent(previous.path) else { return }
        if ContentHash.of(bytes) != previous.hash { try keepDisplaced(bytes, refId: previous.refId) }
        try io.remove(previous.path)
    }

    /// A file in the remote folder that docsync did not write (edited there by hand) is
    /// kept under `.docsync/displaced/` before anything replaces it.
    func keepDisplaced(_ bytes: [UInt8], refId: String) throws {
        try FolderRemoteFiles.keepDisplaced(bytes, refId: refId, meta: meta)
    }

    func tombstonePath(_ refId: String) -> String {
        meta + "/tombstones/" + DocumentPath.fileName(forRefId: refId) + ".json"
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func feedLine(_ entry: RemoteEntry) throws -> String.UTF8View {
        ChecksummedLines.encode(try Self.feedJSON(entry)).utf8
    }

    /// A feed line's JSON: what `json(entry)` writes, byte for byte, but for a document
    /// version or tombstone written by hand (`JSONObjectLine`): a first push writes one
    /// per document. A line sharing a conflict record (a nested object) goes through the
    /// encoder.
    static func feedJSON(_ entry: RemoteEntry) throws -> String {
        guard entry.conflict == nil else { return try json(entry) }
        var line = JSONObjectLine()
        line.field("changesetId", entry.changesetId)
        line.field("deleted", entry.deleted)
        line.field("hash", entry.hash)
        line.field("movedAt", entry.movedAt)
        line.field("parents", entry.parents)
        line.field("path", entry.path)
        line.field("publishedHash", entry.publishedHash)
        line.field("purgedDeletion", entry.purgedDeletion)
        line.field("refId", entry.refId)
        line.field("replica", entry.replica)
        line.field("time", entry.time)
        return String(decoding: line.finish(), as: UTF8.self)
    }

    struct ReplicaRecord: Codable {
        var replicaId: String
        var name: String
        var seen: String
        var time: Int64
        /// Absent in records written before docsync kept it.
        var version: String? = nil
    }

    /// How stale a record may grow while its replica syncs without news: a no-op sync
    /// rewrites it only this often, so `docsync replicas` shows "last synced" to within
    /// this, and a no-op pull still writes nothing most of the time.
    static let replicaRecordRefreshMillis: Int64 = 3_600_000

    func replicaRecordPath(_ replicaId: String) -> String {
        meta + "/replicas/" + DocumentPath.fileName(forRefId: replicaId) + ".json"
    }

    private func writeReplicaRecord(_ replica: ReplicaInfo, seen cursor: String) throws {
        let path = replicaRecordPath(replica.replicaId)
        let now = FileSystem.currentTimeNanos / 1_000_000
        if let old = try? FileSystem.readFile(path),
            let record = try? JSONDecoder().decode(ReplicaRecord.self, from: Data(old)),
            record.seen == cursor, record.name == replica.name, record.version == replica.version,
            now - record.time < Self.replicaRecordRefreshMillis
        {
            return
        }
        let record = ReplicaRecord(
            replicaId: replica.replicaId, name: replica.name, seen: cursor, time: now, version: replica.version)
        try FileSystem.createDirectories(meta + "/replicas")
        try FileSystem.writeAtomically(path, Array(try Self.json(record).utf8) + [10])
    }

    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        _ = try identity()
        try writeReplicaRecord(replica, seen: cursor)
    }

    // MARK: History

    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        _ = try identity()
        let now = try position()
        let bytes = try readFeedFile(from: 0, epoch: now.epoch)
        guard bytes.count >= now.length else {
            throw RemoteError.damaged(url: displayURL, reason: "\(meta)/feed is shorter than its recorded length")
        }
        let parsed = ChecksummedLines.parse(bytes[0..<now.length])
        var versions: [RemoteVersionInfo] = []
        for line in parsed.lines {
            guard let e = try? JSONDecoder().decode(RemoteEntry.self, from: Data(line.payload.utf8)), e.refId == refId
            else { continue }
            versions.append(
                RemoteVersionInfo(
                    id: "@\(line.endOffset)", changesetId: e.changesetId, time: e.time, author: e.replica,
                    path: e.path, hash: e.hash, deleted: e.deleted))
        }
        return versions.reversed()
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        try FolderRemoteFiles.content(of: version, refId: refId, objects: objects, url: displayURL)
    }

    // MARK: Verify

    public func verify() -> [String] {
        var problems: [String] = []
        do {
            _ = try identity()
            let now = try position()
            let entries = try readFeed(from: 0, to: now.length, epoch: now.epoch)
            var latest: [String: RemoteEntry] = [:]
            for e in entries where e.conflict == nil && e.purgedDeletion != true { latest[e.refId] = e }
            var paths: [String: String] = [:]
            for e in latest.values.sorted(by: { $0.refId < $1.refId }) {
                if e.deleted {
                    if !FileSystem.exists(tombstonePath(e.refId)) {
                        problems.append("remote: tombstone for \(e.refId) is missing")
                    }
                    continue
                }
                if let path = e.path {
                    if let other = paths[path] {
                        problems.append("remote: \(path) is claimed by both \(other) and \(e.refId)")
                    }
                    paths[path] = e.refId
                }
                do { _ = try read(e) } catch { problems.append("remote: " + error.localizedDescription) }
                if let path = e.path, let hash = e.hash, let bytes = try? SafeTreeIO(root: root).readIfPresent(path),
                    ContentHash.of(bytes) != hash
                {
                    problems.append(
                        "remote: \(path) does not hold its latest version \(e.changesetId) (a push was interrupted, or the file was edited in the remote folder)"
                    )
                }
                // Why: a readable copy deleted from the remote folder (by hand, or a partial
                // copy of the share) went unnoticed; pulls still work from objects/.
                if let path = e.path, !FileSystem.exists(root + "/" + path) {
                    problems.append(
                        "remote: \(path) is missing from the remote folder (version \(e.changesetId) is still in .docsync/objects; the next push of that document writes it again)"
                    )
                }
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return problems
    }
}

extension RemoteChanges {
    /// The changes a folder remote's latest entries per key make (either layout): the
    /// document entries, the conflict records they share (with the losing bytes from
    /// `objects`), and with `snapshot` who deleted what gc purged.
    init(folding kept: [RemoteEntry], cursor: String, snapshot: Bool, warnings: [String], objects: ObjectStore) {
        var conflicts: [SharedConflict] = []
        var purgedDeleters: [String: String] = [:]
        var purgedDeletions: [String: RemoteEntry] = [:]
        for entry in kept where entry.purgedDeletion == true {
            let refId = String(entry.refId.dropFirst(RemoteEntry.purgedPrefix.count))
            purgedDeleters[refId] = entry.replica
            purgedDeletions[refId] = entry
        }
        for entry in kept {
            guard let record = entry.conflict else { continue }
            let bytes = entry.hash.flatMap { try? objects.get($0) }
            conflicts.append(SharedConflict(record: record, bytes: bytes))
        }
        self.init(
            entries: kept.filter { $0.conflict == nil && $0.purgedDeletion != true }, cursor: cursor,
            warnings: warnings, isSnapshot: snapshot, conflicts: conflicts,
            purgedDeleters: snapshot ? purgedDeleters : [:])
        if snapshot { self.purgedDeletions = purgedDeletions }
    }
}
