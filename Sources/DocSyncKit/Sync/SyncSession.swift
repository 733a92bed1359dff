import Foundation

/// One push, pull or sync against one remote: what the run was asked (`options`), what
/// recording the tree found (`local`), and what it has done so far (`report`). The
/// workspace owns the replica and its transactions (journal, state, objects); a session
/// plans each step as a value and has the workspace carry it out.
final class SyncSession {
    let workspace: Workspace
    let remote: Remote
    let options: SyncOptions
    /// What recording the tree found (again, if the user saved files while the run wrote
    /// them: see `pull`).
    var local: ChangeRecorder.Result
    var report: SyncReport
    /// Documents whose files the user changed while this run's pull meant to write them
    /// (left as saved, the remote's version not applied): what `pull` records again.
    var changedWhileWriting: [String: String] = [:]
    /// A sparse replica's selection (nil: the replica keeps everything).
    var selection: SparseSelection?
    /// Set when the selection widened: the first pull also reads the remote's whole
    /// listing, for the documents of the new part (no change since the cursor names them).
    var widening = false
    /// A pull of this run read the remote (a push with nothing to send need not ask again
    /// whether it is there).
    var remoteAnswered = false

    init(workspace: Workspace, remote: Remote, options: SyncOptions, local: ChangeRecorder.Result, report: SyncReport) {
        self.workspace = workspace
        self.remote = remote
        self.options = options
        self.local = local
        self.report = report
    }

    /// The replica's sync state (changed only through the workspace's transactions, and
    /// in memory by a dry run).
    var state: SyncState {
        get { workspace.state }
        _modify { yield &workspace.state }
    }

    // MARK: Pull

    /// Plans the pull (see PullPlanner) and, unless `dryRun`, applies the plan.
    /// - Parameter prefetched: the remote's changes since the state's cursor, when the
    ///   run has already read them (first contact).
    func pull(prefetched: RemoteChanges? = nil) throws {
        try pullOnce(prefetched: prefetched)
        // A file the user saved while the pull meant to write it is left as saved, and the
        // cursor stays (the remote's version waits). Record the tree again and pull again,
        // as a run started after the save would: the save is merged with the remote's
        // version now. Why: otherwise every push attempt found the remote "moved" against
        // the old cursor, and the run gave up with exit 75, blaming other replicas.
        var again = 0
        while !changedWhileWriting.isEmpty, !options.dryRun, again < Self.pullsAfterSaves {
            again += 1
            let saved = changedWhileWriting
            changedWhileWriting = [:]
            report.warnings.removeAll { warning in saved.values.contains(warning) }
            report.pulled.removeAll { saved[$0.refId] != nil }
            try forgetDecisions(of: Set(saved.keys))
            try recordAgain()
            try pullOnce(prefetched: nil)
        }
    }

    /// The earlier pull's decisions for documents it left unapplied (the user saved,
    /// moved or deleted the file under it): what the user has now is their version, and
    /// the conflicts that pull recorded are withdrawn, so the next pull decides afresh.
    /// Why: it decided again from the file as it was before the save, and a file deleted
    /// under the pull came back as the earlier merge, with that merge's conflict record
    /// beside the deletion's (model check, folder seed 5010).
    /// Only that pull's records: one an earlier pull of the run made with a merge it did
    /// apply stays.
    private func forgetDecisions(of refIds: Set<String>) throws {
        var withdrawn = Set<String>()
        for refId in refIds {
            userVersions[refId] = nil
            for record in recordedByLastPull[refId] ?? [] {
                try workspace.conflictStore.withdraw(record)
                withdrawn.insert(PullPlan.key(record))
            }
            recordedThisRun[refId]?.removeAll { withdrawn.contains(PullPlan.key($0)) }
        }
        report.conflicts.removeAll { summary in
            summary.recordedBy == nil && refIds.contains(summary.refId)
                && (recordedByLastPull[summary.refId] ?? []).contains { $0.changesetId == summary.storedChangesetId }
        }
    }

    /// How many times one run records and pulls again after files were saved under it.
    static let pullsAfterSaves = 2

