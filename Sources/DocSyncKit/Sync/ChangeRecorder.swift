import DocSyncJSON
import Foundation

/// Finds what changed in the working tree since the last record and turns it into
/// journal actions: new files get a refId, changed files a new changesetId (written into
/// the file without reformatting it), copies a fresh refId, moves keep theirs, missing
/// files become deletions. Files that are not valid documents (invalid JSON, or a new
/// version that fails its JSON Schema) are reported and skipped; a tracked document whose
/// file became invalid is not treated as deleted.
final class ChangeRecorder {
    struct Result {
        var actions: [JournalEntry] = []
        var problems: [DocumentProblem] = []
        var skipped: [TreeWalker.Skipped] = []
        /// Tracked paths whose documents could not be read this time: not deletions.
        var unreadablePaths: Set<String> = []
        /// Without `write`: the bytes of each new version by hash (nothing is stored, so
        /// a dry run's merge plan reads them from here).
        var unstoredContents: [String: [UInt8]] = [:]
    }

    /// What one file holds, from the stat cache or from reading it.
    struct FileInfo {
        var path: String
        var stat: FileStat
        var hash: String
        var refId: String?
        var changesetId: String?
        var bytes: [UInt8]?
        /// The file is its document's tracked version, at its tracked path: nothing to
        /// record, and it keeps its refId whatever other files carry it.
        var unchanged = false
    }

    let layout: TreeLayout
    let tracked: [String: DocVersion]
    let clock: HybridLogicalClock
    let objects: ObjectStore
    /// The schemas records must satisfy (nil: none are checked).
    let schemas: RecordSchemas?
    var index: StatCache
    /// Told how far the scan and the record have got (nil: nobody is watching).
    var progress: ProgressHandler?
    /// On first contact with a remote: the refId of the remote's document at each path.
    /// A new file without ids of its own at such a path takes that refId instead of a
    /// new one: it joins the document (the pull then finds the same content, or merges
    /// the two), so the same folder on two machines is not doubled.
    var joining: [String: String] = [:]
    /// With `joining`: documents whose refId docsync gave them (a file without ids) and
    /// that never reached a remote, with their pending actions. Such a document at a
    /// path in `joining` takes the remote document's refId after all (its own actions
    /// are superseded): stamped while the remote was out of reach, it would otherwise
    /// become a second document once it is reached.
    var rejoining: [String: [Int]] = [:]
    var unstoredContents: [String: [UInt8]] = [:]

    init(
        layout: TreeLayout, tracked: [String: DocVersion], index: StatCache, clock: HybridLogicalClock,
        objects: ObjectStore,
        schemas: RecordSchemas? = nil
    ) {
        self.layout = layout
        self.schemas = schemas
        self.tracked = tracked
        self.index = index
        self.clock = clock
        self.objects = objects
    }

