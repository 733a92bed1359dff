import Foundation

extension SyncSession {
    func planPush() throws -> PushPlan {
        var plan = PushPlan()
        plan.writes.reserveCapacity(state.pending.count)
        // Without pending actions there is no write to plan (and a no-op sync looks no
        // version up); conflict records may still go.
        if !state.pending.isEmpty { try state.readBase() }
        let tracked = state.trackedVersions
        let movedAt = SyncState.moveTimes(state.pending)
        askLandedPending()
        var carried = PushPlan.carried(state.pending)
        let pendingDocuments = landedPending.isEmpty ? [] : Set(state.pending.compactMap(\.refId))
        for (refId, ids) in landedPending where pendingDocuments.contains(refId) {
            carried[refId, default: []] += ids.sorted()
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
            let previous = state.baseVersions[refId]
            if final == previous { continue }
            let objects = workspace.objects
            var write = RemoteWrite(
                refId: refId, new: final, previous: previous,
                deletedChangesetId: final == nil ? (previous?.changesetId ?? action.changesetId) : nil,
                loading: { try final.map { try objects.get($0.hash) } })
            if let final, final.path != previous?.path, previous != nil { write.movedAt = movedAt[refId] }
            write.parents = PushPlan.parents(previous: previous, carried: carried[refId] ?? [], new: final)
            write.sentAgain = final.map { (carried[refId] ?? []).contains($0.changesetId) } ?? false
            plan.writes.append(write)
        }
        plan.conflicts = workspace.conflictStore.unshared()
        plan.summaries = plan.writes.map { w in
            ChangeSummary(from: w.previous, to: w.new, refId: w.refId, changesetId: w.new?.changesetId)
        }
        return plan
    }

    /// Push: plan, guard, dry run, commit; a remote that moved meanwhile is pulled and
    /// merged, and the push planned again (five attempts, then "try again later").
    func push() throws {
        var attempts = 0
        while true {
            attempts += 1
            let plan = try planPush()
            if plan.isEmpty {
                // Nothing to send, but say so only if the remote is there.
                if attempts == 1 && !remoteAnswered { _ = try remote.changes(since: state.cursor) }
                return
            }
            if let refused = refusal(of: plan) {
                // Reported, not thrown: what the pull before it did is still the run's news.
                report.refusedPush = refused
                return
            }
            if options.dryRun {
                report.pushed += plan.summaries
                return
            }
            do {
                try commit(plan)
                return
            } catch RemoteError.moved {
                // "Busy, try again later" (exit 75 for cron), not an error.
                guard attempts < 5 else {
                    throw Workspace.Failure.contended(
                        "the remote kept changing during 5 push attempts (other replicas are pushing); local changes stay recorded, try again shortly"
                    )
                }
                try pull()
            } catch RemoteError.locked(let url, let holder) {
                guard attempts < 5 else { throw RemoteError.locked(url: url, holder: holder) }
                // A lock is held while its holder writes: give it that long (1 s in all).
                usleep(useconds_t(100_000 * attempts))
            }
        }
    }

    /// The delete guard: a push that would delete more than `push.maxDeleteShare` of the
    /// remote's documents is refused unless forced (nil: it may go).
    func refusal(of plan: PushPlan) -> RefusedPush? {
        let deletes = plan.writes.filter { $0.new == nil && $0.previous != nil }.count
        let total = state.baseCount
        let share = workspace.config.number("push.maxDeleteShare")
        guard !options.force, deletes > 1, Double(deletes) > share * Double(total) else { return nil }
        let deletions = plan.writes.compactMap { w in
            w.new == nil
                ? w.previous.map {
                    ChangeSummary(kind: .delete, path: $0.path, refId: w.refId, changesetId: $0.changesetId)
                }
                : nil
        }
        return RefusedPush(
            count: deletes, total: total, maxDeleteShare: share, deletions: deletions.sorted { $0.path < $1.path })
    }

    /// Sends the plan as one commit that lands only on the state this tree read, then
    /// journals what is on the remote now. Throws `RemoteError.moved` if it moved.
    func commit(_ plan: PushPlan) throws {
        if plan.writes.isEmpty && plan.conflicts.isEmpty {
            try workspace.append([JournalEntry(.done(refId: nil, seqs: plan.finished, reason: .pushed))])
            try workspace.checkpoint()
            return
        }
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
    }
}