    /// Records the tree again during the run (see `pull`): the new local actions are
    /// journaled and folded like the first recording's.
    private func recordAgain() throws {
        var recorded = SyncReport()
        var again = try SyncService(workspace: workspace).recordLocalChanges(
            write: true, report: &recorded, checkpointing: false)
        report.recorded += recorded.recorded
        for problem in recorded.problems where !report.problems.contains(problem) { report.problems.append(problem) }
        again.actions = []
        local = again
    }

    private func pullOnce(prefetched: RemoteChanges?) throws {
        askLandedPending()
        // Read before the changes since the cursor, so that they are as new as it or newer.
        let newPart = prefetched == nil ? try readNewPart() : nil
        var changes = try prefetched ?? remote.changes(since: state.cursor).checked(url: remote.displayURL)
        remoteAnswered = true
        if !Self.changesNothing(changes, state) { try state.readBase() }
        if let rewound = changes.rewound {
            try rebase(onto: rewound)
        } else if state.baseAheadOfCursor, remote.historiesFork, !changes.isSnapshot {
            try reconcileBaseAhead(&changes)
        }
        for note in changes.notArrived where !report.notices.contains(note) { report.notices.append(note) }
        if changes.isSnapshot { changes = changes.addingPurgedDeletions(base: state.base) }
        if let newPart { add(newPart.whole, carried: newPart.carried, to: &changes) }
        if let selection {
            let (tracked, base, held) = (state.trackedVersions, state.baseVersions, state.held)
            changes = SelectedChanges.filter(changes, by: selection) {
                tracked[$0] != nil || base[$0] != nil || held[$0] != nil
            }
        }
        rememberUserVersions(changes)
        var plan = try planPull(changes)
        restoreSharedCopies(of: changes, in: &plan)
        report.problems += plan.problems.map(ReportedProblem.other)
        report.notices += plan.notices
        report.pulled += plan.pulled
        if !plan.remerged.isEmpty {
            // This replica's own decisions for them (incoming records name their recorder).
            report.conflicts.removeAll { plan.remerged.contains($0.refId) && $0.recordedBy == nil }
        }
        // A record an earlier pull of this run announced (this replica's version lost) and
        // that arrives settled now: the run ends as one that started after the resolution
        // would, with nothing to tell (a retry after a lost race).
        for settled in plan.incoming where !settled.record.isOpen {
            report.conflicts.removeAll {
                $0.refId == settled.record.refId && $0.storedChangesetId == settled.record.changesetId
                    && $0.recordedBy != nil && $0.recordedBy == settled.record.replica
                    && ($0.stored == .deletion) == settled.record.isDeletion
            }
        }
        report.conflicts += plan.conflictSummaries
        if options.dryRun {
            // In memory only (a dry run never saves the state): the push that follows
            // plans from the state this pull would leave.
            foldInMemory(plan.batch)
            return
        }
        try apply(plan)
    }

    /// A record this run's earlier pull made and a retry takes back (see `PullPlan.remerged`)
    /// may be one another replica shared meanwhile under the same name (both found the
    /// same version losing): the planner passed over that one as known. It is received
    /// after the withdrawal, so the record another replica made is listed here.
    private func restoreSharedCopies(of changes: RemoteChanges, in plan: inout PullPlan) {
        guard !plan.remerged.isEmpty, !changes.conflicts.isEmpty else { return }
        let remade = Set(plan.conflicts.map(PullPlan.key))
        let withdrawn = Set(plan.remerged.flatMap { recordedThisRun[$0] ?? [] }.map(PullPlan.key)).subtracting(remade)
        guard !withdrawn.isEmpty else { return }
        let have = Set(plan.incoming.map { PullPlan.key($0.record) })
        let replicaId = workspace.config.replicaId
        for shared in changes.conflicts
        where withdrawn.contains(PullPlan.key(shared.record)) && !have.contains(PullPlan.key(shared.record)) {
            plan.incoming.append(shared)
            if let heard = PullPlanner.lossHeard(shared.record, by: replicaId) { plan.conflictSummaries.append(heard) }
        }
    }

