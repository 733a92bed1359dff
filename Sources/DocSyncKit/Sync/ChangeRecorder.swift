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
        /// Tracked documents whose files the walk could not look at: not deletions.
        var unknown: [UnknownDocument] = []
        /// Every entry the walk did not enter (see `TreeWalker.Walk.unentered`): a pull
        /// writes nothing at or below one.
        var unentered = TreeWalker.Walk(files: [], skipped: [], unentered: [])
        /// Tracked paths whose documents could not be read this time: not deletions.
        var unreadablePaths: Set<String> = []
        /// Files outside a sparse replica's selection that hold no document it tracks:
        /// not recorded, not synced (see `SparseSelection`).
        var outsideSelection: [String] = []
        /// Without `write`: the bytes of each new version by hash (nothing is stored, so
        /// a dry run's merge plan reads them from here).
        var unstoredContents: [String: [UInt8]] = [:]
        /// Files the walk listed that were gone when read (see `FileScan.vanished`).
        var vanishedWhileScanning = 0
        /// Files left unstamped because the user saved, moved or deleted them between
        /// their read and their stamp: their change is not in `actions`.
        var changedWhileStamping = 0
        /// Saves made twice within one stamp's replacement: the earlier one, kept beside
        /// its document (see `FileSystem.Replacement.keptAside`).
        var keptAside: [String] = []

        /// Empty but for what `walk` passed over and did not enter.
        init(of walk: TreeWalker.Walk) {
            skipped = walk.skipped
            unentered = TreeWalker.Walk(files: [], skipped: [], unentered: walk.unentered)
        }
    }

    /// What one file holds, from the stat cache or from reading it.
    struct FileInfo {
        var path: String
        var stat: FileStat
        /// Empty for a file the index flags synced (`unchanged`, made by `init(path:stat:
        /// synced:)`): its hash is its tracked version's, and nothing asks for it.
        var hash: String
        var refId: String?
        var changesetId: String?
        var bytes: [UInt8]?
        /// The file is its document's tracked version, at its tracked path: nothing to
        /// record, and it keeps its refId whatever other files carry it.
        var unchanged = false
    }

    let layout: TreeLayout
    /// The recorded version of each document (asked for only when the scan needs it: see
    /// `unchangedTree`).
    private(set) lazy var tracked: VersionTable = trackedVersions()
    private let trackedVersions: () -> VersionTable
    /// When set, a walk it holds for is a tree in which nothing changed: the scan stops
    /// there, and `tracked` is never made.
    var unchangedTree: UnchangedTree?
    /// Reads the state's base file where the scan first needs it (see `SyncState.readBase`):
    /// not when the index vouches for every file.
    var readBase: () throws -> Void = {}
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
    /// A sparse replica's selection (nil: the replica keeps everything).
    var selection: SparseSelection?
    /// The new versions' bytes the scan holds for the record (stamping scans them again),
    /// up to `heldBytesBudget`; past it a file is read again when it is recorded. Why: a
    /// first push of 100,000 documents held all of them, 54 MB, through the whole scan.
    var heldBytes = 0
    static let heldBytesBudget = 16 << 20
    /// How many times `detect` walks again when the tree changed under its walk.
    static let rewalksWhileTheTreeChanges = 3
    /// How many times one recording is made again after files changed under its stamps
    /// (see `WorkspaceService.recordLocalChanges`).
    static let recordingsWhileFilesChange = 3

    init(
        layout: TreeLayout, trackedVersions: @escaping () -> VersionTable, index: StatCache,
        clock: HybridLogicalClock, objects: ObjectStore, schemas: RecordSchemas? = nil
    ) {
        self.layout = layout
        self.schemas = schemas
        self.trackedVersions = trackedVersions
        self.index = index
        self.clock = clock
        self.objects = objects
    }

    /// - Parameter write: false for `status` and `--dry-run`: nothing is stamped or
    ///   stored, and new ids in the result are placeholders.
    func detect(write: Bool) throws -> Result {
        let previousIndex = index
        let ignore = IgnoreRules.load(from: layout.ignoreFile)
        var walk = TreeWalker(root: layout.root, ignore: ignore).walk(removingStaleTemporaryFiles: write)
        var result = Result(of: walk)
        if let unchangedTree, unchangedTree.holds(walk.files, index: index) {
            progress?(.finished(.scan))
            progress?(.finished(.record))
            return result
        }
        try CrashPoint.hit("record.after-walk")
        try readBase()
        var files = scanFiles(walk.files, into: &result)
        // Files saved, renamed or deleted while the run walked and read the tree (the user
        // at work during a sync): a file gone before it was read, or a folder changed
        // since it was listed. The walk no longer says what is here: a file moved into a
        // folder already listed would be missed, its document taken for deleted. Walk
        // again, a few times; a file still vanishing then is unknown, never deleted.
        var rewalks = 0
        while rewalks < Self.rewalksWhileTheTreeChanges,
            result.vanishedWhileScanning > 0 || walk.changedSinceListed(root: layout.root)
        {
            rewalks += 1
            walk = TreeWalker(root: layout.root, ignore: ignore).walk(removingStaleTemporaryFiles: false)
            result = Result(of: walk)
            vanishedPaths = []
            files = scanFiles(walk.files, into: &result)
        }
        if let selection {
            leaveOutUnselected(&files, selection, previousIndex: previousIndex, into: &result)
            // What the index holds outside the selection says which files a recording left
            // out (see `leaveOutUnselected`); a run that records nothing (`status`, a dry
            // run) leaves that as it was. Why: `status` after a document was moved out kept
            // its new path in the index, and the next sync took the file for one left out
            // before and pushed the document's deletion.
            if !write {
                for entry in walk.files where !selection.contains(entry.path) {
                    index.restore(path: entry.path, from: previousIndex)
                }
            }
        }
        regenerated = regeneratedDocuments(files, previousIndex: previousIndex)
        // A regenerated file keeps its document's identity as an unreadable one does: any
        // other file carrying the refId is a copy.
        var keepers = RefIdKeepers(
            files: files, tracked: tracked, previousIndex: previousIndex,
            unreadable: regenerated.isEmpty ? result.unreadablePaths : result.unreadablePaths.union(regenerated.keys))
        if !walk.unentered.isEmpty {
            keepers.unknownTracked = trackedPathsNotLookedAt(files, walk: walk, ignore: ignore)
        }
        let recorded = try recordFiles(files, keepers: keepers, write: write, into: &result)
        // Why the count first: a no-op run then builds no set of every refId.
        if recorded.claimedCount != tracked.count {
            let claimed = Set(files.indices.compactMap { recorded.isKeeper[$0] ? files[$0].refId : nil })
                .union(regenerated.values)
            let unclaimed = unclaimedDocuments(
                claimed: claimed, count: tracked.count - recorded.claimedCount, previousIndex: previousIndex)
            recordDeletions(of: unclaimed, walk: walk, ignore: ignore, into: &result)
        }
        progress?(.step(.record, done: files.count, total: files.count))
        progress?(.finished(.record))
        result.unstoredContents = unstoredContents
        result.changedWhileStamping = changedWhileStamping
        result.keptAside = keptAside
        return result
    }

    /// The tracked documents no file keeps (`count` of them), by path: looked for among
    /// the files the index had and the walk did not find, else among every tracked
    /// document. Why first there: a deleted file leaves its entry behind, and going
    /// through all 100,000 documents of a tree (parsing the base whole) was a tenth of a
    /// push that deleted a hundred.
    private func unclaimedDocuments(claimed: Set<String>, count: Int, previousIndex: StatCache) -> [(
        key: String, value: DocVersion
    )] {
        var found: [String: DocVersion] = [:]
        for path in vanishedPaths {
            guard let refId = previousIndex[path]?.refId, !refId.isEmpty, !claimed.contains(refId),
                let version = tracked[refId]
            else { continue }
            found[refId] = version
        }
        let unclaimed = found.count == count ? found : tracked.all.filter { !claimed.contains($0.key) }
        return unclaimed.sorted { $0.value.path < $1.value.path }
    }

    /// A sparse replica's files outside its selection that hold no document it tracks
    /// (new files, copies, problems) are left out: neither recorded nor reported. One it
    /// tracks is recorded as anywhere else (moved out of the selection, it is a rename).
    /// A copy of a tracked document made outside the selection (the document's own file
    /// still at its path) is a new file there, left out too, and stays left out (the index
    /// had it, with that refId) when the document's own file moves or goes later: only a
    /// file new at its path can be the document moved out.
    private func leaveOutUnselected(
        _ files: inout [FileInfo], _ selection: SparseSelection, previousIndex: StatCache, into result: inout Result
    ) {
        let outside = files.indices.filter { !selection.contains(files[$0].path) }
        var carried = Set<String>()
        // Files without ids: one at a tracked path is that document's own file, rewritten
        // (`regeneratedDocuments`), so a file carrying its refId elsewhere is a copy.
        var idless = Set<String>()
        if !outside.isEmpty {
            for file in files {
                if let refId = file.refId {
                    carried.insert(file.path + "\u{0}" + refId)
                } else {
                    idless.insert(file.path)
                }
            }
        }
        var dropped = Set<Int>()
        for i in outside {
            let file = files[i]
            if let refId = file.refId, let known = tracked[refId] {
                // Its own file, edited or moved out: recorded (a move out is a rename).
                let ownFileElsewhere =
                    carried.contains(known.path + "\u{0}" + refId) || result.unreadablePaths.contains(known.path)
                    || idless.contains(known.path)
                let leftOutBefore = previousIndex[file.path]?.refId == refId
                if known.path == file.path || (!ownFileElsewhere && !leftOutBefore) { continue }
            }
            dropped.insert(i)
            result.outsideSelection.append(file.path)
        }
        if !dropped.isEmpty { files = files.indices.filter { !dropped.contains($0) }.map { files[$0] } }
        let unselectedProblems = result.problems.filter { !selection.contains($0.path) }
        guard !unselectedProblems.isEmpty else { return }
        let trackedPaths = Set(tracked.all.values.map(\.path))
        for problem in unselectedProblems where !trackedPaths.contains(problem.path) {
            result.outsideSelection.append(problem.path)
            result.unreadablePaths.remove(problem.path)
        }
        let leftOut = Set(result.outsideSelection)
        result.problems.removeAll { leftOut.contains($0.path) }
    }

    /// Files without ids at a tracked path, with that document's refId: a regenerated
    /// file (an export, a template, a script that rewrites it) is a new version of the
    /// document, not a new document (SPEC, "The working tree"; git and every file-sync
    /// tool see it so), even when another file carries the refId (that one is a copy).
    private func regeneratedDocuments(_ files: [FileInfo], previousIndex: StatCache) -> [String: String] {
        let idless = files.filter { $0.refId == nil }
        guard !idless.isEmpty, tracked.count > 0 else { return [:] }
        lazy var byPath = Dictionary(tracked.all.map { ($0.value.path, $0.key) }, uniquingKeysWith: { a, _ in a })
        var found: [String: String] = [:]
        for file in idless {
            let indexed = previousIndex[file.path]?.refId
            guard let refId = indexed.flatMap({ $0.isEmpty ? nil : $0 }) ?? byPath[file.path],
                tracked[refId]?.path == file.path
            else { continue }
            found[file.path] = refId
        }
        return found
    }

    /// The tracked paths, under something the walk did not enter, of documents a file
    /// elsewhere carries (a move out, or a copy: see `RefIdKeepers.unknownTracked`).
    private func trackedPathsNotLookedAt(_ files: [FileInfo], walk: TreeWalker.Walk, ignore: IgnoreRules) -> Set<
        String
    > {
        var paths = Set<String>()
        for file in files where !file.unchanged {
            guard let refId = file.refId, let t = tracked[refId], t.path != file.path,
                UnknownDocument.reason(for: t.path, walk: walk, ignore: ignore) != nil
            else { continue }
            paths.insert(t.path)
        }
        return paths
    }

    /// See `regeneratedDocuments`: path to refId.
    var regenerated: [String: String] = [:]

    /// refId → the files carrying it that wait for its unknown tracked path
    /// (`RefIdKeepers.waits`): not recorded this run.
    var waiting: [String: [String]] = [:]

    /// Paths the index held that the walk did not find (their entries dropped).
    var vanishedPaths: [String] = []
    /// See `Result.changedWhileStamping`.
    var changedWhileStamping = 0
    /// See `Result.keptAside`.
    var keptAside: [String] = []
    /// Every refId a file of this scan carries (filled only when there is a remote to join).
    var carriedRefIds: Set<String> = []
    /// The `rejoining` documents that did join, with their superseded actions.
    var rejoined: [String: [Int]] = [:]
}

extension ChangeRecorder.FileInfo {
    /// A file the index flags synced under the state as read: its document's tracked
    /// version, at its path (see `StatCache.syncedRefId`).
    init(path: String, stat: FileStat, synced refId: String) {
        self.init(path: path, stat: stat, hash: "", refId: refId, changesetId: nil, unchanged: true)
    }
}
