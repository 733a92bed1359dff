import Dispatch
import DocSyncJSON
import Foundation

/// The two kinds of remote.
public enum RemoteKind: String, Sendable, CaseIterable {
    case dir, git

    /// git for anything that looks like a git URL or repository, else a folder.
    public static func detect(_ url: String) -> RemoteKind {
        GitURL.looksLikeGit(url) ? .git : .dir
    }
}

/// A working tree and everything docsync keeps about it. The engine's entry point:
/// the command line only parses arguments and prints what these methods return.
public final class Workspace {
    public let layout: TreeLayout
    public internal(set) var config: Config {
        didSet { builtSchemas = nil }
    }
    var state: SyncState
    let journal: Journal
    var index: StatCache
    /// The stat cache as this workspace last left it (what `close()` saves): `watch`
    /// checks its own writes against it without reading the file back.
    public var statCache: StatCache { index }
    /// The JSON Schemas records must satisfy, built once per run (recording and the pull
    /// both check against them; a schema is compiled at most once).
    var recordSchemas: RecordSchemas {
        if let builtSchemas { return builtSchemas }
        let schemas = RecordSchemas(root: layout.root, config: config)
        builtSchemas = schemas
        return schemas
    }
    private var builtSchemas: RecordSchemas?
    let objects: ObjectStore
    let clock: HybridLogicalClock
    let conflictStore: ConflictStore
    private var lock: TreeLock?
    let readOnly: Bool
    /// The index file as this run found it before reading it (nil: there was none). A
    /// read-only run saves what it learned only over that same file (see `keepRefreshedIndex`).
    private var indexFileAtOpen: FileStat?
    public internal(set) var warnings: [String] = []
    /// Told what a long run is doing as it happens (the command line draws it).
    public var progress: ProgressHandler?

    public enum Failure: Error, LocalizedError {
        case notATree(String)
        case insideTree(String, outer: String)
        /// The remote has not been reached for longer than `sync.maxOfflineDays`.
        case offlineTooLong(url: String, since: Int64, days: Double, reason: String)
        case alreadyATree(String)
        case noRemote
        /// No remote at this URL, and none was asked for (`--create`).
        case noRemoteAt(String)
        /// The URL names another remote than the one this tree synced with.
        case differentRemote(url: String, reason: String)
        /// A new folder remote whose parent folder is missing (a typo, or a share not mounted).
        case remoteParentMissing(url: String, parent: String)
        case busy(String)
        case notTracked(String)
        case gaveUp(String)
        /// The remote could not be reached (the message says why): try again later.
        case unreachable(String)
        /// Other replicas kept pushing while this one tried: try again later (exit 75).
        case contended(String)

        public var errorDescription: String? {
            switch self {
            case let .notATree(dir):
                return
                    "not a docsync tree (or any parent up to /): \(dir). Run `docsync init` or `docsync clone URL DIR`"
            case let .alreadyATree(dir): return "\(dir) is already a docsync tree"
            case let .insideTree(dir, outer):
                return
                    "\(dir) is inside the docsync tree \(outer); a tree inside another tree would be synced twice. Pick a folder outside it"
            case let .offlineTooLong(url, since, days, reason):
                return
                    "remote \(url) has not been reached since \(Timestamp.rfc3339(since)) (more than \(Timestamp.days(days)), sync.maxOfflineDays): \(reason). "
                    + "Check the URL and the network (`docsync config remote.url`), or raise the limit with `docsync config sync.maxOfflineDays N`. Local changes stay recorded"
            case .noRemote: return "no remote configured; set one with `docsync config remote.url PATH`"
            case let .noRemoteAt(url):
                return "no docsync remote at \(url) (check the path; to make a new remote there, pass --create)"
            case let .differentRemote(url, reason):
                return
                    "\(url) is a different remote than the one this tree last synced with (\(reason)). To switch to it, pass "
                    + "--reset-base: the next sync then merges this tree with it and deletes nothing on either side"
            case let .remoteParentMissing(url, parent):
                return
                    "remote \(url): the folder \(parent) does not exist (a typo, or a share that is not mounted?); create it first if it is meant"
            case let .busy(holder):
                return
                    "another docsync run is working on this tree (\(holder.isEmpty ? "lock held" : holder)); try again later"
            case let .notTracked(path): return "\(path): not a tracked document"
            case let .gaveUp(reason): return reason
            case let .unreachable(message): return message
            case let .contended(message): return message
            }
        }
    }

