import Foundation

/// `docsync revert`: puts the synced version (the remote's, as this tree last saw it) back
/// over a document's local changes, which are dropped rather than sent (Syncthing's
/// "revert local changes"; what a receive-only replica offers for edits it will never send).
///
/// Whatever is on disk is recorded first, so every reverted version is in the journal and
/// the object store until `docsync gc` (`docsync restore DOC --at ID` brings one back). The
/// file operations and the dropped actions are journaled before a file is touched, and a
/// file is only changed if it still holds what was recorded: a run killed halfway is
/// finished by the next one, and an edit made meanwhile is kept (recorded as a new change).
public struct RevertService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    /// One document to revert: what the tree holds now and what it goes back to.
    struct Target {
        var refId: String
        var now: DocVersion?
        var base: DocVersion?
        var seqs: [Int]

        /// Whether the file changes (a document moved and moved back changes nothing there).
        var changesFile: Bool { now != base }

        /// The journaled file operation that puts `base` back (removes a document this tree
        /// created).
        var operation: JournalEntry.FileOperation {
            JournalEntry.FileOperation(
                refId: refId, changesetId: base?.changesetId ?? now?.changesetId ?? "", result: base,
                fromPath: now?.path, fromHash: now?.hash)
        }

        /// The journal entries that put `base` back and drop the local actions, then
        /// `settling` (the resolve that settles the document's open conflicts, if any).
        /// Shared with `resolve`, whose take can end on the synced version.
        func journalEntries(settling: JournalEntry.Event?) -> [JournalEntry] {
            var entries: [JournalEntry] = []
            if changesFile { entries.append(JournalEntry(.apply(operation))) }
            entries.append(JournalEntry(.done(refId: refId, seqs: seqs, reason: .reverted)))
            if let settling { entries.append(JournalEntry(settling)) }
            return entries
        }

        /// The local change being undone, as status listed it.
        var summary: ChangeSummary {
            ChangeSummary(from: base, to: now, refId: refId, changesetId: now?.changesetId)
        }
    }

    /// Reverts the documents with local changes under `paths` (files or folders, relative
    /// to `cwd`; none: every one). A path with no local change under it is an error.
    public func revert(paths: [String], relativeTo cwd: String, dryRun: Bool) throws -> SyncReport {
        var report = SyncReport()
        report.dryRun = dryRun
        let local = try recordLocalChanges(write: !dryRun, report: &report)
        var pending = state.pending
        if dryRun { pending += local.actions }
        let selected = try Self.targets(
            pending: pending, base: { state.baseVersions[$0] },
            selecting: try paths.map { try treePath($0, relativeTo: cwd) })
        // A document whose file is not a valid one now keeps its changes: reverting it would
        // drop its last recorded version and still leave the broken file as it is.
        let invalid = Set(report.invalidFiles)
        var targets: [Target] = []
        for t in selected {
            if let path = t.now?.path, invalid.contains(path) {
                report.notices.append(
                    "\(path): not a valid document now; left as it is (fix or remove it, then revert)")
            } else {
                targets.append(t)
            }
        }
        report.reverted = targets.map(\.summary)
        report.syncMode = reportedMode
        if dryRun || targets.isEmpty { return report }
        try occupiedPaths(targets)
        // The synced version back settles the document's open conflicts as a resolve
        // taking the remote's would: what lost to this replica's change is what the file
        // holds again, and what this replica lost stays with the dropped changes.
        let conflicted = Set(conflictStore.list().filter(\.isOpen).map(\.refId))
        var entries: [JournalEntry] = []
        for t in targets {
            entries += t.journalEntries(
                settling: conflicted.contains(t.refId)
                    ? .resolve(refId: t.refId, changesetId: nil, path: t.base?.path ?? t.summary.path, take: .remote)
                    : nil)
        }
        try workspace.append(entries)
        try CrashPoint.hit("revert.after-journal")
        // Removals first: a document created here may hold the path another one goes back to.
        for t in targets.sorted(by: { ($0.base == nil ? 0 : 1) < ($1.base == nil ? 0 : 1) }) where t.changesFile {
            if !store.redo(t.operation, interrupted: false) {
                report.notices.append(
                    "\(t.summary.path): changed while it was reverted; left as it is (recorded as a new change)")
            }
        }
        // Settled before the checkpoint: until then `recover` settles them if this run dies.
        for t in targets where conflicted.contains(t.refId) {
            let settled = try conflictStore.markResolved(t.refId, take: .remote, by: config.replicaId)
            report.notices.append(
                "\(t.summary.path): \(settled.count == 1 ? "its open conflict is" : "its \(settled.count) open conflicts are") settled (the synced version is back)"
            )
        }
        try workspace.checkpoint()
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    /// The documents whose pending actions `selecting` covers (every one when empty), in
    /// path order. Pure: the pending actions and the base in, the plan out.
    static func targets(pending: [JournalEntry], base: (String) -> DocVersion?, selecting: [String]) throws
        -> [Target]
    {
        var seqs: [String: [Int]] = [:]
        var now: [String: DocVersion?] = [:]
        for action in pending {
            guard case .local = action.event, let refId = action.refId else { continue }
            seqs[refId, default: []].append(action.seq)
            now[refId] = .some(action.resultingVersion)
        }
        var targets = seqs.keys.map { refId in
            Target(refId: refId, now: now[refId] ?? nil, base: base(refId), seqs: seqs[refId] ?? [])
        }
        if !selecting.isEmpty {
            let covered = { (path: String?, selected: String) -> Bool in
                guard let path else { return false }
                return selected.isEmpty || path == selected || path.hasPrefix(selected + "/")
            }
            for selected in selecting
            where !targets.contains(where: { covered($0.now?.path, selected) || covered($0.base?.path, selected) }) {
                throw Workspace.Failure.gaveUp(
                    "\(selected.isEmpty ? "." : selected): no local change to revert there (see `docsync status`)")
            }
            targets = targets.filter { t in
                selecting.contains { covered(t.now?.path, $0) || covered(t.base?.path, $0) }
            }
        }
        return targets.sorted { $0.summary.path < $1.summary.path }
    }

    /// Refuses before anything is journaled when a synced version would go back to a path
    /// that now holds a file (another document, a file that is not a valid one, or one
    /// of these documents that only moves): reverting writes over nothing but the files
    /// of documents it removes, which go first.
    private func occupiedPaths(_ targets: [Target]) throws {
        let leaving = Set(targets.filter { $0.base == nil }.compactMap { $0.now?.path })
        for t in targets {
            guard let back = t.base?.path, back != t.now?.path, !leaving.contains(back),
                FileSystem.exists(layout.root + "/" + back)
            else { continue }
            throw Workspace.Failure.gaveUp(
                "\(back) now holds another file; move it away, then revert \(t.summary.path)")
        }
    }
}
