import Foundation

extension SyncSession {
    /// Carries out a pull plan, in the order PullPlan states; safe to die after any step.
    func apply(_ plan: PullPlan) throws {
        recordedByLastPull = [:]
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
        try keepObjectsAndConflicts(of: plan)
        try CrashPoint.hit("pull.after-records")

        let fileOps = plan.fileOperations
        // Only the documents that had a base: a clone's 100,000 had none, and a table of as
        // many nils was a tenth of its peak.
        var baseBefore: [String: DocVersion] = [:]
        for op in fileOps where baseBefore[op.refId] == nil {
            if let base = state.baseVersions[op.refId] { baseBefore[op.refId] = base }
        }
        let superseded = supersededActions(by: plan.batch)
        // The ids the plan issued (merges), kept before the journal names them.
        try workspace.clock.persist()
        try workspace.append(plan.batch)
        try CrashPoint.hit("pull.after-journal")
        let skipped = try writeFiles(of: plan, fileOps)
        // One flush for every file written and removed above, before anything is journaled
        // after them: the `apply` entries redo a file a crash cut short only until the
        // cursor and checkpoint below move past them. Why: one fsync per file (and per
        // folder) made a 10,000-document clone spend most of its time waiting on the disk.
        FileSystem.syncFilesystem(containing: workspace.layout.root)
        // A skipped document keeps its old base and the user's pending actions, so the
        // local file is compared with what it really came from next time (and conflicts
        // are kept, not overwritten).
        let pendingNow = pendingActions(of: skipped)
        let reverts = skipped.sorted().flatMap { refId in
            JournalEntry.notApplied(
                refId: refId, base: baseBefore[refId], superseded: superseded[refId] ?? [],
                pendingNow: pendingNow[refId] ?? [])
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

    /// The pending local actions `batch` finishes as superseded (the user's, which a pull
    /// decided over), by document: read before the batch is journaled. Only those, not
    /// every document the pull writes: a clone's batch has none.
    private func supersededActions(by batch: [JournalEntry]) -> [String: [JournalEntry]] {
        var seqs: [String: Set<Int>] = [:]
        for entry in batch {
            if case .done(.some(let refId), let finished, .superseded) = entry.event {
                seqs[refId, default: []].formUnion(finished)
            }
        }
        guard !seqs.isEmpty else { return [:] }
        var actions: [String: [JournalEntry]] = [:]
        for action in state.pending {
            if let refId = action.refId, seqs[refId]?.contains(action.seq) == true {
                actions[refId, default: []].append(action)
            }
        }
        return actions
    }

    /// The pending local actions of `refIds`, by document.
    private func pendingActions(of refIds: Set<String>) -> [String: [JournalEntry]] {
        guard !refIds.isEmpty else { return [:] }
        var actions: [String: [JournalEntry]] = [:]
        for action in state.pending {
            if let refId = action.refId, refIds.contains(refId) { actions[refId, default: []].append(action) }
        }
        return actions
    }

    /// The plan's objects (merge results), its conflict records (withdrawing those an
    /// earlier pull of this run made and this one no longer does) and the records other
    /// replicas shared, kept before anything is journaled.
    private func keepObjectsAndConflicts(of plan: PullPlan) throws {
        for (hash, bytes) in plan.objects.sorted(by: { $0.key < $1.key }) {
            try workspace.objects.put(bytes, hash: hash)
        }
        try workspace.objects.flush()
        for record in plan.conflicts {
            // Withdrawn first: a crash in between leaves the loss unrecorded and unjournaled,
            // and the next run records it again.
            for earlier in workspace.conflictStore.earlierTries(of: record) {
                try workspace.conflictStore.withdraw(earlier)
            }
            try workspace.conflictStore.keep(record, bytes: plan.conflictBytes[PullPlan.key(record)])
        }
        let kept = Set(plan.conflicts.map(PullPlan.key))
        for refId in plan.remerged {
            for record in recordedThisRun[refId] ?? [] where !kept.contains(PullPlan.key(record)) {
                try workspace.conflictStore.withdraw(record)
            }
            recordedThisRun[refId] = nil
        }
        recordedByLastPull = Dictionary(grouping: plan.conflicts, by: \.refId)
        for record in plan.conflicts { recordedThisRun[record.refId, default: []].append(record) }
        for shared in plan.incoming { _ = try workspace.conflictStore.receive(shared) }
    }

    /// Removes the files that leave or move, then writes the new versions (checked against
    /// the file still holding what the plan read); returns the documents skipped (a file
    /// changed meanwhile, or a write refused), which keep their old base.
    private func writeFiles(of plan: PullPlan, _ fileOps: some Sequence<JournalEntry.FileOperation>) throws -> Set<
        String
    > {
        let io = SafeTreeIO(root: workspace.layout.root)
        var skipped = Set<String>()
        let count = fileOps.reduce(0) { n, _ in n + 1 }
        var progress = AppliedProgress(session: self, plan: plan, total: count)
        workspace.index.reserve(count)
        // Removals first, so a document can move onto a path another one just left.
        for op in fileOps {
            guard let from = op.fromPath, op.result?.path != from else { continue }
            if changedOnDisk(from, op, io: io, skipped: &skipped) { continue }
            if let expected = op.fromHash {
                try CrashPoint.hit("pull.before-swap")
                // Checked on the file taken out of the way: a save since the check stays.
                let outcome = try io.remove(from, ifStill: expected)
                guard outcome == .replaced else {
                    changedMeanwhile(from, op, outcome, skipped: &skipped)
                    continue
                }
            } else {
                try io.remove(from)
            }
            workspace.index.remove(path: from)
            if op.result == nil { progress.applied(op) }
        }
        let schemas = workspace.recordSchemas
        for op in fileOps {
            guard let target = op.result, !skipped.contains(op.refId) else { continue }
            if target.path == op.fromPath, changedOnDisk(target.path, op, io: io, skipped: &skipped) { continue }
            var written: FileStat?
            do {
                let over = target.path == op.fromPath ? op.fromHash : nil
                let outcome = try writeFile(target, over: over, of: plan, io: io, schemas: schemas) { written = $0 }
                guard outcome == .replaced else {
                    changedMeanwhile(target.path, op, outcome, skipped: &skipped)
                    continue
                }
            } catch let refused as SafeTreeIO.Refused {
                report.problems.append(.other("refused to write \(refused.description)"))
                skipped.insert(op.refId)
                continue
            }
            try CrashPoint.hit("pull.after-swap")
            // What was written, even if the user moved it away at once: a later scan that
            // cannot look at this folder tells the move from a copy by this inode (model
            // check, git seed 23308: the move became a deletion and a new document).
            if let st = (try? FileSystem.linkStatus(workspace.layout.absolute(target.path))) ?? written {
                workspace.index.record(
                    path: target.path, stat: st, hash: target.hash, refId: target.refId,
                    changesetId: target.changesetId,
                    readAtNanos: FileSystem.currentTimeNanos)
            }
            progress.applied(op)
        }
        workspace.progress?(.finished(.pull))
        return skipped
    }

    /// The file at `path` no longer holds what the plan read: it is left in place, the
    /// document skipped (and warned of).
    private func changedOnDisk(
        _ path: String, _ op: JournalEntry.FileOperation, io: SafeTreeIO, skipped: inout Set<String>
    ) -> Bool {
        let read: [UInt8]?
        do { read = try io.readIfPresent(path) } catch { return false }
        if let current = read {
            guard ContentHash.of(current) != op.fromHash else { return false }
        } else {
            // Gone, where the plan read a file: renamed or deleted by the user during the run.
            // Why: writing there put the document back at its old path beside the renamed
            // file, one document in two files (found by the model check, folder seed 55).
            guard op.fromHash != nil else { return false }
        }
        let warning =
            read == nil
            ? "\(path): renamed or deleted while syncing; the remote version waits for the next sync"
            : "\(path): changed on disk while syncing (or tracked but in .docsyncignore); left in place, the remote version waits for the next sync"
        report.warnings.append(warning)
        changedWhileWriting[op.refId] = warning
        skipped.insert(op.refId)
        return true
    }

    /// The file at `path` was saved, moved or deleted between `changedOnDisk`'s check and
    /// the write or removal (which found it so and left it): as `changedOnDisk` warns.
    private func changedMeanwhile(
        _ path: String, _ op: JournalEntry.FileOperation, _ outcome: FileSystem.Replacement,
        skipped: inout Set<String>
    ) {
        var warning =
            "\(path): changed on disk while syncing; left in place, the remote version waits for the next sync"
        if case .keptAside(let kept) = outcome { warning += " (an earlier save of it is kept at \(kept))" }
        report.warnings.append(warning)
        changedWhileWriting[op.refId] = warning
        skipped.insert(op.refId)
    }

    /// Tells whoever listens of each pulled document as soon as its file is in place.
    private struct AppliedProgress {
        let session: SyncSession
        /// When anybody listens: at 100,000 documents the grouping alone is megabytes.
        var unreported: [String: [ChangeSummary]]
        var finished = 0
        let total: Int

        init(session: SyncSession, plan: PullPlan, total: Int) {
            self.session = session
            self.total = total
            unreported = session.workspace.progress == nil ? [:] : Dictionary(grouping: plan.pulled, by: \.refId)
        }

        mutating func applied(_ op: JournalEntry.FileOperation) {
            finished += 1
            for summary in unreported.removeValue(forKey: op.refId) ?? [] {
                session.workspace.progress?(.document(.pull, summary))
            }
            session.workspace.progress?(.step(.pull, done: finished, total: total))
        }
    }

    /// Writes one pulled version (not fsynced: one flush follows for all of them) and
    /// warns when it fails its schema: applied all the same, since another replica may
    /// check against an older schema, and refusing it would leave this tree behind.
    /// `over`: the hash of the file it replaces, written over only if still that.
    private func writeFile(
        _ target: DocVersion, over expectedHash: String?, of plan: PullPlan, io: SafeTreeIO, schemas: RecordSchemas,
        written: (FileStat) -> Void
    ) throws -> FileSystem.Replacement {
        // Merge results are in the plan; what was fetched was stored while planning
        // (read back and checked against its hash here).
        let content = try plan.objects[target.hash] ?? workspace.objects.get(target.hash)
        // Not fsynced one by one: one flush below, before the cursor moves past them.
        if let expectedHash {
            try CrashPoint.hit("pull.before-swap")
            let outcome = try io.replace(target.path, content, ifStill: expectedHash, durable: false, written: written)
            guard outcome == .replaced else { return outcome }
        } else if let stat = try io.write(target.path, content, durable: false) {
            written(stat)
        }
        // Applied all the same: another replica may check against an older schema,
        // and refusing it would leave this tree behind everyone else.
        if schemas.mightApply(to: content) {
            for problem in schemas.verdict(path: target.path, bytes: content).problems {
                report.warnings.append(
                    "pulled \(problem.description) (the record fails its schema; it was written, fix it here or where it was edited)"
                )
            }
        }
        return .replaced
    }
}