    init(layout: TreeLayout, config: Config, state: SyncState, index: StatCache? = nil, readOnly: Bool, lock: TreeLock?)
    {
        self.layout = layout
        self.config = config
        self.state = state
        self.readOnly = readOnly
        self.lock = lock
        journal = Journal(path: layout.journal)
        self.index = index ?? StatCache.load(from: layout.index)
        objects = ObjectStore(root: layout.objects)
        clock = HybridLogicalClock(replica: config.replicaId, persistedAt: layout.clock)
        conflictStore = ConflictStore(root: layout.conflicts)
        if !clock.loaded && (!state.base.isEmpty || !state.pending.isEmpty) {
            // Why: a lost or damaged clock file restarted the clock from the wall clock,
            // so after seeing a version from a machine whose clock runs ahead, a new
            // local edit could get an id *earlier* than the version it replaces (and lose
            // to it). Every id this tree issued or saw is in its state: start past them.
            for version in state.base.values { clock.observe(version.changesetId) }
            for action in state.pending { if let id = action.changesetId { clock.observe(id) } }
            if FileSystem.exists(layout.clock) {
                warnings.append("\(layout.clock) was damaged; rebuilt it from the sync state")
            }
        }
    }

    // MARK: Creating and opening

    /// Makes `directory` a working tree. A remote URL that names a missing or empty
    /// folder becomes a new remote.
    @discardableResult
    /// - Parameter remoteFormat: the layout a new folder remote gets (default: the drive
    ///   layout, see `FolderRemoteFormat.forNewRemotes`).
    public static func initialize(
        at directory: String, remoteURL: String?, kind: RemoteKind? = nil, branch: String? = nil,
        replicaName: String? = nil, remoteFormat: FolderRemoteFormat? = nil
    ) throws -> (Workspace, createdRemote: Bool) {
        let root = FileSystem.absolute(directory)
        let layout = TreeLayout(root: root)
        // A `.docsync/` that lost its config still holds the journal and state: never
        // write over them (docs/RECOVERY.md says how to restore the config).
        if FileSystem.exists(layout.config) || FileSystem.exists(layout.state) { throw Failure.alreadyATree(root) }
        // Why: a tree inside another tree is synced twice (its documents are also the
        // outer tree's), and the outer one copies the inner one's metadata around.
        let parent = (root as NSString).deletingLastPathComponent
        if root != "/", let outer = TreeLayout.find(from: parent) { throw Failure.insideTree(root, outer: outer.root) }
        let address = try remoteURL.map { text throws(RemoteAddress.Invalid) in
            try RemoteAddress.parse(text, kind: kind, relativeTo: FileManager.default.currentDirectoryPath)
        }
        try address?.checkSeparate(fromTree: root)
        var createdRemote = false
        var config = Config()
        try config.set("core.replicaId", ReplicaID.generate(), allowReadOnly: true)
        try config.set("core.replicaName", replicaName ?? ProcessInfo.processInfo.hostName)
        if let address, address.kind == .dir, !FileSystem.exists(address.url) {
            let parent = (address.url as NSString).deletingLastPathComponent
            if !FileSystem.isDirectory(parent) { throw Failure.remoteParentMissing(url: address.url, parent: parent) }
        }
        if let address {
            if address.kind == .git {
                // Any git URL; an empty repository is a valid new remote. Local paths are
                // stored absolute so the tree works from any folder.
                try config.set("remote.url", address.url)
                try config.set("remote.kind", "git")
                if let branch { try config.set("remote.branch", branch) }
            } else {
                if FolderRemoteFormat.of(address.url) == nil && !DirectoryRemote.isRemote(address.url) {
                    try FolderRemoteFormat.create(
                        at: address.url, format: remoteFormat ?? FolderRemoteFormat.forNewRemotes)
                    createdRemote = true
                }
                try config.set("remote.url", address.url)
                try config.set("remote.kind", "dir")
            }
        }
        try FileSystem.createDirectories(layout.objects)
        try FileSystem.createDirectories(layout.conflicts)
        try config.save(to: layout.config)
        try SyncState().save(to: layout.state)
        try FileSystem.writeAtomically(layout.journal, [])
        let workspace = try open(at: root, readOnly: false)
        workspace.noteRemoteReached()
        return (workspace, createdRemote)
    }

