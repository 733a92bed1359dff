import Foundation

public struct SyncOptions: Sendable {
    public var dryRun = false
    /// Allow a push that deletes more than `push.maxDeleteShare` of the remote.
    public var force = false
    public init(dryRun: Bool = false, force: Bool = false) {
        self.dryRun = dryRun
        self.force = force
    }
}

extension Workspace {
    public enum Direction: Sendable { case pull, push, both }

    /// `pull`, `push` and `sync`: record local changes, then talk to the remote. A push
    /// that finds the remote moved pulls and reconciles first, then retries: it never
    /// overwrites a remote version it has not seen.
    public func run(_ direction: Direction, options: SyncOptions = SyncOptions()) throws -> SyncReport {
        var report = SyncReport()
        report.dryRun = options.dryRun
        report.warnings += warnings
        let local = try recordLocalChanges(write: !options.dryRun, report: &report)
        if options.dryRun {
            // Nothing is journaled in a dry run; plan as if it had been (read-only: the
            // state is never saved).
            for (i, var action) in local.actions.enumerated() {
                action.seq = journal.nextSeq + i
                state.fold(action)
            }
        }
        let remote = try makeRemote()
        do {
            // A held version waits for a pull to meet the fixed file, even on `push`.
            if direction != .push || options.dryRun || !state.held.isEmpty {
                try pull(from: remote, unreadable: local.unreadablePaths, dryRun: options.dryRun, unstored: local.unstoredContents, report: &report)
            }
            if direction != .pull {
                try push(to: remote, unreadable: local.unreadablePaths, options: options, report: &report)
            }
            if !options.dryRun { setLastSync() }
        } catch let error as RemoteError {
            if case .unreachable = error {
                try checkOfflineLimit(error)
                report.remoteUnreachable = error.localizedDescription
            } else {
                throw error
            }
        }
        report.waiting = waitingVersions
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    /// Remote versions held aside until their local file is valid again, as
    /// "path: remote version <changesetId>".
    var waitingVersions: [String] {
        let tracked = state.tracked
        return state.held.values.compactMap { hold in
            hold.refId.flatMap { tracked[$0]?.path }.map { "\($0): remote version \(hold.changesetId ?? "?")" }
        }.sorted()
    }

    // MARK: Pull

    /// Plans the pull (see PullPlanner) and, unless `dryRun`, applies the plan.
    func pull(from remote: Remote, unreadable: Set<String>, dryRun: Bool, unstored: [String: [UInt8]] = [:], report: inout SyncReport) throws {
        let changes = try remote.changes(since: state.cursor).addingPurgedDeletions(base: state.base)
        let plan = try planPull(changes, unreadable: unreadable, remote: remote, unstored: unstored)
        report.problems += plan.problems
        report.notices += plan.notices
        report.pulled += plan.pulled
        report.conflicts += plan.conflictSummaries
        if dryRun {
            // In memory only (a dry run never saves the state): the push that follows
            // plans from the state this pull would leave.
            var seq = max(state.journalSeq, state.pending.map(\.seq).max() ?? 0)
            for var entry in plan.batch {
                seq += 1
                entry.seq = seq
                state.fold(entry)
            }
            return
        }
        try apply(plan, remote: remote, report: &report)
    }

    /// - Parameter unstored: contents of recorded versions a dry run did not store.
    func planPull(_ changes: RemoteChanges, unreadable: Set<String>, remote: Remote, unstored: [String: [UInt8]] = [:]) throws -> PullPlan {
        let store = conflictStore
        let planner = PullPlanner(base: state.base, pending: state.pending, held: state.held, tracked: state.tracked, unreadable: unreadable,
                                  config: config, replicaId: config.replicaId, clock: clock,
                                  readRemote: { try remote.read($0) }, readObject: { [objects] in try unstored[$0] ?? objects.get($0) },
                                  isOccupied: { [layout] in FileSystem.exists(layout.absolute($0)) },
                                  knownConflict: { store.record(refId: $0, changesetId: $1) })
        return try planner.plan(changes, time: FileSystem.currentTimeNanos / 1_000_000)
    }

    /// Carries out a pull plan, in the order PullPlan states; safe to die after any step.
    func apply(_ plan: PullPlan, remote: Remote, report: inout SyncReport) throws {
        if plan.isEmpty && plan.settledHolds.isEmpty {
            if plan.cursor != state.cursor {
                try append([JournalEntry(kind: .cursor, cursor: plan.cursor)])
                try checkpoint()
                // Why: tombstone gc counts a replica as up to date only from its record.
                try? remote.noteReplica(replicaInfo, seen: plan.cursor)
            }
            return
        }
        for (hash, bytes) in plan.objects.sorted(by: { $0.key < $1.key }) { try objects.put(bytes, hash: hash) }
        objects.flush()
        for record in plan.conflicts { try conflictStore.keep(record, bytes: plan.conflictBytes[PullPlan.key(record)]) }
        for shared in plan.incoming { _ = try conflictStore.receive(shared) }

        let baseBefore = Dictionary(plan.fileOperations.compactMap(\.refId).map { ($0, state.base[$0]) }, uniquingKeysWith: { a, _ in a })
        try append(plan.batch)
        try CrashPoint.hit("pull.after-journal")
        // Removals first, so a document can move onto a path another one just left.
        let io = SafeTreeIO(root: layout.root)
        var skipped = Set<String>()
        func skip(_ op: JournalEntry, _ message: String) {
            report.warnings.append(message)
            if let refId = op.refId { skipped.insert(refId) }
        }
        let fileOps = plan.fileOperations
        for op in fileOps {
            guard let from = op.fromPath, op.resultingVersion?.path != from else { continue }
            if let current = try? io.readIfPresent(from), ContentHash.of(current) != op.fromHash {
                skip(op, "\(from): changed on disk while syncing (or tracked but in .docsyncignore); left in place, the remote version waits for the next sync")
                continue
            }
            try io.remove(from)
            index.remove(path: from)
        }
        for op in fileOps {
            guard let target = op.resultingVersion, !skipped.contains(op.refId ?? "") else { continue }
            if target.path == op.fromPath, let current = try? io.readIfPresent(target.path), ContentHash.of(current) != op.fromHash {
                skip(op, "\(target.path): changed on disk while syncing (or tracked but in .docsyncignore); left in place, the remote version waits for the next sync")
                continue
            }
            do {
                try io.write(target.path, try objects.get(target.hash))
            } catch let refused as SafeTreeIO.Refused {
                report.problems.append("refused to write \(refused.description)")
                skipped.insert(op.refId ?? "")
                continue
            }
            if let st = try? FileSystem.linkStatus(layout.absolute(target.path)) {
                index.record(path: target.path, stat: st, hash: target.hash, refId: target.refId, changesetId: target.changesetId,
                             readAtNanos: FileSystem.currentTimeNanos)
            }
        }
        // A skipped document keeps its old base, so the local file is compared with what
        // it really came from next time (and conflicts are kept, not overwritten).
        let reverts = skipped.sorted().map { refId -> JournalEntry in
            let old = baseBefore[refId] ?? nil
            return JournalEntry(kind: .seen, refId: refId, changesetId: old?.changesetId ?? "", hash: old?.hash, path: old?.path,
                                deleted: old == nil, reason: "not applied")
        }
        if !reverts.isEmpty { try append(reverts) }
        try CrashPoint.hit("pull.after-files")
        if skipped.isEmpty {
            try append([JournalEntry(kind: .cursor, cursor: plan.cursor)])
            try? remote.noteReplica(replicaInfo, seen: plan.cursor)
        }
        try clock.persist()
        try checkpoint()
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

    func planPush(loadContent: Bool) throws -> PushPlan {
        var plan = PushPlan()
        let tracked = state.tracked
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
            let content = loadContent ? try final.map { try objects.get($0.hash) } : nil
            plan.writes.append(RemoteWrite(refId: refId, new: final, previous: previous, content: content,
                                           deletedChangesetId: final == nil ? (previous?.changesetId ?? action.changesetId) : nil))
        }
        plan.conflicts = conflictStore.unshared()
        plan.summaries = plan.writes.map { w in
            ChangeSummary(kind: w.new == nil ? "delete" : (w.previous == nil ? "create" : (w.previous?.hash == w.new?.hash ? "rename" : "update")),
                          path: w.new?.path ?? w.previous?.path ?? "", refId: w.refId, changesetId: w.new?.changesetId,
                          fromPath: w.previous?.path != w.new?.path && w.new != nil ? w.previous?.path : nil)
        }
        return plan
    }

    func push(to remote: Remote, unreadable: Set<String>, options: SyncOptions, report: inout SyncReport) throws {
        var attempts = 0
        while true {
            attempts += 1
            let plan = try planPush(loadContent: !options.dryRun)
            if plan.isEmpty {
                // Nothing to send, but say so only if the remote is there.
                if attempts == 1 { _ = try remote.changes(since: state.cursor) }
                return
            }
            let deletes = plan.writes.filter { $0.new == nil && $0.previous != nil }.count
            let total = state.base.count
            let share = config.number("push.maxDeleteShare")
            if !options.force, deletes > 1, Double(deletes) > share * Double(total) {
                throw Failure.tooManyDeletes(count: deletes, total: total, share: share)
            }
            if options.dryRun {
                report.pushed += plan.summaries
                return
            }
            if plan.writes.isEmpty && plan.conflicts.isEmpty {
                try append([JournalEntry(kind: .done, seqs: plan.finished, reason: "pushed")])
                try checkpoint()
                return
            }
            do {
                let cursor = try remote.commit(plan.writes, conflicts: plan.conflicts, expecting: state.cursor, replica: replicaInfo)
                try CrashPoint.hit("push.after-remote-commit")
                var entries = [JournalEntry(kind: .cursor, cursor: cursor)]
                if !plan.finished.isEmpty { entries.insert(JournalEntry(kind: .done, seqs: plan.finished, reason: "pushed"), at: 0) }
                try append(entries)
                try checkpoint()
                try conflictStore.markShared(plan.conflicts.map(\.record))
                report.pushed += plan.summaries
                return
            } catch RemoteError.moved {
                // Why `contended`: this is "busy, try again later" (exit 75 for cron), not an
                // error; it used to exit 1 when many replicas pushed at once.
                guard attempts < 5 else {
                    throw Failure.contended("the remote kept changing during 5 push attempts (other replicas are pushing); local changes stay recorded, try again shortly")
                }
                try pull(from: remote, unreadable: unreadable, dryRun: false, report: &report)
            } catch RemoteError.locked(let url, let holder) {
                guard attempts < 5 else { throw RemoteError.locked(url: url, holder: holder) }
            }
        }
    }
}
