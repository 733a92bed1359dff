import Foundation

/// One push, pull or sync against one remote: what the run was asked (`options`), what
/// recording the tree found (`local`), and what it has done so far (`report`). The
/// workspace owns the replica and its transactions (journal, state, objects); a session
/// plans each step as a value and has the workspace carry it out.
final class SyncSession {
    let workspace: Workspace
    let remote: Remote
    let options: SyncOptions
    let local: ChangeRecorder.Result
    var report: SyncReport

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
        var changes = try prefetched ?? remote.changes(since: state.cursor).checked(url: remote.displayURL)
        if let rewound = changes.rewound { try rebase(onto: rewound) }
        for note in changes.notArrived where !report.notices.contains(note) { report.notices.append(note) }
        changes = changes.addingPurgedDeletions(base: state.base)
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
                    && ($0.stored == "deletion") == (settled.record.deleted == true)
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
    func rebase(onto rewound: RewoundHistory) throws {
        var rewound = rewound
        if let mergeBase = rewound.mergeBase {
            // Measured from the versions the tree holds, not the ones its cursor names.
            for (refId, held) in state.base where rewound.common[refId] != held {
                guard let (version, bytes) = mergeBase(refId, held.changesetId) else { continue }
                rewound.common[refId] = version
                if let bytes { rewound.contents[version.hash] = bytes }
            }
        }
        let entries = RewoundHistory.entries(base: state.base, pending: state.pending, common: rewound.common)
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
        let (objects, layout, remote, unstored) = (workspace.objects, workspace.layout, remote, local.unstoredContents)
        let progress = workspace.progress
        let total = changes.entries.count
        var read = 0
        var planner = PullPlanner(
            base: state.base, pending: state.pending, held: state.held, tracked: state.tracked,
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
        return try planner.plan(changes, time: FileSystem.currentTimeNanos / 1_000_000)
    }

    /// The base and local version of every document a pull of the run reconciled while it
    /// had local actions pending, from before the run changed it: what the user had (see
    /// `PullPlanner.userVersions`). Kept for the whole run, so every retry of a push that
    /// lost a race merges from them again.
    private var userVersions: [String: (base: DocVersion?, local: DocVersion?)] = [:]
    /// The conflict records this run's pulls made, by refId: a retry that decides a
    /// document again from the user's versions takes back the ones it no longer makes.
    private var recordedThisRun: [String: [ConflictStore.Record]] = [:]

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
        let tracked = state.tracked
        for refId in touched { userVersions[refId] = (state.base[refId], tracked[refId]) }
    }

