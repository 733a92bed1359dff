import DocSyncJSON
import Foundation

/// Reading a format-1 folder remote: its feed from a cursor, and one version's bytes.
extension DirectoryRemote {
    // MARK: Reading

    /// The remote's id. Its absence means the folder is missing or not mounted, which
    /// must read as "unreachable", never as "empty".
    func identity() throws -> String {
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.missingFolder(root, url: displayURL)
        }
        // Before anything is read: a symlink among the remote's own folders stops the run.
        try files.checkSkeleton()
        let bytes: [UInt8]
        do { bytes = try files.readFile(meta + "/format") } catch {
            try files.checkPerimeter()
            throw RemoteError.unreadableFormat(meta + "/format", error, url: displayURL)
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
        guard let bytes = try? files.readFile(meta + "/generation") else {
            try files.checkPerimeter()
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

    enum FeedGone: Error { case gone }

    func changesOnce(since cursorText: String?) throws -> RemoteChanges {
        let id = try identity()
        let from = try parseCursor(cursorText, remoteId: id)
        let now = try position()
        if let from, from.position.generation == now.generation, from.position.length == now.length {
            return RemoteChanges(entries: [], cursor: from.text)
        }
        guard files.exists(feedPath(epoch: now.epoch)) || now.epoch == 0 else { throw FeedGone.gone }
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
        let changes = RemoteChanges(
            folding: kept, cursor: Cursor(remoteId: id, position: now).text, snapshot: snapshot, warnings: refused,
            objects: objects)
        try files.checkPerimeter()
        return changes
    }

    /// The feed's entries. One whose path or refId is unsafe is passed to `refuse` and
    /// left out, or without `refuse` makes the whole read fail.
    func readFeed(from start: Int, to end: Int, epoch: Int, refuse: ((String) -> Void)? = nil) throws -> [FeedLine] {
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
        -> [FeedLine]
    {
        let decoder = JSONDecoder()
        return try lines.compactMap { line in
            guard let entry = try? decoder.decode(FeedLine.self, from: Data(line.payload.utf8)) else {
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
    static func problem(of entry: FeedLine) -> String? {
        if let record = entry.conflict {
            // A shared conflict record: its ids go into this tree's conflict store.
            if RefID.isAcceptable(record.refId), RefID.isAcceptable(record.changesetId),
                entry.refId == FeedLine.conflictKey(record)
            {
                return nil
            }
            return "conflict record for \(record.refId.debugDescription): not acceptable ids"
        } else if entry.purgedDeletion == true {
            let refId = String(entry.refId.dropFirst(FeedLine.purgedPrefix.count))
            if entry.refId.hasPrefix(FeedLine.purgedPrefix), RefID.isAcceptable(refId),
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
        guard files.exists(path) else {
            try files.checkPerimeter()
            throw RemoteError.damaged(
                url: displayURL, reason: "\(path) is missing: the remote is damaged or was only partly copied")
        }
        return try files.readFile(path, from: start)
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        guard let path = entry.path, let hash = entry.hash else {
            throw RemoteError.damaged(url: displayURL, reason: "entry for \(entry.refId) has no content")
        }
        // Sizes first: a version larger than remote.maxDocumentBytes is never read whole.
        if let size = objects.size(of: hash), size > ceiling.maxBytes {
            throw RemoteError.damaged(url: displayURL, reason: ceiling.tooLarge(path, size: size, url: displayURL))
        }
        let copySize = (try? FileSystem.linkStatus(root + "/" + path))?.size ?? 0
        // The readable copy at the document's path is tried first; if a push is under
        // way (or died) it may hold a newer, uncommitted version, so the immutable copy
        // in objects/ is the fallback.
        do {
            if copySize <= ceiling.maxBytes, let bytes = try SafeTreeIO(perimeter: files).readIfPresent(path),
                ContentHash.of(bytes) == hash
            {
                return bytes
            }
        } catch let error as SafeTreeIO.Refused {
            // Why: a readable copy replaced by a symlink (or under a symlinked folder)
            // refused the whole pull; the copy is only a convenience, objects/ is the truth.
            if let bytes = try? objects.get(hash) { return bytes }
            throw RemoteError.unsafe(url: displayURL, reason: error.description)
        }
        if let bytes = try? objects.get(hash) { return bytes }
        try files.checkPerimeter()
        if !FileSystem.isDirectory(root) {
            throw RemoteError.unreachable(url: displayURL, reason: "folder disappeared")
        }
        throw RemoteError.damaged(
            url: displayURL, reason: "version \(entry.changesetId) of \(path) is missing from the remote")
    }
}