    /// - Parameter write: false for `status` and `--dry-run`: nothing is stamped or
    ///   stored, and new ids in the result are placeholders.
    func detect(write: Bool) throws -> Result {
        var result = Result()
        let previousIndex = index
        let ignore = IgnoreRules.load(from: layout.ignoreFile)
        let walk = TreeWalker(root: layout.root, ignore: ignore).walk(removingStaleTemporaryFiles: write)
        result.skipped = walk.skipped

        var files: [FileInfo] = []
        files.reserveCapacity(walk.files.count)
        for (fileNumber, entry) in walk.files.enumerated() {
            progress?(.step(.scan, done: fileNumber, total: walk.files.count))
            if let cached = index[entry.path], cached.matches(entry.stat) {
                var info = FileInfo(
                    path: entry.path, stat: entry.stat, hash: cached.hash,
                    refId: cached.refId.isEmpty ? nil : cached.refId,
                    changesetId: cached.changesetId.isEmpty ? nil : cached.changesetId)
                // The one lookup of its document for most files on a no-op run, which the
                // loops below reuse instead of asking `tracked` again.
                let known = info.refId.flatMap { tracked[$0] }
                if let known, known.hash == info.hash {
                    info.unchanged = known.path == info.path
                    files.append(info)
                    continue
                }
                // Read by `status` or a dry run and not recorded since: checked now.
                if let bytes = try? FileSystem.readFile(layout.absolute(entry.path)),
                    let scanned = try? JSONScanner.scanDocument(bytes),
                    let problems = schemaProblems(entry.path, bytes, scanned)
                {
                    result.problems += problems
                    result.unreadablePaths.insert(entry.path)
                    index.remove(path: entry.path)
                    continue
                }
                files.append(info)
                continue
            }
            // A name no remote can hold (a newline or control character in it) is this
            // file's problem alone: reported like invalid JSON, everything else syncs.
            if let problem = DocumentPath.problem(entry.path) {
                result.problems.append(
                    DocumentProblem(
                        path: DocumentPath.printable(entry.path),
                        reason: "this file name cannot be synced (\(problem)); rename the file"))
                result.unreadablePaths.insert(entry.path)
                continue
            }
            let readAt = FileSystem.currentTimeNanos
            let bytes: [UInt8]
            do { bytes = try FileSystem.readFile(layout.absolute(entry.path)) } catch {
                result.problems.append(
                    DocumentProblem(path: entry.path, reason: "cannot read: \(error.localizedDescription)"))
                result.unreadablePaths.insert(entry.path)
                continue
            }
            let scanned: ScannedDocument
            do { scanned = try JSONScanner.scanDocument(bytes) } catch {
                result.problems.append(
                    DocumentProblem(path: entry.path, line: error.line, column: error.column, reason: error.reason))
                result.unreadablePaths.insert(entry.path)
                index.remove(path: entry.path)
                continue
            }
            // The scan is not kept: stamping scans the file again. Why: kept for every new
            // file until the record, the scans were a third of a first push's memory.
            var info = FileInfo(path: entry.path, stat: entry.stat, hash: ContentHash.of(bytes), bytes: bytes)
            if let member = scanned.member(named: "refId") {
                if let value = member.stringValue, RefID.isAcceptable(value) {
                    info.refId = value
                } else if member.kind != .string {
                    result.problems.append(DocumentProblem(path: entry.path, reason: "\"refId\" must be a string"))
                    result.unreadablePaths.insert(entry.path)
                    continue
                }
            }
            if let member = scanned.member(named: "changesetId"), member.kind == .string {
                info.changesetId = member.stringValue
            }
            // Content this tree has not recorded for its document: only such versions are
            // checked against a schema (one pulled or recorded before a schema changed is
            // not this replica's new edit, and holding it would hold the remote's next one).
            // One lookup of the document serves this and `unchanged` below.
            let known = info.refId.flatMap { tracked[$0] }
            let isNewVersion = known?.hash != info.hash
            // A new version that fails its schema is held like invalid JSON: reported,
            // never recorded or pushed, and what the remote sends for it waits aside.
            if isNewVersion, let problems = schemaProblems(entry.path, bytes, scanned) {
                result.problems += problems
                result.unreadablePaths.insert(entry.path)
                index.remove(path: entry.path)
                continue
            }
            index.record(
                path: entry.path, stat: entry.stat, hash: info.hash, refId: info.refId ?? "",
                changesetId: info.changesetId ?? "", readAtNanos: readAt)
            // Bytes the tree already recorded are not held: after a clone (every entry
            // racy) or a lost index, every file is read again, and few need recording
            // (a copy that does is read again then).
            if !isNewVersion { info.bytes = nil }
            info.unchanged = !isNewVersion && known?.path == info.path
            files.append(info)
        }
        // Entries of files that are gone. Why the count first: a no-op run then builds no
        // set of every path only to find nothing.
        if index.entries.count > files.count {
            index.retain(paths: Set(walk.files.map(\.path)))
        }
        progress?(.step(.scan, done: walk.files.count, total: walk.files.count))
        progress?(.finished(.scan))

        // Who keeps a refId that several files carry: the file at the tracked path, else
        // the file that was there before (same inode: moved, not copied), else the one
        // with the tracked content, else the first by path. The rest are copies.
        // Most refIds are carried by one file: only the shared ones get a list. A refId is
        // shared only if some file away from the document's tracked path carries it (a
        // new file, a copy, a move), so only those are collected; each is then joined by
        // the file at the tracked path if that one carries it too. Why: a no-op run then
        // builds no table of every file's refId only to find no copies.
        var awayCarriers: [String: [Int]] = [:]
        for i in files.indices where !files[i].unchanged {
            guard let r = files[i].refId, tracked[r]?.path != files[i].path else { continue }
            awayCarriers[r, default: []].append(i)
        }
        var sharedRefIds: [String: [Int]] = [:]
        for (r, away) in awayCarriers {
            var carriers = away
            if let home = tracked[r].flatMap({ fileIndex(of: $0.path, in: files) }), files[home].refId == r {
                carriers.append(home)
                carriers.sort()
            }
            if carriers.count > 1 { sharedRefIds[r] = carriers }
        }
        let unreadable = result.unreadablePaths
        func keeper(of ref: String, carrier: Int) -> Int? {
            // The common case, asked once per file: no file unreadable, no refId shared.
            if unreadable.isEmpty && sharedRefIds.isEmpty { return carrier }
            let t = tracked[ref]
            // The tracked file is still there but not a valid document right now: it keeps
            // the identity (it is not deleted either), and every other file carrying the
            // refId is a copy. Why: a copy made just before the original was saved half-way
            // took the identity, as a rename, and the original was deleted everywhere.
            if let t, unreadable.contains(t.path) { return nil }
            guard let idxs = sharedRefIds[ref] else { return carrier }
            let oldInode = t.flatMap { previousIndex[$0.path]?.inode }
            return idxs.first { files[$0].path == t?.path } ?? idxs.first { files[$0].stat.inode == oldInode }
                ?? idxs.first { files[$0].hash == t?.hash } ?? idxs[0]
        }

        /// Files that kept a tracked refId (one per refId: a refId has one keeper). Fewer
        /// than the tracked documents: some were deleted, found below.
        var claimedCount = 0
        var keepers: [Bool] = []
        if !joining.isEmpty { carriedRefIds = Set(files.compactMap(\.refId)) }
        keepers.reserveCapacity(files.count)
        for i in files.indices {
            progress?(.step(.record, done: i, total: files.count))
            if !rejoining.isEmpty, let own = files[i].refId, rejoining[own] != nil,
                let joined = joinedRefId(own: own, path: files[i].path)
            {
                keepers.append(false)
                if let action = try record(
                    files[i], refId: joined, newRefId: true, kind: .create, fromPath: nil, write: write,
                    problems: &result.problems)
                {
                    result.actions.append(action)
                    rejoined[own] = rejoining[own]
                }
                continue
            }
            // A file at its tracked path keeps its refId (the keeper rule's first choice),
            // and the same content there is nothing to record.
            if files[i].unchanged {
                keepers.append(true)
                claimedCount += 1
                continue
            }
            let f = files[i]
            let isKeeper = f.refId.map { keeper(of: $0, carrier: i) == i } ?? false
            keepers.append(isKeeper)
            if isKeeper, let ref = f.refId, let t = tracked[ref] {
                claimedCount += 1
                if f.hash == t.hash {
                    if f.path != t.path {
                        var rename = JournalEntry(
                            .local(
                                .rename,
                                version: DocVersion(refId: ref, changesetId: t.changesetId, hash: t.hash, path: f.path),
                                fromPath: t.path))
                        rename.movedAt = Self.movedAt(f.stat)
                        result.actions.append(rename)
                    }
                    continue
                }
                if var action = try record(
                    f, refId: ref, newRefId: false, kind: .update, fromPath: t.path == f.path ? nil : t.path,
                    write: write, problems: &result.problems)
                {
                    if t.path != f.path { action.movedAt = Self.movedAt(f.stat) }
                    result.actions.append(action)
                }
            } else if isKeeper, let ref = f.refId {
                if let action = try record(
                    f, refId: ref, newRefId: false, kind: .create, fromPath: nil, write: write,
                    problems: &result.problems)
                {
                    result.actions.append(action)
                }
            } else {
                // Without `write` a placeholder, one per file (plans key documents by refId).
                let joined = f.refId == nil ? joinedRefId(own: nil, path: f.path) : nil
                let ref = joined ?? (write ? RefID.generate() : "(new) " + f.path)
                if var action = try record(
                    f, refId: ref, newRefId: true, kind: .create, fromPath: nil, write: write,
                    problems: &result.problems)
                {
                    if f.refId == nil && joined == nil { action.mintedId = true }
                    result.actions.append(action)
                }
            }
        }

        var unclaimed: [(key: String, value: DocVersion)] = []
        if claimedCount != tracked.count {
            let claimed = Set(files.indices.compactMap { keepers[$0] ? files[$0].refId : nil })
            unclaimed = tracked.filter { !claimed.contains($0.key) }.sorted { $0.value.path < $1.value.path }
        }
        for (ref, t) in unclaimed {
            if result.unreadablePaths.contains(t.path) || ignore.isIgnored(t.path, isDirectory: false) { continue }
            // It joined the remote's document: what it recorded under its own refId is
            // superseded, not deleted (it never reached any remote).
            if let seqs = rejoined[ref] {
                result.actions.append(JournalEntry(.done(refId: ref, seqs: seqs, reason: .superseded)))
                continue
            }
            result.actions.append(JournalEntry(.local(.delete, version: t, fromPath: nil)))
        }
        progress?(.step(.record, done: files.count, total: files.count))
        progress?(.finished(.record))
        result.unstoredContents = unstoredContents
        return result
    }

    /// Every refId a file of this scan carries (filled only when there is a remote to join).
    var carriedRefIds: Set<String> = []
    /// The `rejoining` documents that did join, with their superseded actions.
    var rejoined: [String: [Int]] = [:]
}
