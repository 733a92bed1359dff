import Dispatch
import DocSyncJSON
import Foundation

/// A working tree and everything docsync keeps about it. The engine's entry point:
/// the command line only parses arguments and prints what these methods return.
public final class Workspace {
    /// What the replica keeps on disk (see ReplicaStore); the members below reach it.
    let store: ReplicaStore
    public internal(set) var config: Config {
        get { store.config }
        set {
            store.config = newValue
            builtSchemas = nil
        }
    }
    /// The stat cache as this workspace last left it (what `close()` saves): `watch`
    /// checks its own writes against it without reading the file back.
    public var statCache: StatCache { store.index }
    /// The JSON Schemas records must satisfy, built once per run (recording and the pull
    /// both check against them; a schema is compiled at most once).
    var recordSchemas: RecordSchemas {
        if let builtSchemas { return builtSchemas }
        let schemas = RecordSchemas(root: layout.root, config: config)
        builtSchemas = schemas
        return schemas
    }
    private var builtSchemas: RecordSchemas?
    /// A sparse replica's selection, read once per run where it is first asked for (the
    /// recording, the pull, the replica's record on the remote all ask); `SparseService`
    /// sets it when it writes a new one.
    func sparseSelection() throws -> SparseSelection? {
        if let loadedSelection { return loadedSelection }
        let selection = try SparseSelection.load(layout)
        loadedSelection = .some(selection)
        return selection
    }
    var loadedSelection: SparseSelection??
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
        var config = Config()
        try config.set("core.replicaId", ReplicaID.generate(), allowReadOnly: true)
        try config.set("core.replicaName", replicaName ?? ProcessInfo.processInfo.hostName)
        var createdRemote = false
        if let address { createdRemote = try setRemote(address, branch: branch, format: remoteFormat, in: &config) }
        try FileSystem.createDirectories(layout.objects)
        try FileSystem.createDirectories(layout.conflicts)
        try config.save(to: layout.config)
        try SyncState().save(to: layout.state)
        try FileSystem.writeAtomically(layout.journal, [])
        let workspace = try open(at: root, readOnly: false)
        workspace.sync.noteRemoteReached()
        return (workspace, createdRemote)
    }

    /// Names the remote at `address` in `config`; a folder remote that does not exist yet
    /// (its parent must) is made with `format`. Returns whether it was made.
    private static func setRemote(
        _ address: RemoteAddress, branch: String?, format: FolderRemoteFormat?, in config: inout Config
    ) throws -> Bool {
        if address.kind == .dir, !FileSystem.exists(address.url) {
            let parent = (address.url as NSString).deletingLastPathComponent
            if !FileSystem.isDirectory(parent) { throw Failure.remoteParentMissing(url: address.url, parent: parent) }
        }
        if address.kind == .git {
            // Any git URL; an empty repository is a valid new remote. Local paths are
            // stored absolute so the tree works from any folder.
            try config.set("remote.url", address.url)
            try config.set("remote.kind", "git")
            if let branch { try config.set("remote.branch", branch) }
            // An empty repository is a new remote: this tree's first push starts it.
            return RemoteIdentity.isEmptyGitRepository(address.url) == true
        }
        var created = false
        if FolderRemoteFormat.of(address.url) == nil && !DirectoryRemote.isRemote(address.url) {
            try FolderRemoteFormat.create(at: address.url, format: format ?? FolderRemoteFormat.forNewRemotes)
            created = true
        }
        try config.set("remote.url", address.url)
        try config.set("remote.kind", "dir")
        return created
    }

    /// Opens the tree containing `directory`, takes its lock (unless read-only) and
    /// finishes whatever an interrupted run left in the journal.
    /// - Parameter baseOnDemand: for `status` and the syncs: the base is read where the
    ///   run first needs it, and not at all when nothing changed (see `ReplicaStore.open`).
    public static func open(at directory: String, readOnly: Bool, baseOnDemand: Bool = false) throws -> Workspace {
        guard let layout = TreeLayout.find(from: directory) else {
            throw Failure.notATree(FileSystem.absolute(directory))
        }
        let workspace = Workspace(
            store: try ReplicaStore.open(layout, readOnly: readOnly, baseOnDemand: baseOnDemand))
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

    public func close() { store.close() }

    // MARK: The services over it

    public var sync: SyncService { SyncService(workspace: self) }
    public var history: HistoryService { HistoryService(workspace: self) }
    public var conflicts: ConflictService { ConflictService(workspace: self) }
    public var editing: EditingService { EditingService(workspace: self) }
    public var reverting: RevertService { RevertService(workspace: self) }
    public var overriding: OverrideService { OverrideService(workspace: self) }
    public var gc: GCService { GCService(workspace: self) }
    public var replicas: ReplicaService { ReplicaService(workspace: self) }
    public var settings: SettingsService { SettingsService(workspace: self) }
    public var checks: VerifyService { VerifyService(workspace: self) }
    public var sparse: SparseService { SparseService(workspace: self) }

    // MARK: Pieces shared by the commands

    public func makeRemote() throws -> Remote {
        let made = try RemoteFactory(
            config: config, metadata: layout.metadata, replica: replicaInfo, readOnly: readOnly
        ).make()
        for warning in made.warnings where !warnings.contains(warning) { warnings.append(warning) }
        return made.remote
    }
}

extension Workspace: WorkspaceService {
    public var workspace: Workspace { self }
}
