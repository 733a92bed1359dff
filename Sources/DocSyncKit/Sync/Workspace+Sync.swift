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
            if direction != .push || options.dryRun {
                try pull(from: remote, unreadable: local.unreadablePaths, dryRun: options.dryRun, report: &report)
            }
            if direction != .pull {
                try push(to: remote, unreadable: local.unreadablePaths, options: options, report: &report)
            }
            if !options.dryRun { setLastSync() }
        } catch let error as RemoteError {
            if case .unreachable = error {
                report.remoteUnreachable = error.localizedDescription
            } else {
                throw error
            }
        }
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    // MARK: Pull

    func pull(from remote: Remote, unreadable: Set<String>, dryRun: Bool, report: inout SyncReport) throws {
        let changes = try remote.changes(since: state.cursor).addingPurgedDeletions(base: state.base)
        // Remote files that are not valid documents (a plain-git commit of a broken or
        // binary .json) are skipped by the remote; say which, as for a local one (exit 1).
        // Why: they were dropped silently, so nobody learned a file was not pulled.
        report.problems += changes.warnings
        if changes.entries.isEmpty {
            if changes.cursor != state.cursor && !dryRun {
                try append([JournalEntry(kind: .cursor, cursor: changes.cursor)])
                try checkpoint()
                // Why: tombstone gc counts a replica as up to date only from its record.
                try? remote.noteReplica(replicaInfo, seen: changes.cursor)
            }
            return
        }
        let tracked = state.tracked
        let trackedByPath = Dictionary(tracked.values.map { ($0.path, $0.refId) }, uniquingKeysWith: { a, _ in a })
        var entries: [JournalEntry] = []
        var fileOps: [JournalEntry] = []
        var claimedPaths = Set<String>()
        var vacated = Set<String>()
        var decisions: [(RemoteEntry, Reconciler.Decision)] = []

        for change in changes.entries {
            clock.observe(change.changesetId)
            var base = state.base[change.refId]
            let local = tracked[change.refId]
            // The remote holds a version this tree pushed but never journaled as pushed (a
            // crash between the remote's commit and `done`): our own version, the base of
            // what was edited since, not a concurrent change. Why: taken as one, it was
            // merged with the later edits, and an edit that undid it (a revert) was
            // silently overwritten by it (found by the random-kill tests).
            if let remoteVersion = change.version, remoteVersion != base,
               let landed = state.pending.lastIndex(where: { $0.refId == change.refId && $0.resultingVersion == remoteVersion }) {
                let seqs = state.pending[...landed].filter { $0.refId == change.refId }.map(\.seq)
                entries.append(JournalEntry(kind: .done, refId: change.refId, seqs: seqs, reason: "pushed"))
                base = remoteVersion
            }
            guard let decision = Reconciler.decide(base: base, local: local, remote: change.version) else { continue }
            decisions.append((change, decision))
            // Why not an invalid file: it stays where it is (see below), and a document
            // arriving at its path was written over the user's unfinished edit.
            if let from = local?.path, decision.result?.path != from, !unreadable.contains(from) { vacated.insert(from) }
        }

        for (change, initial) in decisions {
            var decision = initial
            let refId = change.refId
            let local = tracked[refId]
            let remoteVersion = change.version
            let publishedVersion = change.publishedHash.map { hash in remoteVersion.map { DocVersion(refId: $0.refId, changesetId: "", hash: hash, path: $0.path) } } ?? remoteVersion
            // The local file is not valid JSON right now: never overwrite it. Keep the
            // remote version aside; the user's fix will be pushed over it.
            if let local, unreadable.contains(local.path) {
                if let remoteVersion, !dryRun {
                    let bytes = try remote.read(change)
                    let record = try conflictStore.keep(bytes, version: remoteVersion, side: .remote, winner: local.changesetId)
                    entries.append(JournalEntry(kind: .conflict, refId: refId, changesetId: remoteVersion.changesetId, path: remoteVersion.path, reason: "local file invalid"))
                    report.conflicts.append(ConflictSummary(refId: refId, path: local.path, kept: "local", keptChangesetId: local.changesetId,
                                                            stored: "remote", storedChangesetId: remoteVersion.changesetId, file: record.file))
                }
                report.notices.append("\(local.path): not valid JSON here, so the remote version was not applied (kept in the conflict store)")
                entries.append(JournalEntry(kind: .seen, refId: refId, changesetId: remoteVersion?.changesetId ?? change.changesetId, hash: remoteVersion?.hash,
                                            path: remoteVersion?.path, deleted: remoteVersion == nil))
                continue
            }
            // Never write over a file that is not this document's own.
            if var result = decision.result, result.path != local?.path {
                let isFree: (String) -> Bool = { path in
                    !claimedPaths.contains(path) && (vacated.contains(path) || (trackedByPath[path] == nil && !FileSystem.exists(self.layout.absolute(path))))
                }
                if !isFree(result.path) {
                    let original = result.path
                    result.path = DocumentPath.sibling(of: original, tag: String(refId.prefix(8)), isFree: isFree)
                    decision.result = result
                    report.notices.append("\(original): both sides have a different document at this path; the incoming one is kept as \(result.path)")
                }
            }
            if let result = decision.result { claimedPaths.insert(result.path) }

            var settled: (policy: String, fields: [String], merged: Bool)? = nil
            // Fetch what is needed before anything is journaled.
            if let remoteVersion, decision.contentFrom == .remote || decision.loser != nil {
                let bytes = try remote.read(change)
                if !dryRun { try objects.put(bytes, hash: remoteVersion.hash) }
                // The same edit made on both sides differs only in the stamped
                // changesetId: take the remote's, no conflict.
                if decision.loser != nil, let local, let localBytes = try? objects.get(local.hash),
                   ContentIdentity.sameApartFromChangesetId(localBytes, bytes),
                   !(config.policy(for: decision.result?.path ?? local.path) == "merge"
                     && ContentPolicy.changesCounters(base: state.base[refId].flatMap { try? objects.get($0.hash) }, edited: localBytes, counters: config.counters)) {
                    decision.loser = nil
                    decision.contentFrom = .remote
                    decision.notice = nil
                    decision.result = DocVersion(refId: refId, changesetId: remoteVersion.changesetId, hash: remoteVersion.hash,
                                                 path: decision.result?.path ?? remoteVersion.path)
                }
                // Content changed differently on both sides: the policy for this path
                // settles it (field merge by default).
                if decision.loser != nil, let local, let localBytes = try? objects.get(local.hash), let target = decision.result?.path {
                    let policy = config.policy(for: target)
                    let outcome = ContentPolicy(policy: policy, counters: config.counters).settle(
                        base: state.base[refId].flatMap { try? objects.get($0.hash) }, local: local, localBytes: localBytes,
                        remote: remoteVersion, remoteBytes: bytes, path: target, newChangesetId: { clock.next().description })
                    if let merged = outcome.mergedBytes, !dryRun { try objects.put(merged, hash: outcome.result.hash) }
                    decision.result = outcome.result
                    decision.contentFrom = outcome.contentFrom ?? .local
                    decision.loser = outcome.loser
                    decision.notice = outcome.notice
                    settled = (policy, outcome.fields, outcome.mergedBytes != nil)
                }
            }
            for notice in [decision.pathNotice, decision.notice].compactMap({ $0 }) {
                report.notices.append("\(decision.result?.path ?? local?.path ?? refId): \(notice)")
            }
            if let loser = decision.loser {
                if !dryRun {
                    let record = try conflictStore.keep(try objects.get(loser.version.hash), version: loser.version, side: loser.side,
                                                        winner: decision.result?.changesetId ?? "", policy: settled?.policy ?? "lww",
                                                        fields: settled?.fields)
                    report.conflicts.append(ConflictSummary(refId: refId, path: decision.result?.path ?? loser.version.path,
                                                            kept: settled?.merged == true ? "merged" : decision.contentFrom.rawValue,
                                                            keptChangesetId: decision.result?.changesetId ?? "",
                                                            stored: loser.side.rawValue, storedChangesetId: loser.version.changesetId, file: record.file,
                                                            fields: settled?.fields))
                    entries.append(JournalEntry(kind: .conflict, refId: refId, changesetId: loser.version.changesetId, path: loser.version.path, reason: loser.side.rawValue))
                } else {
                    report.conflicts.append(ConflictSummary(refId: refId, path: loser.version.path, kept: decision.contentFrom.rawValue,
                                                            keptChangesetId: decision.result?.changesetId ?? "", stored: loser.side.rawValue,
                                                            storedChangesetId: loser.version.changesetId, file: nil))
                }
            }

            let result = decision.result
            let pendingSeqs = state.pending.filter { $0.refId == refId }.map(\.seq)
            // Pending actions describe the old local state: finished if the outcome is
            // what the remote has, replaced if the outcome is not what they describe.
            if !pendingSeqs.isEmpty && (result != local || result == publishedVersion) {
                entries.append(JournalEntry(kind: .done, refId: refId, seqs: pendingSeqs, reason: "superseded"))
            }
            entries.append(JournalEntry(kind: .seen, refId: refId, changesetId: publishedVersion?.changesetId ?? change.changesetId, hash: publishedVersion?.hash,
                                        path: publishedVersion?.path ?? change.path, deleted: publishedVersion == nil))
            if result != local {
                let op = JournalEntry(kind: .apply, refId: refId, changesetId: result?.changesetId ?? change.changesetId, hash: result?.hash,
                                      path: result?.path, fromPath: local?.path, fromHash: local?.hash, deleted: result == nil)
                entries.append(op)
                fileOps.append(op)
                report.pulled.append(ChangeSummary(kind: result == nil ? "delete" : (local == nil ? "create" : (local?.hash == result?.hash ? "rename" : "update")),
                                                   path: result?.path ?? local?.path ?? "", refId: refId, changesetId: result?.changesetId,
                                                   fromPath: result != nil && local?.path != result?.path ? local?.path : nil))
            }
            // The outcome differs from what the remote has: that difference is a local
            // change to push (a path kept apart, a local edit that won).
            if let result, result != publishedVersion, result != local || pendingSeqs.isEmpty {
                let kind: JournalEntry.Kind = publishedVersion == nil ? .create : (result.hash == publishedVersion?.hash ? .rename : .update)
                entries.append(JournalEntry(kind: kind, refId: refId, changesetId: result.changesetId, hash: result.hash, path: result.path,
                                            fromPath: publishedVersion?.path != result.path ? publishedVersion?.path : nil))
            }
        }
        if dryRun { return }

        let baseBefore = Dictionary(uniqueKeysWithValues: fileOps.compactMap(\.refId).map { ($0, state.base[$0]) })
        objects.flush()
        try append(entries)
        try CrashPoint.hit("pull.after-journal")
        // Removals first, so a document can move onto a path another one just left.
        let io = SafeTreeIO(root: layout.root)
        var skipped = Set<String>()
        func skip(_ op: JournalEntry, _ message: String) {
            report.warnings.append(message)
            if let refId = op.refId { skipped.insert(refId) }
        }
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
            try append([JournalEntry(kind: .cursor, cursor: changes.cursor)])
            try? remote.noteReplica(replicaInfo, seen: changes.cursor)
        }
        try clock.persist()
        try checkpoint()
    }

    // MARK: Push

    func push(to remote: Remote, unreadable: Set<String>, options: SyncOptions, report: inout SyncReport) throws {
        var attempts = 0
        while true {
            attempts += 1
            let tracked = state.tracked
            var seen = Set<String>()
            var writes: [RemoteWrite] = []
            var seqs: [Int] = []
            for action in state.pending {
                seqs.append(action.seq)
                guard let refId = action.refId, seen.insert(refId).inserted else { continue }
                let final = tracked[refId]
                let previous = state.base[refId]
                if final == previous { continue }
                let content = options.dryRun ? nil : try final.map { try objects.get($0.hash) }
                writes.append(RemoteWrite(refId: refId, new: final, previous: previous, content: content,
                                          deletedChangesetId: final == nil ? (previous?.changesetId ?? action.changesetId) : nil))
            }
            if seqs.isEmpty {
                // Nothing to send, but say so only if the remote is there.
                if attempts == 1 { _ = try remote.changes(since: state.cursor) }
                return
            }
            let deletes = writes.filter { $0.new == nil && $0.previous != nil }.count
            let total = state.base.count
            let share = config.number("push.maxDeleteShare")
            if !options.force, deletes > 1, Double(deletes) > share * Double(total) {
                throw Failure.tooManyDeletes(count: deletes, total: total, share: share)
            }
            let summaries = writes.map { w in
                ChangeSummary(kind: w.new == nil ? "delete" : (w.previous == nil ? "create" : (w.previous?.hash == w.new?.hash ? "rename" : "update")),
                              path: w.new?.path ?? w.previous?.path ?? "", refId: w.refId, changesetId: w.new?.changesetId,
                              fromPath: w.previous?.path != w.new?.path && w.new != nil ? w.previous?.path : nil)
            }
            if options.dryRun {
                report.pushed += summaries
                return
            }
            if writes.isEmpty {
                try append([JournalEntry(kind: .done, seqs: seqs, reason: "pushed")])
                try checkpoint()
                return
            }
            do {
                let cursor = try remote.commit(writes, expecting: state.cursor, replica: replicaInfo)
                try CrashPoint.hit("push.after-remote-commit")
                try append([JournalEntry(kind: .done, seqs: seqs, reason: "pushed"), JournalEntry(kind: .cursor, cursor: cursor)])
                try checkpoint()
                report.pushed += summaries
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
