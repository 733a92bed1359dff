import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to a drive remote: objects, the view, then the commit file (the commit point).
extension DriveFolderRemote {
    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursorText: String?, replica: ReplicaInfo
    ) throws -> String {
        let format = try format()
        let (expected, _) = try parseCursor(cursorText, format: format)
        guard DriveLayout.isPlainName(replica.replicaId) else {
            throw RemoteError.rejected(
                url: displayURL, reason: "replica id \(replica.replicaId.debugDescription) cannot name a folder")
        }
        let lock = try DriveLocalLock.acquire(
            layout.localLock, waitSeconds: lockWaitSeconds, url: displayURL, files: layout.files)
        defer { lock.release() }
        removeFormat1Leftovers()
        removeStaleTemporaryFiles(replica: replica.replicaId)
        let files = DriveCommitFiles(layout: layout)
        let now = try scan(from: expected, format: format, files: files)
        // Compare and swap against everything that has arrived here: a push never lands
        // on a state it has not read. (A push on another machine that has not arrived
        // yet is a fork; the reader that sees both resolves it, see DriveHistory.)
        guard now.tip?.commit == expected?.tip, now.seen == expected?.seen ?? [:] else { throw RemoteError.moved }
        try refuseOverwritingSkipped(writes)
        let seq = try nextSeq(replica.replicaId, after: expected?.seen[replica.replicaId] ?? 0)
        let time = FileSystem.currentTimeNanos / 1_000_000
        try FolderRemoteFiles.storeObjects(of: writes, conflicts: conflicts, in: objects)
        let header = DriveCommit.Header(
            commit: DriveCommit.makeId(replica: replica.replicaId, seq: seq), replica: replica.replicaId, seq: seq,
            parent: expected?.tip, height: (expected?.height ?? 0) + 1, time: time,
            entries: writes.count + conflicts.count)
        let sentAgain = earlierParents(of: writes, replica: replica.replicaId, files: files)
        // The view before the commit: a push killed after its commit leaves a view that
        // matches it, and one killed before is pushed again by the retry, which writes the
        // same view. What it wrote is noted first: a document that moved again before the
        // retry leaves an uncommitted copy at the old path, which the retry removes.
        removeUncommittedView(replica: replica.replicaId, keeping: writes)
        noteViewIntent(replica: replica.replicaId, seq: seq, writes)
        try writeView(writes)
        try CrashPoint.hit("remote.after-documents")
        // Nothing is committed past a path refused on the way (one met by a lookup too).
        try layout.files.checkPerimeter()
        let committed = try writeCommit(header: header) { write in
            try encodeCommitLines(
                writes, conflicts: conflicts, replica: replica.replicaId, time: time, sentAgain: sentAgain, to: write)
        }
        try CrashPoint.hit("remote.after-feed")
        try? layout.files.removeFile(layout.viewIntent(replica.replicaId))
        forgetSkipped(writes)
        var next = DriveCursor(
            remoteId: format.remoteId, tip: committed.commit, height: committed.height, seen: expected?.seen ?? [:])
        if (next.seen[replica.replicaId] ?? 0) == seq - 1 { next.seen[replica.replicaId] = seq }
        try? writeInfo(replica, seen: next.text)
        return next.text
    }

    /// Deletes the temporary files a dead push left in the metadata: a pack it was
    /// writing (see `ObjectPacks`), a commit file or record it was writing.
    func removeStaleTemporaryFiles(replica: String) {
        var folders = [layout.meta, layout.objects + "/packs"]
        if DriveLayout.isPlainName(replica) { folders += [layout.replicaFolder(replica), layout.commits(replica)] }
        for folder in folders { layout.files.removeStaleTemporaryFiles(in: folder) }
    }

    /// The versions a write sent again was published as before (see `RemoteWrite.sentAgain`),
    /// by refId and changesetId: their parents go into its line too. Read before the view
    /// is written, as everything that can fail is.
    private func earlierParents(of writes: [RemoteWrite], replica: String, files: DriveCommitFiles) -> [String:
        [String]]
    {
        let sentAgain = Set(
            writes.compactMap { w in w.sentAgain ? w.new.map { w.refId + "\u{0}" + $0.changesetId } : nil })
        return sentAgain.isEmpty ? [:] : parentsOfVersions(sentAgain, replica: replica, files: files)
    }

    /// A commit's entry lines, encoded as they are made and handed to `write` a megabyte at
    /// a time. Why not built whole first: a first push of 100,000 documents held 42 MB of
    /// lines (grown by doubling) through the whole view write.
    private func encodeCommitLines(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], replica: String, time: Int64,
        sentAgain earlier: [String: [String]], to write: ([UInt8]) throws -> Void
    ) throws {
        try ChecksummedLines.write(to: write) { add in
            for write in writes {
                var entry: FeedLine
                if let new = write.new {
                    entry = .version(new, of: write, replica: replica, time: time)
                    entry.parents = write.parents
                    if write.sentAgain {
                        for id in earlier[write.refId + "\u{0}" + new.changesetId] ?? []
                        where id != new.changesetId && !write.parents.contains(id) {
                            entry.parents?.append(id)
                        }
                    }
                } else {
                    entry = .deletion(by: write, replica: replica, time: time)
                    entry.parents = write.parents
                }
                try add(try entry.encodedLine())
            }
            for shared in conflicts {
                try add(try FeedLine.sharing(shared, replica: replica, time: time).encodedLine())
            }
        }
    }

    /// One past the highest number among this replica's commit files here (or the one
    /// its cursor saw, if higher: its own files went back, and a number must not repeat
    /// for another commit on a machine that still has the old file).
    func nextSeq(_ replica: String, after seen: Int) throws -> Int {
        let names = (try? layout.files.listDirectory(layout.commits(replica))) ?? []
        return max(seen, names.compactMap { DriveLayout.commitName($0)?.seq }.max() ?? 0) + 1
    }

    /// Writes a commit file: objects are already in place and flushed, so the file is
    /// the commit point. Temporary name and rename, so a sync service never copies it
    /// half-written (and if one did, the reader would see a torn file and wait).
    @discardableResult
    func writeCommit(_ commit: DriveCommit) throws -> DriveCommit.Header {
        try writeCommit(header: commit.header, lines: try commit.encodedEntries())
    }

    /// Writes a commit file from its header and its entries' encoded lines.
    @discardableResult
    func writeCommit(header: DriveCommit.Header, lines: [UInt8]) throws -> DriveCommit.Header {
        try writeCommit(header: header) { write in try write(lines) }
    }

    /// Writes a commit file from its header and the entry lines `lines` hands to the
    /// `write` it is given, in order.
    @discardableResult
    func writeCommit(
        header: DriveCommit.Header, lines: (_ write: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> DriveCommit.Header {
        layout.files.syncFilesystem()
        try layout.files.createDirectories(layout.commits(header.replica))
        let path = layout.commitFile(header.replica, seq: header.seq)
        // Never over another commit: a file under this number that this machine has not
        // read (it arrived meanwhile) keeps its name.
        guard !layout.files.exists(path) else { throw RemoteError.moved }
        let first = Array(ChecksummedLines.encode(try LineEncoding.json(header)).utf8)
        try layout.files.writeAtomically(path) { fd in
            try FileSystem.writeAll(fd, first, path: path)
            try lines { try FileSystem.writeAll(fd, $0, path: path) }
        }
        return header
    }

    /// The readable copies at the documents' paths: a view for people, never read back. A file there that is not a version docsync has is kept under
    /// `.docsync/displaced/` before it is replaced or removed, and a sync service's
    /// conflict copy of a document is removed once its bytes are a version in objects/.
    /// A copy that cannot be written is left (the view may lag), but one whose path goes
    /// through a symlink (or a file where a folder belongs) stops the push before its
    /// commit, naming it: nothing is written through it. Why: such a copy was skipped in
    /// silence (exit 0), and a symlinked folder of the view went unnoticed.
    func writeView(_ writes: [RemoteWrite]) throws {
        let io = SafeTreeIO(perimeter: layout.files)
        var folders = Set<String>()
        var refused: SafeTreeIO.Refused?
        func attempt(_ body: () throws -> Void) {
            do { try body() } catch let error as SafeTreeIO.Refused { refused = refused ?? error } catch {}
        }
        for write in writes {
            guard let previous = write.previous, write.new?.path != previous.path else { continue }
            folders.insert((previous.path as NSString).deletingLastPathComponent)
            attempt {
                guard let bytes = try io.readIfPresent(previous.path) else { return }
                if !objects.contains(ContentHash.of(bytes)) { try? keepDisplaced(bytes, refId: previous.refId) }
                try io.remove(previous.path)
            }
        }
        for (done, write) in writes.enumerated() {
            defer { writeProgress?(write, done + 1, writes.count) }
            guard let new = write.new, let content = try? write.content() else { continue }
            folders.insert((new.path as NSString).deletingLastPathComponent)
            attempt {
                if let existing = try io.readIfPresent(new.path), !objects.contains(ContentHash.of(existing)) {
                    try? keepDisplaced(existing, refId: write.refId)
                }
                try io.write(new.path, content, durable: false)
            }
        }
        if let refused { throw RemoteError.unsafe(url: displayURL, reason: refused.description) }
        for folder in folders.sorted() { tidyView(folder, io: io) }
    }

    /// Notes the view copies this push is about to write (path and hash), in this
    /// replica's own folder, after a first line naming the commit they precede
    /// (`commit\t<seq>`).
    func noteViewIntent(replica: String, seq: Int, _ writes: [RemoteWrite]) {
        guard writes.contains(where: { $0.new != nil }), DriveLayout.isPlainName(replica) else { return }
        // Bytes as they are made: a first push's 100,000 lines as strings, joined and
        // copied, were 50 MB at the push's peak.
        var note = Array("commit\t\(seq)\n".utf8)
        note.reserveCapacity(writes.count * 100)
        for new in writes.lazy.compactMap(\.new) {
            note += new.hash.utf8
            note.append(9)
            note += new.path.utf8
            note.append(10)
        }
        try? layout.files.createDirectories(layout.replicaFolder(replica))
        try? layout.files.writeAtomically(layout.viewIntent(replica), note, durable: false)
    }

    /// The view copies an earlier push of this replica wrote and never committed (it was
    /// killed between the two), still as it wrote them, at a path this push does not
    /// write: removed (their bytes are in objects/). Why: the document moved before the
    /// retry, and its old copy would stay in the view for good. A push killed after its
    /// commit, before it removed the note, wrote copies that are the view: they stay
    /// (removed, the view lost documents nobody pushed again; random kills, folder seed
    /// 907551208). A note without its commit line (older docsync) is read as uncommitted.
    func removeUncommittedView(replica: String, keeping writes: [RemoteWrite]) {
        guard DriveLayout.isPlainName(replica), let bytes = try? layout.files.readFile(layout.viewIntent(replica))
        else {
            return
        }
        var lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        if let first = lines.first, first.hasPrefix("commit\t") {
            lines.removeFirst()
            if let seq = Int(first.dropFirst("commit\t".count)),
                layout.files.exists(layout.commitFile(replica, seq: seq))
            {
                return
            }
        }
        let written = Set(writes.compactMap { $0.new?.path })
        let io = SafeTreeIO(perimeter: layout.files)
        for line in lines {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            guard parts.count == 2, !written.contains(parts[1]), let there = try? io.readIfPresent(parts[1]),
                ContentHash.of(there) == parts[0], objects.contains(parts[0])
            else { continue }
            try? io.remove(parts[1])
        }
    }

    func tidyView(_ folder: String, io: SafeTreeIO) {
        guard let (absolute, names) = FolderRemoteFiles.documentFolder(folder, files: layout.files) else { return }
        for name in names {
            if name.hasPrefix(TemporaryName.prefix) {
                // Only a leftover: on a shared mount another machine's push may be writing it.
                let path = absolute + "/" + name
                if let st = try? layout.files.unrecorded.linkStatus(path), !st.isDirectory,
                    FileSystem.isStaleTemporary(name, modified: st.mtimeNanos)
                {
                    try? layout.files.unrecorded.removeFile(path)
                }
                continue
            }
            guard SyncServiceConflictName.original(of: name) != nil, name.hasSuffix(".json") else { continue }
            let relative = folder.isEmpty ? name : folder + "/" + name
            if let bytes = try? io.readIfPresent(relative), objects.contains(ContentHash.of(bytes)) {
                try? io.remove(relative)
            }
        }
    }

    func keepDisplaced(_ bytes: [UInt8], refId: String) throws {
        try FolderRemoteFiles.keepDisplaced(bytes, refId: refId, meta: layout.meta, files: layout.files)
    }
}

extension DriveFolderRemote {
    /// Reads this replica's commit files newest first, down to the first made before
    /// `time`: that one (usually the last push, which can hold a whole first push) only for
    /// its header line, the ones after it whole.
    public func ownCommitsHold(_ candidates: [String: Set<String>], since time: Int64) -> [String: Set<String>] {
        guard let me = localReplica, DriveLayout.isPlainName(me), !candidates.isEmpty else { return [:] }
        let files = DriveCommitFiles(layout: layout)
        let seqs = ((try? layout.files.listDirectory(layout.commits(me))) ?? []).compactMap { name in
            DriveLayout.commitName(name).flatMap { $0.canonical ? $0.seq : nil }
        }
        var out: [String: Set<String>] = [:]
        for seq in seqs.sorted(by: >) {
            let path = layout.commitFile(me, seq: seq)
            guard let header = layout.files.readPrefix(path).flatMap({ DriveCommit.decodeHeader($0[...]) }),
                header.replica == me
            else { continue }
            if header.time < time { break }
            guard let commit = files.load(path) else { continue }
            for entry in commit.entries where candidates[entry.refId]?.contains(entry.changesetId) == true {
                out[entry.refId, default: []].insert(entry.changesetId)
            }
        }
        return out
    }

    /// The parents the versions `wanted` (refId, NUL, changesetId) were named with where
    /// they were pushed before (see `RemoteWrite.sentAgain`): in `replica`'s own commit
    /// files first (always in its own copy: it wrote them), then in those of each
    /// version's maker (a changesetId names it), then anywhere.
    func parentsOfVersions(_ wanted: Set<String>, replica: String, files: DriveCommitFiles) -> [String: [String]] {
        var out: [String: [String]] = [:]
        var found = Set<String>()
        let makers = wanted.compactMap {
            $0.split(separator: "\u{0}").last.flatMap { ChangesetID(String($0))?.replica }
        }
        let everyone = ((try? layout.files.listDirectory(layout.replicas)) ?? []).filter(DriveLayout.isPlainName)
            .sorted()
        var searched = Set<String>()
        for folder in [replica] + makers.sorted() + everyone where searched.insert(folder).inserted {
            guard found.count < wanted.count, DriveLayout.isPlainName(folder) else { continue }
            for name in ((try? layout.files.listDirectory(layout.commits(folder))) ?? []).sorted()
            where DriveLayout.commitName(name)?.canonical == true {
                guard let commit = files.load(layout.commits(folder) + "/" + name), commit.header.checkpoint != true
                else { continue }
                for entry in commit.entries where entry.conflict == nil && !entry.deleted {
                    let key = entry.refId + "\u{0}" + entry.changesetId
                    guard wanted.contains(key), let parents = entry.parents else { continue }
                    found.insert(key)
                    for id in parents where !(out[key] ?? []).contains(id) { out[key, default: []].append(id) }
                }
            }
        }
        return out
    }
}
