import DocSyncJSON
import Foundation

/// The two commands that make a tree's state from scratch: `clone` (a new tree from a
/// remote) and `reset-base` (a tree whose state is lost or damaged). Both return the
/// opened workspace and the report of what they did.
public enum TreeSetup {
    /// Makes `directory` a working tree of the remote at `url` and pulls every document.
    /// A folder that already holds files keeps them: a file without ids at a path where
    /// the remote has a document joins it (the same content is that document, different
    /// content is merged), and the others are recorded, to be sent by the next push.
    public static func clone(
        url: String, into directory: String, kind: RemoteKind? = nil, branch: String? = nil,
        replicaName: String? = nil, mode: SyncMode = .both, sparse: [String]? = nil,
        progress: ProgressHandler? = nil
    ) throws -> (Workspace, SyncReport) {
        // Checked before anything is made.
        let selection = try sparse.map { try SparseService.applying(.set($0), to: nil) } ?? nil
        let root = FileSystem.absolute(directory)
        let existed = FileSystem.exists(root)
        // Checked here, not only by `initialize`: a failed clone removes the `.docsync/`
        // it made, and must never remove one that was there.
        if FileSystem.exists(TreeLayout(root: root).metadata) { throw Workspace.Failure.alreadyATree(root) }
        let address = try RemoteAddress.parse(url, kind: kind, relativeTo: FileManager.default.currentDirectoryPath)
        try address.checkSeparate(fromTree: root)
        // A missing folder must not become a new remote here, and is not "try again
        // later" either: clone is run by hand, and the path is most likely mistyped.
        if RemoteIdentity.exists(kind: address.kind, url: address.url) == false {
            throw Workspace.Failure.noRemoteAt(address.url)
        }
        try FileSystem.createDirectories(root)
        do {
            let (workspace, _) = try Workspace.initialize(
                at: root, remoteURL: address.url, kind: address.kind, branch: branch, replicaName: replicaName)
            // Before the first pull: a receive-only tree never sends, not even the files
            // the folder held before (they are recorded, listed as not sent).
            if mode != .both { try workspace.settings.set("sync.mode", mode.rawValue) }
            // A sparse clone pulls only its selection (see `SparseSelection`).
            if let selection { try SparseSelection.save(selection, workspace.layout) }
            workspace.progress = progress
            let report = try workspace.sync.run(.pull)
            if let unreachable = report.remoteUnreachable { throw Workspace.Failure.unreachable(unreachable) }
            return (workspace, report)
        } catch {
            // Leave nothing half-made behind.
            if existed {
                try? FileManager.default.removeItem(atPath: root + "/.docsync")
            } else {
                try? FileManager.default.removeItem(atPath: root)
            }
            throw error
        }
    }

    /// Recovery for a lost or damaged state: starts from an empty base, moves the old
    /// state aside and records every document as it is now, keeping existing
    /// changesetIds. The next sync then adds what is only on one side, takes identical
    /// versions as synced, and keeps both versions where they differ. Nothing is deleted.
    public static func resetBase(at directory: String) throws -> (Workspace, SyncReport) {
        guard let layout = TreeLayout.find(from: directory) else {
            throw Workspace.Failure.notATree(FileSystem.absolute(directory))
        }
        let config = try Config.load(from: layout.config)
        let lock: TreeLock
        do { lock = try TreeLock(path: layout.lock, waitSeconds: config.number("lock.waitSeconds")) } catch let busy
            as TreeLock.Busy
        {
            throw Workspace.Failure.busy(busy.holder)
        }
        // Read the journal first: if it is damaged too, stop before changing anything.
        let journal = Journal(path: layout.journal)
        let entries = try journal.read(from: 0, repair: true)
        if FileSystem.exists(layout.state) {
            try FileSystem.rename(
                layout.state, layout.state + ".damaged-\(FileSystem.currentTimeNanos / 1_000_000_000)")
        }
        try FileSystem.removeFile(layout.index)
        var fresh = SyncState()
        fresh.journalSeq = entries.map(\.seq).max() ?? 0
        fresh.journalOffset = journal.length
        if !FileSystem.exists(layout.journal) { try FileSystem.writeAtomically(layout.journal, []) }
        try fresh.save(to: layout.state)
        let store = ReplicaStore(layout: layout, config: config, state: fresh, readOnly: false, lock: lock)
        try store.recover()
        let workspace = Workspace(store: store)
        var report = SyncReport()
        _ = try workspace.recordLocalChanges(write: true, report: &report)
        return (workspace, report)
    }
}