    /// The remote lost the position this tree synced with: the base goes back to what
    /// the remote still shares, and what it lost is sent again (see RewoundHistory.entries).
    /// - Parameter only: the documents concerned (nil: all of them).
    func rebase(onto rewound: RewoundHistory, only: Set<String>? = nil) throws {
        var rewound = rewound
        let base = only.map { documents in state.base.filter { documents.contains($0.key) } } ?? state.base
        if let mergeBase = rewound.mergeBase {
            // Measured from the versions the tree holds, not the ones its cursor names.
            let carried = PushPlan.carried(state.pending)
            for (refId, held) in base where rewound.common[refId] != held {
                guard let (version, bytes) = mergeBase(refId, [held.changesetId] + (carried[refId] ?? [])) else {
                    continue
                }
                rewound.common[refId] = version
                if let bytes { rewound.contents[version.hash] = bytes }
            }
        }
        let entries = RewoundHistory.entries(base: base, pending: state.pending, common: rewound.common)
        let lost = rewound.lost.split(separator: ":").last.map { String($0.prefix(12)) } ?? rewound.lost
        let why =
            rewound.explanation ?? "no longer holds the commit this tree last synced with (\(lost)): a push that "
            + "another one overwrote, or history rewritten (git push --force)"
        report.notices.append(
            "\(remote.displayURL) \(why). Nothing is read as deleted; "
                + "\(RewoundHistory.resent(entries)) version(s) this tree had synced are sent again")
        if options.dryRun {
            foldInMemory(entries)
            return
        }
        guard !entries.isEmpty else { return }
        // The versions the base goes back to are the base of the merges that follow.
        for entry in entries {
            if case let .seen(_, .version(version), _) = entry.event,
                let bytes = rewound.contents[version.hash] ?? rewound.load?(version.hash)
            {
                try workspace.objects.put(bytes, hash: version.hash)
            }
        }
        try workspace.objects.flush()
        try workspace.append(entries)
        try workspace.checkpoint()
    }

    /// After a pull that did not reach its cursor (killed, or a file it meant to write had
    /// changed), the base may hold versions of a remote position the remote has since left
    /// behind (a fork it lost), which a pull from the cursor never meets again: among them
    /// this tree's own push, found there and taken as landed. Each document whose base the
    /// remote does not hold now, and that this pull does not bring, is merged again with
    /// what the remote holds (from their merge base) or, gone from it, sent again, as after
    /// a lost fork. One read of the remote's whole state, only after such a pull.
    private func reconcileBaseAhead(_ changes: inout RemoteChanges) throws {
        let now = try remote.changes(since: nil).checked(url: remote.displayURL)
        var there: [String: RemoteEntry] = [:]
        for entry in now.entries { there[entry.refId] = entry }
        let incoming = Set(changes.entries.map(\.refId))
        let carried = PushPlan.carried(state.pending)
        var rewound = RewoundHistory(lost: state.cursor ?? "", commonPosition: nil, common: [:], contents: [:])
        var affected = Set<String>()
        for (refId, held) in state.base {
            let brought = incoming.contains(refId)
            guard let current = there[refId] else {
                // There, too large to read (see RemoteDocumentCeiling): left as it is.
                if now.withheld.contains(refId) { continue }
                // Gone from the remote's history: sent again. Unless the tree holds the
                // remote's deletion of it aside (its file invalid) and gc purged the
                // tombstone since: then it is deleted, and the hold still meets the fix.
                if !brought && !Self.holdsDeletion(state.held[refId]) { affected.insert(refId) }
                continue
            }
            guard let version = current.version, version != held,
                let (base, bytes) = remote.mergeBase(
                    of: refId, held: [held.changesetId] + (carried[refId] ?? []), theirs: current.changesetId)
            else { continue }
            // One this pull brings merges from the base, which is right where the held
            // version is one the remote's goes back to; where it is not (it was on the
            // chain that lost), measured from it, the tree's edit in it looked unchanged
            // and the remote's version was taken whole.
            // A base with the held version's id and content is the held version, whatever
            // path the remote's ancestry names it by (a version keeps its id when it moves):
            // taken for another, the tree sent its own path again as a lost move (undoing
            // another replica's move, or left pending behind an invalid file).
            let isHeld = base.changesetId == held.changesetId && base.hash == held.hash
            if brought && isHeld { continue }  // the pull carries the remote's changes, moves too
            affected.insert(refId)
            rewound.common[refId] = isHeld ? held : base
            if !isHeld { rewound.contents[base.hash] = try bytes ?? remote.read(Self.entry(of: base)) }
            if !brought { changes.entries.append(current) }
        }
        guard !affected.isEmpty else { return }
        rewound.explanation =
            "no longer holds versions a pull of this tree that did not finish had taken (a push it lost since); "
            + "they are merged again with what it holds now"
        try rebase(onto: rewound, only: affected)
    }