    /// Carries out a pull plan, in the order PullPlan states; safe to die after any step.
    func apply(_ plan: PullPlan) throws {
        if plan.isEmpty && plan.settledHolds.isEmpty {
            if plan.cursor != state.cursor {
                try workspace.append([JournalEntry(.cursor(plan.cursor))])
                try workspace.checkpoint()
            }
            // Why: tombstone gc counts a replica as up to date only from its record. With
            // nothing new the record is rewritten only once it is an hour old, so
            // `docsync replicas` still shows this replica as syncing.
            try? remote.noteReplica(workspace.replicaInfo, seen: plan.cursor)
            return
        }
        for (hash, bytes) in plan.objects.sorted(by: { $0.key < $1.key }) {
            try workspace.objects.put(bytes, hash: hash)
        }
        try workspace.objects.flush()
        for record in plan.conflicts {
            try workspace.conflictStore.keep(record, bytes: plan.conflictBytes[PullPlan.key(record)])
        }
        let kept = Set(plan.conflicts.map(PullPlan.key))
        for refId in plan.remerged {
            for record in recordedThisRun[refId] ?? [] where !kept.contains(PullPlan.key(record)) {
                try workspace.conflictStore.withdraw(record)
            }
            recordedThisRun[refId] = nil
        }
        for record in plan.conflicts { recordedThisRun[record.refId, default: []].append(record) }
        for shared in plan.incoming { _ = try workspace.conflictStore.receive(shared) }

        let fileOps = plan.fileOperations
        let baseBefore = Dictionary(fileOps.map { ($0.refId, state.base[$0.refId]) }, uniquingKeysWith: { a, _ in a })
        try workspace.append(plan.batch)
        try CrashPoint.hit("pull.after-journal")
        // Removals first, so a document can move onto a path another one just left.
        let io = SafeTreeIO(root: workspace.layout.root)
        let schemas = workspace.recordSchemas
        var skipped = Set<String>()
        func skip(_ op: JournalEntry.FileOperation, _ message: String) {
            report.warnings.append(message)
            skipped.insert(op.refId)
        }
        // Each pulled document is reported as soon as its file is in place (when anybody
        // listens: at 100,000 documents the grouping alone is megabytes).
        var unreported = workspace.progress == nil ? [:] : Dictionary(grouping: plan.pulled, by: \.refId)
        workspace.index.reserve(fileOps.count)
        var finishedOps = 0
        func applied(_ op: JournalEntry.FileOperation) {
            finishedOps += 1
            for summary in unreported.removeValue(forKey: op.refId) ?? [] {
                workspace.progress?(.document(.pull, summary))
            }
            workspace.progress?(.step(.pull, done: finishedOps, total: fileOps.count))
        }
        for op in fileOps {
            guard let from = op.fromPath, op.result?.path != from else { continue }
            if let current = try? io.readIfPresent(from), ContentHash.of(current) != op.fromHash {
                skip(
                    op,
                    "\(from): changed on disk while syncing (or tracked but in .docsyncignore); left in place, the remote version waits for the next sync"
                )
                continue
            }
            try io.remove(from)
            workspace.index.remove(path: from)
            if op.result == nil { applied(op) }
        }
        for op in fileOps {
            guard let target = op.result, !skipped.contains(op.refId) else { continue }
            if target.path == op.fromPath, let current = try? io.readIfPresent(target.path),
                ContentHash.of(current) != op.fromHash
            {
                skip(
                    op,
                    "\(target.path): changed on disk while syncing (or tracked but in .docsyncignore); left in place, the remote version waits for the next sync"
                )
                continue
            }
            do {
                // Merge results are in the plan; what was fetched was stored while planning
                // (read back and checked against its hash here).
                let content = try plan.objects[target.hash] ?? workspace.objects.get(target.hash)
                // Not fsynced one by one: one flush below, before the cursor moves past them.
                try io.write(target.path, content, durable: false)
                // Applied all the same: another replica may check against an older schema,
                // and refusing it would leave this tree behind everyone else.
                if schemas.mightApply(to: content) {
                    for problem in schemas.verdict(path: target.path, bytes: content).problems {
                        report.warnings.append(
                            "pulled \(problem.description) (the record fails its schema; it was written, fix it here or where it was edited)"
                        )
                    }
                }
            } catch let refused as SafeTreeIO.Refused {
                report.problems.append(.other("refused to write \(refused.description)"))
                skipped.insert(op.refId)
                continue
            }
            if let st = try? FileSystem.linkStatus(workspace.layout.absolute(target.path)) {
                workspace.index.record(
                    path: target.path, stat: st, hash: target.hash, refId: target.refId,
                    changesetId: target.changesetId,
                    readAtNanos: FileSystem.currentTimeNanos)
            }
            applied(op)
        }
        workspace.progress?(.finished(.pull))
        // One flush for every file written and removed above, before anything is journaled
        // after them: the `apply` entries redo a file a crash cut short only until the
        // cursor and checkpoint below move past them. Why: one fsync per file (and per
        // folder) made a 10,000-document clone spend most of its time waiting on the disk.
        FileSystem.syncFilesystem(containing: workspace.layout.root)
        // A skipped document keeps its old base, so the local file is compared with what
        // it really came from next time (and conflicts are kept, not overwritten).
        let reverts = skipped.sorted().map { refId -> JournalEntry in
            let old = baseBefore[refId] ?? nil
            return JournalEntry.notApplied(refId: refId, base: old)
        }
        if !reverts.isEmpty { try workspace.append(reverts) }
        try CrashPoint.hit("pull.after-files")
        if skipped.isEmpty {
            try workspace.append([JournalEntry(.cursor(plan.cursor))])
            try? remote.noteReplica(workspace.replicaInfo, seen: plan.cursor)
        }
        try workspace.clock.persist()
        try workspace.checkpoint()
    }

    // MARK: Push

    /// What a push sends: the latest recorded version of every document with pending
    /// actions (nothing for a document whose remote version is held aside), and the
    /// conflict records not yet shared.
    struct PushPlan {
        var writes: [RemoteWrite] = []
        var finished: [Int] = []
        var conflicts: [SharedConflict] = []
        var summaries: [ChangeSummary] = []
        var isEmpty: Bool { finished.isEmpty && conflicts.isEmpty }
    }

