import DocSyncJSON
import Foundation

/// `docsync override`: on a send-only replica, the local version of a document goes to the
/// remote over the remote change held aside for it (Syncthing's "override changes"), as
/// a new version made from the remote's, so the remote's history is never cut: the
/// remote's version is kept in the conflict store, its maker is told as of any lost
/// version, and `resolve --take remote` brings its values back.
///
/// Whatever is on disk is recorded first. The remote version becomes the document's
/// base, and the file's content is stamped as a new local version (its file operation
/// journaled before the file is written, as `resolve` does), which the push that follows
/// sends. A document deleted here sends its deletion over the remote's version; one the
/// remote deleted is sent again. A run killed after its journal is finished by the next.
public struct OverrideService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }

    /// One held remote change to push over: the document as the tree holds it, and the
    /// remote's state the hold names.
    struct Target: Equatable {
        var refId: String
        var local: DocVersion?
        var remote: JournalEntry.RemoteState
        var remoteReplica: String?

        /// What the override sends: the remote's version becoming the local one.
        var sent: ChangeSummary {
            ChangeSummary(
                from: remote.version, to: local, refId: refId, changesetId: local?.changesetId,
                fallbackPath: remote.path ?? refId)
        }

        /// What `status` listed for it.
        var summary: ChangeSummary {
            ChangeSummary(
                from: local, to: remote.version, refId: refId, changesetId: remote.changesetId,
                fallbackPath: remote.path ?? refId)
        }
    }

    /// Sends the local version of every document under `paths` (files or folders,
    /// relative to `cwd`; none: all) whose remote change is held, then pushes.
    public func override(paths: [String], relativeTo cwd: String, dryRun: Bool) throws -> SyncReport {
        guard config.syncMode == .sendOnly else {
            throw Workspace.Failure.gaveUp(
                "override is for send-only replicas (sync.mode is \(config.syncMode.rawValue)): here a sync merges the remote's changes"
            )
        }
        var report = SyncReport()
        report.dryRun = dryRun
        report.syncMode = reportedMode
        let targets = try heldTargets(paths: paths, relativeTo: cwd, dryRun: dryRun, report: &report)
        report.overridden = targets.map(\.sent)
        if dryRun || targets.isEmpty {
            report.notApplied = SyncService(workspace: workspace).notAppliedChanges
            return report
        }
        var entries: [JournalEntry] = []
        var writes: [JournalEntry.FileOperation] = []
        for t in targets {
            entries += try overrideEntries(t, writes: &writes)
        }
        // The bases just set are the remote's state at the cursor (a hold is replaced by
        // each later entry of its document): said so, a pull does not take them for a
        // pull's bases that ran ahead of its cursor.
        if let cursor = state.cursor { entries.append(JournalEntry(.cursor(cursor))) }
        // The ids issued above, kept before anything names them (see HybridLogicalClock).
        try clock.persist()
        try workspace.append(entries)
        try CrashPoint.hit("override.after-journal")
        for op in writes where !redo(op, interrupted: false) {
            report.notices.append(
                "\(op.result?.path ?? op.refId): changed while it was overridden; the new content is recorded and sent by the next sync"
            )
        }
        try workspace.checkpoint()
        // The push (a pull first: what the remote holds now is held, not applied).
        let pushed = try SyncService(workspace: workspace).run(.push)
        report.pushed = pushed.pushed
        // What the push's pull heard (a version of this replica's lost elsewhere: exit 3)
        // and found (files not valid: exit 1), as a sync would say.
        report.conflicts = pushed.conflicts
        report.problems = pushed.problems
        report.notices += pushed.notices
        report.warnings += pushed.warnings
        report.remoteUnreachable = pushed.remoteUnreachable
        report.refusedPush = pushed.refusedPush
        report.notApplied = pushed.notApplied
        report.pendingAfter = pushed.pendingAfter
        return report
    }

    /// Records what is on disk, then picks the held changes under `paths` that have
    /// something here to send over them (a valid file, or a deletion of a document this
    /// tree had); an invalid file is left with a notice in `report`.
    private func heldTargets(paths: [String], relativeTo cwd: String, dryRun: Bool, report: inout SyncReport) throws
        -> [Target]
    {
        let recorded = try recordLocalChanges(write: !dryRun, report: &report)
        let tracked = state.trackedVersions
        // A dry run journals nothing: what it recorded is read from its actions.
        var unjournaled: [String: DocVersion?] = [:]
        if dryRun {
            for action in recorded.actions { unjournaled[action.refId ?? ""] = .some(action.resultingVersion) }
        }
        let holds = state.held.values.compactMap { hold -> Target? in
            guard case let .held(refId, remote, replica) = hold.event else { return nil }
            return Target(
                refId: refId, local: unjournaled[refId] ?? tracked[refId], remote: remote, remoteReplica: replica)
        }
        let selected = try Self.targets(holds, selecting: try paths.map { try treePath($0, relativeTo: cwd) })
        let invalid = Set(report.invalidFiles)
        var targets: [Target] = []
        for t in selected {
            if let path = t.local?.path, invalid.contains(path) {
                report.notices.append("\(path): not a valid document now; left as it is (fix it, then override)")
            } else if t.local == nil && state.baseVersions[t.refId] == nil {
                // Only the remote has it: nothing here to send over it.
                continue
            } else {
                targets.append(t)
            }
        }
        return targets
    }

    /// The conflict record of the remote version (kept before the journal names it), the
    /// remote's state as the new base, and the local version stamped anew.
    private func overrideEntries(_ t: Target, writes: inout [JournalEntry.FileOperation]) throws -> [JournalEntry] {
        var entries: [JournalEntry] = [JournalEntry(.seen(refId: t.refId, t.remote, reason: nil))]
        // Deleted here: the deletion of the version this tree had wins.
        var winner = t.local?.changesetId ?? state.baseVersions[t.refId]?.changesetId ?? t.remote.changesetId
        var sent: [UInt8]? = nil
        if let local = t.local {
            let current = try SafeTreeIO(root: layout.root).readIfPresent(local.path) ?? []
            guard ContentHash.of(current) == local.hash else {
                throw Workspace.Failure.gaveUp("\(local.path) changed while it was read; run override again")
            }
            let changesetId = clock.next().description
            let stamped = IdentityStamper.stamp(
                current, scanned: try JSONScanner.scanDocument(current), refId: t.refId, changesetId: changesetId)
            let version = DocVersion(
                refId: t.refId, changesetId: changesetId, hash: try objects.put(stamped), path: local.path)
            let op = JournalEntry.FileOperation(
                refId: t.refId, changesetId: changesetId, result: version, fromPath: local.path, fromHash: local.hash)
            writes.append(op)
            entries.append(JournalEntry(.apply(op)))
            entries.append(
                JournalEntry(.local(t.remote.version == nil ? .create : .update, version: version, fromPath: nil)))
            winner = changesetId
            sent = stamped
        }
        try objects.flush()
        if let remote = t.remote.version {
            let remoteBytes = try objects.get(remote.hash)
            // The fields the remote's version differs in from what went over it (deleted here:
            // all of them), so `resolve --take` brings back exactly those.
            let fields = (try? JSONValueParser.parse(remoteBytes)).map { lost in
                FieldPaths.differing(lost, sent.flatMap { try? JSONValueParser.parse($0) } ?? .object([:]))
            }
            // No value of it lost (only its name or its changesetId): nothing to record.
            if fields?.isEmpty == true { return entries }
            var record = ConflictStore.Record(
                refId: t.refId, changesetId: remote.changesetId, path: remote.path, side: .remote, winner: winner,
                time: FileSystem.currentTimeNanos / 1_000_000, kind: .version(policy: nil, fields: fields ?? []),
                replica: config.replicaId,
                // Its maker, told on its next sync (a git remote names a commit's replica
                // only through the versions' ids).
                lostBy: ChangesetID(remote.changesetId)?.replica ?? t.remoteReplica,
                reason: t.local == nil ? "deleted over it by `docsync override`" : "overridden by `docsync override`")
            record.shared = false
            _ = try conflictStore.keep(record, bytes: remoteBytes)
            entries.append(
                JournalEntry(
                    .conflict(
                        refId: t.refId, changesetId: remote.changesetId, path: remote.path, side: .remote,
                        deleted: false)))
        }
        return entries
    }

    /// The held changes `selecting` covers (every one when empty) by the local path or the
    /// remote's, in path order. A path that covers none is an error. Pure.
    static func targets(_ holds: [Target], selecting: [String]) throws -> [Target] {
        func covers(_ path: String?, _ selected: String) -> Bool {
            guard let path else { return false }
            return selected.isEmpty || path == selected || path.hasPrefix(selected + "/")
        }
        var out = holds
        if !selecting.isEmpty {
            for selected in selecting
            where !holds.contains(where: { covers($0.local?.path, selected) || covers($0.remote.path, selected) }) {
                throw Workspace.Failure.gaveUp(
                    "\(selected.isEmpty ? "." : selected): no remote change held there (see `docsync status`)")
            }
            out = holds.filter { t in selecting.contains { covers(t.local?.path, $0) || covers(t.remote.path, $0) } }
        }
        return out.sorted { $0.summary.path < $1.summary.path }
    }
}