    /// Whether `hold` is a remote deletion waiting for the local file to be valid again.
    /// Whether a pull of `changes` leaves `state` as it is and needs none of its base (a
    /// no-op sync, whose base file is then never read).
    static func changesNothing(_ changes: RemoteChanges, _ state: SyncState) -> Bool {
        changes.entries.isEmpty && !changes.isSnapshot && changes.rewound == nil && changes.conflicts.isEmpty
            && state.pending.isEmpty && state.held.isEmpty && !state.baseAheadOfCursor
    }

    static func holdsDeletion(_ hold: JournalEntry?) -> Bool {
        guard case .held(_, .deleted, _)? = hold?.event else { return false }
        return true
    }

    /// A remote entry for a version, to read its bytes.
    static func entry(of version: DocVersion) -> RemoteEntry {
        RemoteEntry(
            refId: version.refId, changesetId: version.changesetId, hash: version.hash, path: version.path,
            deleted: false, replica: "", time: 0)
    }

    /// The bytes of the version `deletion` deleted: from the object store if this tree
    /// ever held it, else from the remote's history (checked against the hash).
    static func deletedVersion(_ deletion: RemoteEntry, objects: ObjectStore, remote: Remote) -> [UInt8]? {
        if let hash = deletion.hash, let bytes = try? objects.get(hash) { return bytes }
        // A remote that keeps every version by hash (a folder's objects/) has it even
        // after gc purged the deletion's history.
        if let hash = deletion.hash, deletion.path != nil {
            var version = deletion
            version.deleted = false
            if let bytes = try? remote.read(version), ContentHash.of(bytes) == hash { return bytes }
        }
        // Found by its hash, or (a deletion held aside carries none) by its changesetId.
        guard let versions = try? remote.history(of: deletion.refId, path: deletion.path),
            let version = versions.first(where: { v in
                !v.deleted && (deletion.hash.map { v.hash == $0 } ?? (v.changesetId == deletion.changesetId))
            }),
            let bytes = try? remote.content(of: version, refId: deletion.refId),
            deletion.hash.map({ ContentHash.of(bytes) == $0 }) ?? true
        else { return nil }
        return bytes
    }

    /// A dry run's journal: entries folded into the state in memory, never written.
    private func foldInMemory(_ entries: [JournalEntry]) {
        var seq = max(state.journalSeq, state.pending.map(\.seq).max() ?? 0)
        for var entry in entries {
            seq += 1
            entry.seq = seq
            state.fold(entry)
        }
    }

    func planPull(_ changes: RemoteChanges) throws -> PullPlan {
        // Nothing came and nothing waits: a no-op sync builds no view of the tree.
        if changes.entries.isEmpty && changes.conflicts.isEmpty && state.held.isEmpty {
            var plan = PullPlan(cursor: changes.cursor)
            plan.problems = changes.warnings
            return plan
        }
        let store = workspace.conflictStore
        var contents = local.unstoredContents
        let mergeBases = carriedMergeBases(changes, into: &contents)
        let (objects, layout, remote, unstored) = (workspace.objects, workspace.layout, remote, contents)
        let progress = workspace.progress
        let total = changes.entries.count
        var read = 0
        var planner = PullPlanner(
            base: state.baseVersions, pending: state.pending, held: state.held, tracked: state.trackedVersions,
            unreadable: local.unreadablePaths, config: workspace.config, replicaId: workspace.config.replicaId,
            clock: workspace.clock,
            readRemote: {
                read += 1
                progress?(.step(.pull, done: read, total: total))
                return try remote.read($0)
            },
            readObject: { try unstored[$0] ?? objects.get($0) },
            readDeleted: { Self.deletedVersion($0, objects: objects, remote: remote) },
            isOccupied: { FileSystem.exists(layout.absolute($0)) },
            knownConflict: { store.record(refId: $0, storeName: $1) },
            storeFetched: options.dryRun ? nil : { hash, bytes in try objects.put(bytes, hash: hash) })
        planner.userVersions = userVersions
        planner.unknownReasons = Dictionary(local.unknown.map { ($0.path, $0.reason) }, uniquingKeysWith: { a, _ in a })
        let unentered = local.unentered
        if !unentered.unentered.isEmpty { planner.unenteredReason = { unentered.unenteredReason(for: $0) } }
        planner.landedPending = landedPending
        planner.mergeBases = mergeBases
        return try planner.plan(changes, time: FileSystem.currentTimeNanos / 1_000_000)
    }