    func planPush() throws -> PushPlan {
        var plan = PushPlan()
        plan.writes.reserveCapacity(state.pending.count)
        let tracked = state.tracked
        let movedAt = SyncState.moveTimes(state.pending)
        var carried: [String: [String]] = [:]
        for action in state.pending {
            if let refId = action.refId, let from = action.madeFrom { carried[refId, default: []] += from }
        }
        var seen = Set<String>()
        for action in state.pending {
            guard let refId = action.refId else {
                plan.finished.append(action.seq)
                continue
            }
            // Its local file was invalid when a remote version arrived: pushing it now
            // would overwrite that version unseen. It goes after the pull that merges them.
            if state.held[refId] != nil { continue }
            plan.finished.append(action.seq)
            guard seen.insert(refId).inserted else { continue }
            let final = tracked[refId]
            let previous = state.base[refId]
            if final == previous { continue }
            let objects = workspace.objects
            var write = RemoteWrite(
                refId: refId, new: final, previous: previous,
                deletedChangesetId: final == nil ? (previous?.changesetId ?? action.changesetId) : nil,
                loading: { try final.map { try objects.get($0.hash) } })
            if let final, final.path != previous?.path, previous != nil { write.movedAt = movedAt[refId] }
            write.parents = Self.parents(previous: previous, carried: carried[refId] ?? [], new: final)
            plan.writes.append(write)
        }
        plan.conflicts = workspace.conflictStore.unshared()
        plan.summaries = plan.writes.map { w in
            ChangeSummary(
                kind: .between(w.previous, w.new),
                path: w.new?.path ?? w.previous?.path ?? "", refId: w.refId, changesetId: w.new?.changesetId,
                fromPath: w.previous?.path != w.new?.path && w.new != nil ? w.previous?.path : nil)
        }
        return plan
    }

    /// What a pushed version is made from: the version the tree synced, and the
    /// published versions its content carries beyond it; never itself.
    static func parents(previous: DocVersion?, carried: [String], new: DocVersion?) -> [String] {
        var out: [String] = []
        for id in [previous?.changesetId].compactMap({ $0 }) + carried where id != new?.changesetId && !out.contains(id)
        { out.append(id) }
        return out
    }

    func push() throws {
        var attempts = 0
        while true {
            attempts += 1
            let plan = try planPush()
            if plan.isEmpty {
                // Nothing to send, but say so only if the remote is there.
                if attempts == 1 { _ = try remote.changes(since: state.cursor) }
                return
            }
            let deletes = plan.writes.filter { $0.new == nil && $0.previous != nil }.count
            let total = state.base.count
            let share = workspace.config.number("push.maxDeleteShare")
            if !options.force, deletes > 1, Double(deletes) > share * Double(total) {
                // Reported, not thrown: what the pull before it did is still the run's news.
                let deletions = plan.writes.compactMap { w in
                    w.new == nil
                        ? w.previous.map {
                            ChangeSummary(kind: .delete, path: $0.path, refId: w.refId, changesetId: $0.changesetId)
                        } : nil
                }
                report.refusedPush = RefusedPush(
                    count: deletes, total: total, maxDeleteShare: share,
                    deletions: deletions.sorted { $0.path < $1.path })
                return
            }
            if options.dryRun {
                report.pushed += plan.summaries
                return
            }
            if plan.writes.isEmpty && plan.conflicts.isEmpty {
                try workspace.append([JournalEntry(.done(refId: nil, seqs: plan.finished, reason: .pushed))])
                try workspace.checkpoint()
                return
            }
            do {
                let progress = workspace.progress
                // Only when somebody listens: at 100,000 documents the grouping is megabytes.
                let summaries = progress == nil ? [:] : Dictionary(grouping: plan.summaries, by: \.refId)
                remote.writeProgress = { write, done, total in
                    for summary in summaries[write.refId] ?? [] { progress?(.document(.push, summary)) }
                    progress?(.step(.push, done: done, total: total))
                }
                defer {
                    remote.writeProgress = nil
                    progress?(.finished(.push))
                }
                let cursor = try remote.commit(
                    plan.writes, conflicts: plan.conflicts, expecting: state.cursor, replica: workspace.replicaInfo)
                try CrashPoint.hit("push.after-remote-commit")
                var entries = [JournalEntry(.cursor(cursor))]
                if !plan.finished.isEmpty {
                    entries.insert(JournalEntry(.done(refId: nil, seqs: plan.finished, reason: .pushed)), at: 0)
                }
                try workspace.append(entries)
                try workspace.checkpoint()
                try workspace.conflictStore.markShared(plan.conflicts.map(\.record))
                report.pushed += plan.summaries
                return
            } catch RemoteError.moved {
                // Why `contended`: this is "busy, try again later" (exit 75 for cron), not an
                // error; it used to exit 1 when many replicas pushed at once.
                guard attempts < 5 else {
                    throw Workspace.Failure.contended(
                        "the remote kept changing during 5 push attempts (other replicas are pushing); local changes stay recorded, try again shortly"
                    )
                }
                try pull()
            } catch RemoteError.locked(let url, let holder) {
                guard attempts < 5 else { throw RemoteError.locked(url: url, holder: holder) }
            }
        }
    }
}