    /// Opens the tree containing `directory`, takes its lock (unless read-only) and
    /// finishes whatever an interrupted run left in the journal.
    public static func open(at directory: String, readOnly: Bool) throws -> Workspace {
        guard let layout = TreeLayout.find(from: directory) else {
            throw Failure.notATree(FileSystem.absolute(directory))
        }
        let config = try Config.load(from: layout.config)
        var lock: TreeLock? = nil
        if !readOnly {
            do { lock = try TreeLock(path: layout.lock, waitSeconds: config.number("lock.waitSeconds")) } catch let busy
                as TreeLock.Busy
            {
                throw Failure.busy(busy.holder)
            }
        }
        // Before the read: a save that lands between the two makes this stat stale, and a
        // read-only run then keeps its refreshed index to itself.
        let indexFile = try? FileSystem.status(layout.index)
        let (state, index) = try loadStateAndIndex(layout)
        let workspace = Workspace(
            layout: layout, config: config, state: state, index: index, readOnly: readOnly, lock: lock)
        workspace.indexFileAtOpen = indexFile
        try workspace.recover()
        if lock != nil { workspace.removeLeftoverGitLocks() }
        if keepLastUntilExit { lastOpened.set(workspace) }
        return workspace
    }

    /// The state and the index, read on two cores at once. Why: every run reads both
    /// whole (a read, a SHA-256 and a parse each; 16 and 21 MB at 100,000 documents),
    /// one after the other they were a fifth of a no-op `status`.
    private static func loadStateAndIndex(_ layout: TreeLayout) throws -> (SyncState, StatCache) {
        final class Loaded: @unchecked Sendable {
            var state: Result<SyncState, Error>?
            var index: StatCache?
        }
        let loaded = Loaded()
        let statePath = layout.state, indexPath = layout.index
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            if part == 0 {
                loaded.state = Result { try SyncState.load(from: statePath) }
            } else {
                loaded.index = StatCache.load(from: indexPath)
            }
        }
        return (try loaded.state!.get(), loaded.index!)
    }

    /// Set by the command line, which exits right after its command: the last workspace
    /// opened is then never freed, the exit returns its memory at once. Why: freeing the
    /// index and the base of 100,000 documents entry by entry was a fifteenth of a no-op
    /// `status`. Only the last one is kept, so `watch` (one per sync) does not grow.
    nonisolated(unsafe) public static var keepLastUntilExit = false
    private static let lastOpened = LastOpened()

    private final class LastOpened: @unchecked Sendable {
        private let lock = NSLock()
        private var workspace: Workspace?

        func set(_ newValue: Workspace) {
            lock.lock()
            let previous = workspace
            workspace = newValue
            lock.unlock()
            _ = previous  // released here, outside the lock
        }
    }

    /// Lock files and partial packs a killed run left in the git cache repository; with the
    /// tree lock held, none belongs to a write under way (see GitCacheLocks).
    func removeLeftoverGitLocks() {
        let cache = layout.metadata + "/git"
        guard FileSystem.isDirectory(cache) else { return }
        for name in GitCacheLocks.removeLeftovers(in: cache) {
            let what = name.hasSuffix(".lock") ? "a lock file" : "a partial pack file"
            warnings.append("\(cache)/\(name): removed \(what) a killed run left behind")
        }
    }

    /// Folds journal entries written after the last checkpoint into the state and redoes
    /// file operations a crash may have cut short.
    func recover() throws {
        let entries = try journal.read(from: state.journalOffset, lastKnownSeq: state.journalSeq, repair: !readOnly)
        warnings += journal.warnings
        let unfolded = entries.filter { $0.seq > state.journalSeq }
        var baseBefore: [String: DocVersion?] = [:]
        var notRedone: [String] = []
        for entry in unfolded {
            if case .seen(let refId, _, _) = entry.event, baseBefore[refId] == nil {
                baseBefore[refId] = .some(state.base[refId])
            }
            state.fold(entry)
            if case .apply(let op) = entry.event, !readOnly, !redo(op) { notRedone.append(op.refId) }
            // A resolve journaled but killed before it closed its records: close them now.
            if case let .resolve(refId, _, _, take) = entry.event, !readOnly,
                conflictStore.list().contains(where: { $0.refId == refId && $0.isOpen })
            {
                _ = try? conflictStore.markResolved(refId, take: take, by: config.replicaId)
                warnings.append("finished an interrupted resolve of \(entry.path ?? refId)")
            }
        }
        // Documents whose interrupted pull could not be finished (the user edited them
        // since) keep their old base, so the edit meets the remote version as a conflict.
        let reverts = notRedone.map { refId -> JournalEntry in
            let old = baseBefore[refId] ?? nil
            return JournalEntry.notApplied(refId: refId, base: old)
        }
        if !reverts.isEmpty { try append(reverts) }
        if !unfolded.isEmpty || journal.length != state.journalOffset {
            state.journalOffset = journal.length
            if !readOnly { try checkpoint() }
        }
    }

    /// Does one logged file operation if it did not happen yet, and only if the file is
    /// still what it was before (never over a newer user edit). `interrupted`: it is the
    /// redo of a run that died (a pull's or a resolve's), said in the run's warnings.
    /// Returns false when the file was left alone because it changed since.
    func redo(_ entry: JournalEntry.FileOperation, interrupted: Bool = true) -> Bool {
        let io = SafeTreeIO(root: layout.root)
        let target = entry.result
        // Written already (as it was, or edited by the user since: the ids are still the
        // ones the run wrote, and the edit is recorded on top of it; written again, the
        // edit of a document the run had created was lost). A move may still have its
        // old file to remove.
        if let target, let current = try? io.readIfPresent(target.path),
            ContentHash.of(current) == target.hash || Self.carriesIds(current, of: target)
        {
            if let fromPath = entry.fromPath, fromPath != target.path, let old = try? io.readIfPresent(fromPath),
                ContentHash.of(old) == entry.fromHash
            {
                try? io.remove(fromPath)
            }
            return true
        }
        if let fromPath = entry.fromPath, let current = try? io.readIfPresent(fromPath),
            ContentHash.of(current) != entry.fromHash
        {
            if interrupted {
                warnings.append(
                    "\(fromPath): changed after an interrupted run; left as it is (it will be recorded as a local edit)"
                )
            }
            return false
        }
        do {
            if let target {
                try io.write(target.path, try objects.get(target.hash))
                if let fromPath = entry.fromPath, fromPath != target.path { try io.remove(fromPath) }
            } else if let fromPath = entry.fromPath {
                try io.remove(fromPath)
            }
            if interrupted {
                warnings.append(
                    "finished an interrupted run's change of \(target?.path ?? entry.fromPath ?? entry.refId)")
            }
            return true
        } catch {
            warnings.append(
                "could not \(interrupted ? "finish an interrupted run's" : "make the") change of \(entry.fromPath ?? entry.refId): \(error.localizedDescription)"
            )
            return false
        }
    }

    /// Whether `bytes` are a document with `version`'s refId and changesetId: that version,
    /// as a user's text edit leaves it until it is recorded.
    static func carriesIds(_ bytes: [UInt8], of version: DocVersion) -> Bool {
        guard case .object(let members)? = try? JSONValueParser.parse(bytes) else { return false }
        return members["refId"] == .string(version.refId) && members["changesetId"] == .string(version.changesetId)
    }

    /// Journals entries (fsynced) and folds them into the state.
    @discardableResult
    func append(_ entries: [JournalEntry]) throws -> [JournalEntry] {
        let numbered = try journal.append(entries)
        // A large batch (a first push records every document) would otherwise grow the
        // pending list by doubling, holding up to twice what it needs at the peak. Small
        // batches don't reserve: reserving exactly, batch after batch, copies every time.
        if numbered.count > 1024 { state.pending.reserveCapacity(state.pending.count + numbered.count) }
        for entry in numbered { state.fold(entry) }
        return numbered
    }

    /// Writes the state checkpoint (and the stat cache) atomically.
    func checkpoint() throws {
        state.journalOffset = journal.length
        try state.save(to: layout.state)
        try saveIndexIfNeeded()
    }

    func saveIndexIfNeeded() throws {
        if index.isDirty && !readOnly { try index.save(to: layout.index) }
    }

    /// What a read-only scan (`status`) learned about files it had to read, saved for the
    /// next run, as `git status` refreshes git's index. Why: after a push every file it
    /// stamped is racy, and each `status` read all of them again until the next sync saved
    /// the index (1.4 s instead of 0.5 s at 100,000 documents).
    ///
    /// The index only caches what files hold (each entry is checked against the file's
    /// stat data before it is trusted), never what was recorded, so this records nothing.
    /// It is saved only when no other run holds the tree (the lock is tried, not waited
    /// for) and the index file is still the one this run read: a run that saved a newer
    /// one meanwhile keeps it.
    func keepRefreshedIndex(_ refreshed: StatCache) {
        guard readOnly, refreshed.isDirty, let held = try? TreeLock(path: layout.lock, waitSeconds: 0) else { return }
        defer { held.release() }
        guard (try? FileSystem.status(layout.index)) == indexFileAtOpen else { return }
        var refreshed = refreshed
        do {
            try refreshed.save(to: layout.index)
            index = refreshed
            indexFileAtOpen = try? FileSystem.status(layout.index)
        } catch {
            warnings.append(
                "\(layout.index): could not save the refreshed index (\(error.localizedDescription)); the next run reads those files again"
            )
        }
    }

    public func close() {
        try? saveIndexIfNeeded()
        lock?.release()
        lock = nil
    }

    deinit { close() }

    // MARK: Pieces shared by the commands

    var replicaInfo: ReplicaInfo {
        ReplicaInfo(
            replicaId: config.replicaId, name: config["core.replicaName"] ?? config.replicaId,
            version: ReplicaInfo.softwareVersion)
    }

    public func makeRemote() throws -> Remote {
        guard let url = config["remote.url"] else { throw Failure.noRemote }
        switch config["remote.kind"] ?? RemoteKind.detect(url).rawValue {
        case RemoteKind.git.rawValue:
            let settings = GitTransportSettings(
                sshKey: config["remote.sshKey"], knownHosts: config["remote.knownHosts"],
                caFile: config["remote.caFile"])
            if let path = RemoteIdentity.localGitPath(url),
                let sign = DriveFolderSigns.reason(
                    for: path, exists: FileSystem.exists, list: { (try? FileSystem.listDirectory($0)) ?? [] })
            {
                let warning =
                    "\(url): this git repository seems to be in a folder a sync service copies between machines (\(sign)); "
                    + "git's refs and packs break there and pushes can be lost. Use a folder remote there (docsync init --remote FOLDER), or a git server"
                if !warnings.contains(warning) { warnings.append(warning) }
            }
            return try GitRemote(
                url: url, branch: config["remote.branch"] ?? "main", cachePath: layout.metadata + "/git",
                settings: settings)
        default:
            let (stale, wait) = (config.number("remote.lockStaleSeconds"), config.number("remote.lockWaitSeconds"))
            // A format-1 remote moves to the drive layout on the first run that may write
            // (see DriveFolderRemote.upgrade); a read-only run reads it as it is.
            var (layout, held) = FolderRemoteFormat.read(url)
            if !readOnly, layout == .shared, !held {
                let upgrade = try DriveFolderRemote.upgrade(
                    url, replica: replicaInfo, lockStaleSeconds: stale, lockWaitSeconds: wait)
                if let from = upgrade.from {
                    warnings.append(
                        "\(url): upgraded the folder remote to the drive layout (docsync-remote 2) from format 1 at \(from); "
                            + "docsync releases before it cannot sync with it any more")
                }
                layout = .drive
            }
            return FolderRemoteFormat.open(
                url, layout: layout, lockStaleSeconds: stale, lockWaitSeconds: wait, replica: config.replicaId,
                merge: ContentPolicy.versionMerge(config: config))
        }
    }

    /// Scans the tree and journals what changed. With `write` false nothing is touched.
    /// - Parameter checkpointing: false when the caller checkpoints later in the same run
    ///   (a sync): the journal already holds what was recorded, and rewriting the state of
    ///   100,000 documents twice per run was a tenth of a small push.
    /// - Parameter refreshingIndex: a read-only run keeps what it read in the index (see
    ///   `keepRefreshedIndex`).
    /// - Parameter joining: on first contact with a remote, its documents' refIds by path
    ///   (see `ChangeRecorder.joining`).
    func recordLocalChanges(
        write: Bool, report: inout SyncReport, checkpointing: Bool = true,
        refreshingIndex: Bool = false, joining: [String: String] = [:]
    ) throws -> ChangeRecorder.Result {
        let recorder = ChangeRecorder(
            layout: layout, tracked: state.tracked, index: index, clock: clock, objects: objects,
            schemas: recordSchemas)
        recorder.progress = progress
        recorder.joining = joining
        if !joining.isEmpty { recorder.rejoining = state.unsyncedMintedDocuments }
        let result = try recorder.detect(write: write)
        report.problems += result.problems.map(ReportedProblem.invalidDocument)
        report.warnings += result.skipped.map { "\($0.path): skipped, \($0.reason)" }
        report.recorded += result.actions.filter(\.isLocalAction).map(ChangeSummary.init)
        guard write else {
            if refreshingIndex { keepRefreshedIndex(recorder.index) }
            return result
        }
        index = recorder.index
        if !result.actions.isEmpty {
            try objects.flush()
            try append(result.actions)
            try CrashPoint.hit("record.after-journal")
            try clock.persist()
            if checkpointing { try checkpoint() }
        } else {
            try saveIndexIfNeeded()
        }
        return result
    }

    func setLastSync() {
        try? FileSystem.writeAtomically(
            layout.metadata + "/last-sync", Array("\(FileSystem.currentTimeNanos / 1_000_000)\n".utf8), durable: false)
    }

    /// `.docsync/reached`: when the tree was made (written once). The
    /// `sync.maxOfflineDays` clock starts at the later of it and the last sync.
    var reachedFile: String { layout.metadata + "/reached" }

    func noteRemoteReached() {
        try? FileSystem.writeAtomically(
            reachedFile, Array("\(FileSystem.currentTimeNanos / 1_000_000)\n".utf8), durable: false)
    }

    var remoteReachedAt: Int64? {
        let made = (try? FileSystem.readFile(reachedFile)).flatMap {
            Int64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return [made, lastSync, state.lastSync].compactMap { $0 }.max()
    }

    /// The remote could not be reached: past `sync.maxOfflineDays` since it last was,
    /// that is an error saying since when (exit 1), not "try again later".
    func checkOfflineLimit(_ error: RemoteError) throws {
        guard case let .unreachable(url, reason) = error else { return }
        guard let since = remoteReachedAt else {
            noteRemoteReached()
            return
        }
        let days = config.number("sync.maxOfflineDays")
        if Double(FileSystem.currentTimeNanos / 1_000_000 - since) > days * 86_400_000 {
            throw Failure.offlineTooLong(url: url, since: since, days: days, reason: reason)
        }
    }

    var lastSync: Int64? {
        (try? FileSystem.readFile(layout.metadata + "/last-sync")).flatMap {
            Int64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