    /// For documents whose pending content carries versions beyond the base (after a lost
    /// fork, see `JournalEntry.madeFrom`) and that changed on the remote: the merge base of
    /// all of them and the remote's version, where the remote can tell (its bytes go with
    /// `contents` when it is a merge of several). Measured from the base alone, a value
    /// the carried version had, and the remote has since changed, looked changed on both
    /// sides, and the older one could win.
    private func carriedMergeBases(_ changes: RemoteChanges, into contents: inout [String: [UInt8]]) -> [String:
        DocVersion]
    {
        let carried = PushPlan.carried(state.pending)
        guard !carried.isEmpty || userVersions.values.contains(where: { !$0.madeFrom.isEmpty }) else { return [:] }
        var bases: [String: DocVersion] = [:]
        for entry in changes.entries where !entry.deleted {
            // Where a retry of the run merges again from the user's version, what that
            // version was made from (see `userVersions`); else the tree's.
            let user = userVersions[entry.refId]
            let base = user != nil ? user!.base : state.baseVersions[entry.refId]
            // A document sent again as new after a lost fork has no base: what its content
            // carries is all it is made from (measured from nothing, every field collided).
            let held = base.map { [$0.changesetId] } ?? []
            guard let from = user?.madeFrom ?? carried[entry.refId], !from.isEmpty, !held.contains(entry.changesetId),
                let (version, bytes) = remote.mergeBase(
                    of: entry.refId, held: held + from, theirs: entry.changesetId)
            else { continue }
            if let bytes { contents[version.hash] = bytes }
            bases[entry.refId] = version
        }
        return bases
    }

    /// The base and local version of every document a pull of the run reconciled while it
    /// had local actions pending, from before the run changed it: what the user had (see
    /// `PullPlanner.userVersions`). Kept for the whole run, so every retry of a push that
    /// lost a race merges from them again.
    var userVersions: [String: PullPlanner.UserVersion] = [:]
    /// Versions of this tree's pending actions that a commit of its own already holds
    /// (pushes that landed before a killed run journaled them; see
    /// `Remote.ownCommitsHold`), asked once per run, before its first pull changes them.
    private(set) var landedPending: [String: Set<String>] = [:]
    private var askedLandedPending = false

    func askLandedPending() {
        guard !askedLandedPending else { return }
        askedLandedPending = true
        var candidates: [String: Set<String>] = [:]
        var oldest = Int64.max
        for action in state.pending {
            guard let refId = action.refId, let version = action.resultingVersion else { continue }
            candidates[refId, default: []].insert(version.changesetId)
            oldest = min(oldest, action.time)
        }
        guard !candidates.isEmpty else { return }
        landedPending = remote.ownCommitsHold(candidates, since: oldest)
    }
    /// The conflict records this run's pulls made, by refId: a retry that decides a
    /// document again from the user's versions takes back the ones it no longer makes.
    var recordedThisRun: [String: [ConflictStore.Record]] = [:]
    /// The conflict records the last applied pull made, by refId (see `forgetDecisions`).
    var recordedByLastPull: [String: [ConflictStore.Record]] = [:]

    private func rememberUserVersions(_ changes: RemoteChanges) {
        guard !state.pending.isEmpty else { return }
        let pendingRefIds = Set(state.pending.compactMap(\.refId))
        // Each pull of the run adds the documents it meets for the first time: no earlier
        // pull changed them, so their base and file are still the user's (a retry can meet
        // a document the first pull did not, and the next retry meets it again).
        // Held versions meet the user's fix in this pull as well.
        let touched = (changes.entries.map(\.refId) + state.held.keys).filter {
            pendingRefIds.contains($0) && userVersions[$0] == nil
        }
        guard !touched.isEmpty else { return }
        let tracked = state.trackedVersions
        let carried = PushPlan.carried(state.pending)
        for refId in touched {
            userVersions[refId] = PullPlanner.UserVersion(
                base: state.baseVersions[refId], local: tracked[refId], madeFrom: carried[refId] ?? [])
        }
    }
}
