import Dispatch
import DocSyncJSON
import Foundation

/// A working tree and everything docsync keeps about it. The engine's entry point:
/// the command line only parses arguments and prints what these methods return.
public final class Workspace {
    /// What the replica keeps on disk (see ReplicaStore); the members below reach it.
    let store: ReplicaStore
    public var layout: TreeLayout { store.layout }
    public internal(set) var config: Config {
        get { store.config }
        set {
            store.config = newValue
            builtSchemas = nil
        }
    }
    // `_modify`: a mutation goes to the store's value in place (through get and set, each
    // one copied the state of every document).
    var state: SyncState {
        get { store.state }
        _modify { yield &store.state }
    }
    var journal: Journal { store.journal }
    var index: StatCache {
        get { store.index }
        _modify { yield &store.index }
    }
    var objects: ObjectStore { store.objects }
    var clock: HybridLogicalClock { store.clock }
    var conflictStore: ConflictStore { store.conflictStore }
    var readOnly: Bool { store.readOnly }
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
    public internal(set) var warnings: [String] {
        get { store.warnings }
        _modify { yield &store.warnings }
    }
    /// Told what a long run is doing as it happens (the command line draws it).
    public var progress: ProgressHandler?

    init(store: ReplicaStore) {
        self.store = store
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
        let workspace = Workspace(store: try ReplicaStore.open(layout, readOnly: readOnly))
        if !readOnly { workspace.removeLeftoverGitLocks() }
        if keepLastUntilExit { lastOpened.set(workspace) }
        return workspace
    }

    /// Set by the command line, which exits right after its command: the last workspace
    /// opened is then never freed, the exit returns its memory at once. Why: freeing the
    /// index and the base entry by entry is work the exit does for nothing. Only the last
    /// one is kept, so `watch` (one per sync) does not grow.
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

    /// Journals entries (fsynced) and folds them into the state.
    @discardableResult
    func append(_ entries: [JournalEntry]) throws -> [JournalEntry] { try store.append(entries) }

    /// Writes the state checkpoint (and the stat cache) atomically.
    func checkpoint() throws { try store.checkpoint() }

    func saveIndexIfNeeded() throws { try store.saveIndexIfNeeded() }

    func keepRefreshedIndex(_ refreshed: StatCache) { store.keepRefreshedIndex(refreshed) }

    /// Does one logged file operation (see ReplicaStore.redo).
    func redo(_ entry: JournalEntry.FileOperation, interrupted: Bool = true) -> Bool {
        store.redo(entry, interrupted: interrupted)
    }

    public func close() { store.close() }

    // MARK: Pieces shared by the commands

    var replicaInfo: ReplicaInfo {
        ReplicaInfo(
            replicaId: config.replicaId, name: config["core.replicaName"] ?? config.replicaId,
            version: ReplicaInfo.softwareVersion)
    }

    public func makeRemote() throws -> Remote {
        let made = try RemoteFactory(
            config: config, metadata: layout.metadata, replica: replicaInfo, readOnly: readOnly
        ).make()
        for warning in made.warnings where !warnings.contains(warning) { warnings.append(warning) }
        return made.remote
    }

    /// Scans the tree and journals what changed. With `write` false nothing is touched.
    /// - Parameter checkpointing: false when the caller checkpoints later in the same run
    ///   (a sync): the journal already holds what was recorded, and the state of every
    ///   document is written once per run, not twice.
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
