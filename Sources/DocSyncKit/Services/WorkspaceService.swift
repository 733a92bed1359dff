import DocSyncJSON
import Foundation

/// A command's engine over one opened tree: sync, history, conflicts, editing, gc,
/// replicas, settings, verify. Each is its own type taking the `Workspace` (the opened
/// replica store and the remote it names); the members below reach the store through it,
/// so a service reads as if it held the store itself. `Workspace` conforms too: what
/// every command needs (recording local changes, finding a document) is written once.
public protocol WorkspaceService {
    var workspace: Workspace { get }
}

extension WorkspaceService {
    var store: ReplicaStore { workspace.store }
    public var layout: TreeLayout { workspace.store.layout }
    var config: Config {
        get { workspace.config }
        nonmutating set { workspace.config = newValue }
    }
    var state: SyncState {
        get { workspace.store.state }
        nonmutating _modify { yield &workspace.store.state }
    }
    var journal: Journal { workspace.store.journal }
    var index: StatCache {
        get { workspace.store.index }
        nonmutating _modify { yield &workspace.store.index }
    }
    var objects: ObjectStore { workspace.store.objects }
    var clock: HybridLogicalClock { workspace.store.clock }
    var conflictStore: ConflictStore { workspace.store.conflictStore }
    var readOnly: Bool { workspace.store.readOnly }
    var recordSchemas: RecordSchemas { workspace.recordSchemas }
    var warnings: [String] {
        get { workspace.store.warnings }
        nonmutating _modify { yield &workspace.store.warnings }
    }
    var progress: ProgressHandler? { workspace.progress }
    var replicaInfo: ReplicaInfo {
        ReplicaInfo(
            replicaId: config.replicaId, name: config["core.replicaName"] ?? config.replicaId,
            version: ReplicaInfo.softwareVersion, selection: (try? workspace.sparseSelection())??.patterns)
    }

    func makeRemote() throws -> Remote { try workspace.makeRemote() }

    @discardableResult
    func append(_ entries: [JournalEntry]) throws -> Range<Int> { try workspace.store.append(entries) }
    func checkpoint() throws { try workspace.store.checkpoint() }
    func saveIndexIfNeeded() throws { try workspace.store.saveIndexIfNeeded() }
    func redo(_ entry: JournalEntry.FileOperation, interrupted: Bool = true) -> Bool {
        workspace.store.redo(entry, interrupted: interrupted)
    }

    /// Scans the tree and journals what changed. With `write` false nothing is touched.
    /// - Parameter checkpointing: false when the caller checkpoints later in the same run
    ///   (a sync): the journal already holds what was recorded, and the state of every
    ///   document is written once per run, not twice.
    /// - Parameter refreshingIndex: a read-only run keeps what it read in the index (see
    ///   `ReplicaStore.keepRefreshedIndex`).
    /// - Parameter joining: on first contact with a remote, its documents' refIds by path
    ///   (see `ChangeRecorder.joining`).
    func recordLocalChanges(
        write: Bool, report: inout SyncReport, checkpointing: Bool = true,
        refreshingIndex: Bool = false, joining: [String: String] = [:]
    ) throws -> ChangeRecorder.Result {
        var result = try recordOnce(write: write, refreshingIndex: refreshingIndex, joining: joining)
        // A file saved, moved or deleted between its read and its stamp is left as the
        // user made it, its change not recorded. Record again, as a run started after
        // that save would: otherwise the run went on without a change it had read, and
        // pushed neither an edit saved before it nor the move (model check, git seed 6003).
        var again = 0
        while write, result.changedWhileStamping > 0, again < ChangeRecorder.recordingsWhileFilesChange {
            again += 1
            let earlier = result
            result = try recordOnce(write: write, refreshingIndex: false, joining: joining)
            result.actions = earlier.actions + result.actions
            result.keptAside = earlier.keptAside + result.keptAside
        }
        report.warnings += result.keptAside.map {
            "\($0): an earlier save of a document, saved again while docsync stamped it; kept here, nothing removed"
        }
        report.problems += result.problems.map(ReportedProblem.invalidDocument)
        report.warnings += result.skipped.map { "\($0.path): skipped, \($0.reason)" }
        if !result.unknown.isEmpty { report.unknown = (report.unknown ?? []) + result.unknown }
        report.recorded += result.actions.filter(\.isLocalAction).map(ChangeSummary.init)
        guard write else { return result }
        if !result.actions.isEmpty {
            if checkpointing { try checkpoint() }
        } else if checkpointing {
            // A caller that checkpoints later saves the index then (or at close): it is a
            // cache, and a 1% pull at 100,000 documents wrote its 13.6 MB twice.
            try saveIndexIfNeeded()
        }
        return result
    }

    /// One scan of the tree; with `write`, its actions journaled (see `recordLocalChanges`).
    private func recordOnce(write: Bool, refreshingIndex: Bool, joining: [String: String]) throws
        -> ChangeRecorder.Result
    {
        let recorder = ChangeRecorder(
            layout: layout, trackedVersions: { [store] in store.state.trackedVersions }, index: index, clock: clock,
            objects: objects,
            schemas: recordSchemas)
        recorder.unchangedTree = store.unchangedTree
        recorder.readBase = { [store] in try store.state.readBase() }
        recorder.progress = progress
        let selection = try workspace.sparseSelection()
        recorder.selection = selection
        recorder.joining = selection.map { selected in joining.filter { selected.contains($0.key) } } ?? joining
        if !joining.isEmpty { recorder.rejoining = state.unsyncedMintedDocuments }
        let result = try recorder.detect(write: write)
        guard write else {
            if refreshingIndex { store.keepRefreshedIndex(recorder.index) }
            return result
        }
        index = recorder.index
        if !result.actions.isEmpty {
            try objects.flush()
            // The ids issued, kept before the journal names them (see HybridLogicalClock).
            try clock.persist()
            try append(result.actions)
            try CrashPoint.hit("record.after-journal")
        }
        return result
    }

    /// Finds a document by path (relative to `cwd`), refId, or a path it had before.
    func resolveDocument(_ doc: String, relativeTo cwd: String) throws -> (refId: String, path: String?) {
        let tracked = state.tracked
        let absolute = TreeLayout.userPath(doc, from: cwd)
        let log = { try workspace.history.log() }
        if let relative = layout.relative(absolute) {
            if let v = tracked.values.first(where: { $0.path == relative }) { return (v.refId, v.path) }
            if let bytes = try? FileSystem.readFile(absolute),
                let ref = (try? JSONScanner.scanDocument(bytes))?.member(named: "refId")?.stringValue
            {
                return (ref, relative)
            }
            if let entry = try log().last(where: { $0.entry.path == relative && $0.entry.refId != nil }) {
                return (entry.entry.refId!, relative)
            }
        }
        if let v = tracked[doc] { return (v.refId, v.path) }
        if let entry = try log().last(where: { $0.entry.refId == doc }) { return (doc, entry.entry.path) }
        throw Workspace.Failure.notTracked(doc)
    }
}

extension WorkspaceService {
    /// A path given on the command line, relative to the tree's root ("" for the root).
    func treePath(_ path: String, relativeTo cwd: String) throws -> String {
        let absolute = TreeLayout.userPath(path, from: cwd)
        if absolute == layout.root { return "" }
        guard let relative = layout.relative(absolute) else {
            throw Workspace.Failure.gaveUp("\(path) is outside the tree \(layout.root)")
        }
        return relative
    }
}
