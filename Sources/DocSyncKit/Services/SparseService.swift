import Foundation

/// `docsync sparse`: the parts of the remote this replica keeps. The remote keeps
/// everything; a sparse replica pulls only what its selection names (and the documents it
/// holds, wherever they move), pushes only what it holds, and removes the files of
/// documents that leave the selection once the remote has them (see `SparseEviction`).
public struct SparseService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    public enum Change: Sendable {
        case set([String]), add([String]), remove([String]), disable
        /// The selection as it is, applied again (with `--force`: files kept because of
        /// local changes or problems go too).
        case reapply
    }

    /// The selection (nil: the replica keeps everything).
    public func selection() throws -> SparseSelection? { try workspace.sparseSelection() }

    /// The selection `change` would make of this one.
    public func proposed(_ change: Change) throws -> SparseSelection? { try Self.applying(change, to: selection()) }

    /// The selection `change` makes of `old`. Pure; a pattern that cannot be one, or that
    /// `remove` does not find, is an error naming it.
    static func applying(_ change: Change, to old: SparseSelection?) throws -> SparseSelection? {
        func canonical(_ patterns: [String]) throws -> [String] {
            try patterns.map { given in
                guard let pattern = SparseSelection.canonical(given) else {
                    throw Workspace.Failure.gaveUp(
                        "'\(given)': not a selection pattern (a folder or file path inside the tree, or a gitignore-style pattern)"
                    )
                }
                return pattern
            }
        }
        switch change {
        case .set(let patterns):
            return SparseSelection(patterns: unique(try canonical(patterns)))
        case .add(let patterns):
            return SparseSelection(patterns: unique((old?.patterns ?? []) + (try canonical(patterns))))
        case .remove(let patterns):
            guard let old else {
                throw Workspace.Failure.gaveUp(
                    "this replica keeps everything (no selection); `docsync sparse set PATH…` names what it keeps")
            }
            var kept = old.patterns
            for pattern in try canonical(patterns) {
                // `contacts` removes `/contacts/` (a folder named with or without its slash).
                let bare = { (p: String) in p.hasSuffix("/") ? String(p.dropLast()) : p }
                guard let at = kept.firstIndex(of: pattern) ?? kept.firstIndex(where: { bare($0) == bare(pattern) })
                else {
                    throw Workspace.Failure.gaveUp(
                        "'\(pattern)' is not in the selection; `docsync sparse list` shows it")
                }
                kept.remove(at: at)
            }
            return SparseSelection(patterns: kept)
        case .disable:
            guard old != nil else { throw Workspace.Failure.gaveUp("this replica keeps everything already") }
            return nil
        case .reapply:
            guard let old else {
                throw Workspace.Failure.gaveUp(
                    "this replica keeps everything (no selection); `docsync sparse set PATH…` names what it keeps")
            }
            return old
        }
    }

    private static func unique(_ patterns: [String]) -> [String] {
        var seen = Set<String>()
        return patterns.filter { seen.insert($0).inserted }
    }

    /// Whether going from `old` to `new` may select a path `old` did not: the new part is
    /// then pulled from a full listing of the remote (a pull from the cursor would not
    /// bring documents that did not change since).
    static func widens(from old: SparseSelection?, to new: SparseSelection?) -> Bool {
        guard let old else { return false }
        guard let new else { return true }
        let added = Set(new.patterns).subtracting(old.patterns)
        let removed = Set(old.patterns).subtracting(new.patterns)
        return added.contains { !$0.hasPrefix("!") } || removed.contains { $0.hasPrefix("!") }
    }

    /// Changes the selection: records the tree first (so no unrecorded edit is taken for
    /// synced), removes the files of documents that leave it (only those the remote has,
    /// unless `force`), and when it widens, pulls the new part.
    public func change(_ change: Change, force: Bool, dryRun: Bool = false) throws -> SyncReport {
        let old = try selection()
        let new = try Self.applying(change, to: old)
        if dryRun { return try preview(from: old, to: new, force: force) }
        var report = SyncReport()
        let local = try recordLocalChanges(write: true, report: &report)
        let widened = Self.widens(from: old, to: new)
        // The mark first: a run killed before the pull leaves it, and the next pull reads the
        // remote's whole listing then.
        if widened { try FileSystem.writeAtomically(layout.sparseWidenFile, Array("widened\n".utf8)) }
        try SparseSelection.save(new, layout)
        workspace.loadedSelection = .some(new)
        if let new {
            try evict(outside: new, force: force, invalidPaths: local.unreadablePaths, into: &report)
        }
        guard widened else { return report }
        var pulled = try workspace.sync.run(.pull)
        if pulled.remoteUnreachable != nil {
            pulled.notices.append(
                "the selection is saved; its new part is pulled by the next sync or pull that reaches the remote")
        }
        pulled.recorded = report.recorded + pulled.recorded
        pulled.notices = report.notices + pulled.notices
        pulled.leftSelection = report.leftSelection
        return pulled
    }

    /// `--dry-run`: what the change would record, remove and (widening) pull; nothing is
    /// written, locally or on the remote.
    private func preview(from old: SparseSelection?, to new: SparseSelection?, force: Bool) throws -> SyncReport {
        var report = SyncReport()
        report.dryRun = true
        let local = try recordLocalChanges(write: false, report: &report)
        try state.readBase()
        var pending = state.pending
        for (i, var action) in local.actions.enumerated() {
            action.seq = journal.nextSeq + i
            pending.append(action)
        }
        if let new {
            let plan = SparseEviction.plan(
                base: state.base, pending: pending, held: Set(state.held.keys), invalidPaths: local.unreadablePaths,
                selection: new, force: force)
            report.leftSelection = plan.leaving.map(\.path)
            report.notices += plan.staying.map { "\($0.path): outside the selection, would stay here: \($0.why)" }
        }
        guard Self.widens(from: old, to: new) else { return report }
        let remote = try makeRemote()
        let whole = try remote.changes(since: nil).checked(url: remote.displayURL)
        let tracked = state.trackedVersions
        for entry in whole.entries where !entry.deleted && tracked[entry.refId] == nil {
            guard let version = entry.version, new?.contains(version.path) ?? true else { continue }
            report.pulled.append(
                ChangeSummary(kind: .create, path: version.path, refId: entry.refId, changesetId: entry.changesetId))
        }
        report.pulled.sort { $0.path < $1.path }
        return report
    }

    /// Removes the files of documents outside `selection` (see `SparseEviction`): each
    /// leaves the base (nothing is deleted on the remote) and its file goes, but only if it
    /// still holds what was recorded. Journaled first: a run killed halfway is finished by
    /// the next one. With `force`, local changes not sent are dropped (their versions stay
    /// in the journal and object store: `docsync restore DOC --at ID`) and a file that is
    /// not valid is kept under `.docsync/rejected/` before it goes.
    func evict(
        outside selection: SparseSelection, force: Bool, invalidPaths: Set<String>, into report: inout SyncReport
    ) throws {
        try state.readBase()
        let plan = SparseEviction.plan(
            base: state.base, pending: state.pending, held: Set(state.held.keys), invalidPaths: invalidPaths,
            selection: selection, force: force)
        for staying in plan.staying {
            report.notices.append(
                "\(staying.path): outside the selection, kept here: \(staying.why) (it leaves once synced; `docsync sparse reapply --force` removes it now, its versions kept)"
            )
        }
        guard !plan.leaving.isEmpty else { return }
        let io = SafeTreeIO(root: layout.root)
        var entries: [JournalEntry] = []
        for leaving in plan.leaving {
            if leaving.invalid, let path = leaving.now?.path, let bytes = try io.readIfPresent(path) {
                let copy = try workspace.editing.keepRejected(bytes, for: path)
                report.notices.append("\(path): not a valid document; kept as \(copy) before it left the selection")
            }
            if !leaving.droppedSeqs.isEmpty {
                entries.append(JournalEntry(.done(refId: leaving.refId, seqs: leaving.droppedSeqs, reason: .reverted)))
                report.notices.append(
                    "\(leaving.path): its changes not sent are dropped (--force); `docsync restore` brings them back")
            }
            let deleted = leaving.base ?? leaving.now
            entries.append(
                JournalEntry(
                    .seen(
                        refId: leaving.refId,
                        .deleted(changesetId: deleted?.changesetId ?? "", path: deleted?.path),
                        reason: .leftSelection)))
            if let op = Self.removal(leaving) { entries.append(JournalEntry(.apply(op))) }
        }
        try append(entries)
        try CrashPoint.hit("sparse.after-journal")
        var putBack: [JournalEntry] = []
        for leaving in plan.leaving {
            guard let now = leaving.now else { continue }
            if leaving.invalid {
                try? io.remove(now.path)
                // Kept aside and gone from the tree: no longer this run's problem.
                report.problems.removeAll { $0.invalidFile == now.path }
            } else if let op = Self.removal(leaving), !redo(op, interrupted: false) {
                // Edited since it was recorded: it stays, and the edit is recorded next time.
                putBack.append(JournalEntry.notApplied(refId: leaving.refId, base: leaving.base))
                report.notices.append("\(now.path): changed while it left the selection; kept (synced next time)")
                continue
            }
            index.remove(path: now.path)
            report.leftSelection = (report.leftSelection ?? []) + [now.path]
        }
        if !putBack.isEmpty { try append(putBack) }
        try checkpoint()
    }

    /// The journaled removal of a leaving document's file (nil: it has none here).
    static func removal(_ leaving: SparseEviction.Leaving) -> JournalEntry.FileOperation? {
        guard let now = leaving.now, !leaving.invalid else { return nil }
        return JournalEntry.FileOperation(
            refId: leaving.refId, changesetId: now.changesetId, result: nil, fromPath: now.path, fromHash: now.hash)
    }
}
