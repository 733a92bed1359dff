import Foundation

/// `docsync gc`: the remote's tombstones, the journal, the object store, the git cache.
public struct GCService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }
    /// `docsync gc`: purges the remote's tombstones (unless `localOnly`), then compacts the
    /// journal down to the pending local actions, removes objects nothing refers to, and
    /// puts a git remote's cache repository into one pack.
    /// Explicit only; never drops an action that has not reached the remote. With
    /// `dryRun` it reports and changes nothing (the workspace is then opened read-only,
    /// without the tree lock, like every --dry-run).
    public func collect(dryRun: Bool, localOnly: Bool = false) throws -> GCReport {
        var report = GCReport()
        report.dryRun = dryRun
        report.warnings += warnings
        // The remote first: a cursor it moves is journaled, and then compacted with the
        // rest, so a second gc right after has nothing left to rewrite.
        // A receive-only replica writes nothing to the remote, its purge included (it may
        // hold read-only access): the replicas that send do that.
        let receiveOnly = config.syncMode == .receiveOnly
        if receiveOnly && !localOnly {
            report.warnings.append(
                "receive-only (sync.mode): the remote's tombstones are left to the replicas that send")
        }
        if !localOnly, !receiveOnly, config["remote.url"] != nil {
            do {
                report.remote = try purgeRemoteTombstones(dryRun: dryRun)
            } catch let error as RemoteError {
                // Not now (unreachable, or another machine holds its lock): the local
                // half is still worth doing, and the exit code says "try again later".
                switch error {
                case .unreachable, .locked: report.remoteUnreachable = error.localizedDescription
                default: throw error
                }
            }
        }
        let compaction = JournalCompaction(journalPath: layout.journal, statePath: layout.state)
        let plan = try compaction.plan(for: state)
        report.journalBytesBefore = plan.bytesBefore
        report.journalBytesAfter = plan.isNoOp ? plan.bytesBefore : plan.newBytes.count
        report.pendingKept = plan.entriesKept
        report.journalEntriesDropped = plan.isNoOp ? 0 : plan.entriesBefore - state.pending.count
        if !dryRun {
            try compaction.apply(plan, to: &state)
            // The open Journal must number on from, and measure, the new file.
            _ = try journal.read(from: state.journalOffset, lastKnownSeq: state.journalSeq, repair: true)
        }
        let swept = objects.sweep(keeping: referencedObjects(), dryRun: dryRun, progress: progress)
        report.objectsRemoved = swept.removed
        report.objectBytesFreed = swept.bytes
        report.temporaryFilesRemoved = swept.temporaryFiles + removeLeftoverTemporaryFiles(dryRun: dryRun)
        if !dryRun { try CrashPoint.hit("gc.after-objects") }
        // Local, so with --local-only too. Only a cache: if it fails, gc still did the rest.
        if config["remote.url"] != nil, let remote = try? makeRemote() {
            do { report.gitCache = try remote.compactLocalCache(keeping: state.cursor, dryRun: dryRun) } catch {
                report.warnings.append(
                    "\(layout.metadata)/git: not repacked (\(error)); it is only a cache, the next gc tries again")
            }
        }
        return report
    }

    private func purgeRemoteTombstones(dryRun: Bool) throws -> TombstonePurge {
        let remote = try makeRemote()
        let rule = TombstoneRule(maxAgeDays: config.number("gc.tombstoneMaxAgeDays"))
        let purge = try remote.purgeTombstones(rule, dryRun: dryRun, replica: replicaInfo)
        if !dryRun, let before = purge.cursorBefore, let after = purge.cursorAfter, state.cursor == before {
            // This tree had seen everything the compacted feed holds: carry on from the
            // new position rather than reading the new feed whole next time.
            try append([JournalEntry(.cursor(after))])
            try checkpoint()
            try? remote.noteReplica(replicaInfo, seen: after)
        }
        return purge
    }

    /// Every object something may still read: the base (three-way merges, `restore`),
    /// the pending actions (what a push sends, and the content a rename or move keeps),
    /// and the conflict copies (stored whole under `conflicts/`, kept here too so a
    /// version is never only in one place). Nothing else reads `.docsync/objects/`:
    /// journal entries after compaction are the pending actions, and `apply` entries are
    /// all redone when the workspace is opened.
    func referencedObjects() -> Set<String> {
        var keep = Set(state.base.values.map(\.hash))
        for action in state.pending {
            if let hash = action.hash { keep.insert(hash) }
        }
        // Held remote versions wait here for the local file's fix.
        for hold in state.held.values { if let hash = hold.hash { keep.insert(hash) } }
        for record in conflictStore.list() {
            if let bytes = try? conflictStore.bytes(of: record) { keep.insert(ContentHash.of(bytes)) }
        }
        return keep
    }

    /// `.docsync-tmp-…` files directly in `.docsync/` (a state, index or clock write that
    /// was killed). The tree lock is held, so none belongs to a write under way.
    private func removeLeftoverTemporaryFiles(dryRun: Bool) -> Int {
        guard let names = try? FileSystem.listDirectory(layout.metadata) else { return 0 }
        let leftovers = names.filter { $0.hasPrefix(".docsync-tmp-") }
        if !dryRun { for name in leftovers { try? FileSystem.removeFile(layout.metadata + "/" + name) } }
        return leftovers.count
    }
}
