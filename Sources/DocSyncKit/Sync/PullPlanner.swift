import DocSyncJSON

/// Decides what a pull does: from the sync state, the recorded local state and the
/// remote's changes to a `PullPlan`. It reads (remote contents, stored objects, which
/// tree paths are taken) but writes nothing, so a dry run is this and nothing else. The
/// one exception is `storeFetched`: a real pull stores each remote version it fetches
/// in the object store as it goes (content-addressed and unreferenced until the plan's
/// batch is journaled, so harmless if the pull stops there; gc drops it).
///
/// Per document, the three-way decision is `Reconciler.decide`; then, in this order:
/// - the local file is not a valid document: the remote version is held aside (the base
///   does not move), and merged with the fix once the file is valid again;
/// - the target path belongs to another document: the incoming one goes beside it;
/// - content changed on both sides: the same edit is taken as is, otherwise the policy
///   for the path settles it (field merge by default); the version that lost is kept;
/// - an edit beat a deletion: recorded like a conflict;
/// - journal: pending actions finished or superseded, the new base, the file operation,
///   and whatever the outcome leaves to push.
struct PullPlanner {
    let base: [String: DocVersion]
    let pending: [JournalEntry]
    let held: [String: JournalEntry]
    let tracked: [String: DocVersion]
    /// Tracked paths whose files are not valid documents right now.
    let unreadable: Set<String>
    let config: Config
    let replicaId: String
    let clock: HybridLogicalClock
    /// The bytes of a remote version.
    let readRemote: (RemoteEntry) throws -> [UInt8]
    /// The bytes of a stored object (local versions, held versions, the base).
    let readObject: (String) throws -> [UInt8]
    /// The bytes of the version a remote deletion deleted, when it is not this tree's base
    /// (another replica changed the document, then deleted it): nil if the remote no
    /// longer has it.
    let readDeleted: (RemoteEntry) -> [UInt8]?
    /// Whether a file exists at this tree path.
    let isOccupied: (String) -> Bool
    /// The conflict record this replica has of a document's stored version.
    let knownConflict: (String, String) -> ConflictStore.Record?
    /// For documents an earlier pull of the same run already merged: the base and the
    /// local version the user had when the run started. A push that lost a race pulls
    /// again, and that pull merges the user's own version with the newer remote, as if
    /// the runs had happened one after the other, not this run's first merge: stamped
    /// when it was made, that merge beat later saves of other replicas.
    var userVersions: [String: UserVersion] = [:]
    /// Pending versions a commit of this tree holds (`SyncSession.landedPending`): a merge
    /// of the document is made from them too.
    var landedPending: [String: Set<String>] = [:]
    /// Per document, the base a merge is measured from instead of the tree's, where its
    /// pending content carries versions beyond that base (see `SyncSession.carriedMergeBases`).
    var mergeBases: [String: DocVersion] = [:]
    /// Where a fetched remote version goes (hash, bytes); nil: into `plan.objects`. Why
    /// not always the plan: then a clone would hold every document's bytes in it at once.
    let storeFetched: ((String, [UInt8]) throws -> Void)?

    /// One remote change to reconcile; `held` when it is a version held aside earlier
    /// (its bytes are in the object store).
    struct Incoming {
        var entry: RemoteEntry
        var held: Bool
    }

    func plan(_ changes: RemoteChanges, time: Int64) throws -> PullPlan {
        // Read from the configuration once per plan, not once per document merged.
        let counters = config.counters
        let arrayRules = config.arrayRules
        var plan = PullPlan(cursor: changes.cursor)
        plan.problems = changes.warnings
        receiveSharedConflicts(changes.conflicts, into: &plan)

        // The remote's entries are read in place, not copied: at 100,000 documents each
        // copy of them was tens of megabytes. Held versions that meet a fix come after.
        var heldIncoming: [Incoming]
        func incoming(_ index: Int) -> Incoming {
            index < changes.entries.count
                ? Incoming(entry: changes.entries[index], held: false) : heldIncoming[index - changes.entries.count]
        }
        let (meetingFixes, settledHolds) = heldVersions(beside: changes.entries)
        heldIncoming = meetingFixes
        plan.settledHolds += settledHolds

        let trackedByPath = Dictionary(tracked.values.map { ($0.path, $0.refId) }, uniquingKeysWith: { a, _ in a })
        var claimedPaths = Set<String>()
        var vacated = Set<String>()
        let pendingVersions = PendingVersion.byDocument(pending)
        let localMoves = SyncState.moveTimes(pending)
        var decisions: [(index: Int, decision: Reconciler.Decision, base: DocVersion?, mergeLocal: DocVersion?)] = []
        decisions.reserveCapacity(changes.entries.count + heldIncoming.count)

        for index in 0..<(changes.entries.count + heldIncoming.count) {
            let change = incoming(index)
            clock.observe(change.entry.changesetId)
            let refId = change.entry.refId
            let local = tracked[refId]
            let start = Self.decisionStart(
                base: self.base[refId], local: local, remote: change.entry.version,
                pending: pendingVersions[refId] ?? [],
                ownVersions: changes.ownVersions[refId], user: userVersions[refId], mergeBase: mergeBases[refId])
            if !start.landedSeqs.isEmpty {
                plan.batch.append(JournalEntry(.done(refId: refId, seqs: start.landedSeqs, reason: .pushed)))
            }
            if start.remerged { plan.remerged.insert(refId) }
            let (base, mergeLocal) = (start.base, start.local)
            guard
                let decision = Reconciler.decide(
                    base: base, local: mergeLocal, remote: change.entry.version, localMovedAt: localMoves[refId],
                    remoteMovedAt: change.entry.movedAt ?? change.entry.time)
            else { continue }
            decisions.append((index, decision, base, mergeLocal))
            // Why not an invalid file: it stays where it is, so its path is not free.
            if let from = local?.path, decision.result?.path != from, !unreadable.contains(from) {
                vacated.insert(from)
            }
        }

        // A document pulled as is takes two journal entries (seen, apply).
        plan.batch.reserveCapacity(plan.batch.count + 2 * decisions.count)
        for (index, initial, base, mergeLocal) in decisions {
            let change = incoming(index)
            var decision = initial
            let refId = change.entry.refId
            let local = tracked[refId]
            let remoteVersion = change.entry.version
            let publishedVersion =
                change.entry.publishedHash.map { hash in
                    remoteVersion.map { DocVersion(refId: $0.refId, changesetId: "", hash: hash, path: $0.path) }
                } ?? remoteVersion
            func bytes() throws -> [UInt8] {
                change.held ? try readObject(change.entry.hash ?? "") : try readRemote(change.entry)
            }

            // The local file is not a valid document right now: never overwrite it. The
            // remote version waits aside (the base stays), to meet the fix three-way.
            if let local, unreadable.contains(local.path) {
                try holdAside(change.entry, local: local, bytes: bytes, in: &plan)
                continue
            }
            // Never write over a file that is not this document's own.
            if let result = decision.result, result.path != local?.path {
                let placed = Self.placed(result) { path in
                    !claimedPaths.contains(path)
                        && (vacated.contains(path) || (trackedByPath[path] == nil && !isOccupied(path)))
                }
                decision.result = placed.version
                if let notice = placed.notice { plan.notices.append(notice) }
            }
            if let result = decision.result { claimedPaths.insert(result.path) }

            var settled: Settled? = nil
            var remoteBytes: [UInt8]? = nil
            if let remoteVersion, decision.contentFrom == .remote || decision.loser != nil {
                let fetched = try bytes()
                remoteBytes = fetched
                try keepFetched(remoteVersion.hash, fetched, in: &plan)
                settled = try settleContent(
                    of: &decision, remote: remoteVersion, remoteBytes: fetched, base: base, mergeLocal: mergeLocal,
                    counters: counters, arrayRules: arrayRules, in: &plan)
            }
            for notice in [decision.pathNotice, decision.notice].compactMap({ $0 }) {
                plan.notices.append("\(decision.result?.path ?? local?.path ?? refId): \(notice)")
            }
            try recordLosses(
                of: decision, change: change.entry, base: base, mergeLocal: mergeLocal, settled: settled,
                remoteBytes: remoteBytes, bytes: bytes, time: time, in: &plan)
            let bookkeeping = Self.bookkeeping(
                refId: refId, local: local, result: decision.result, published: publishedVersion,
                remoteChangesetId: change.entry.changesetId, remotePath: change.entry.path,
                pending: pendingVersions[refId] ?? [], remerged: plan.remerged.contains(refId),
                userMadeFrom: userVersions[refId]?.madeFrom ?? [], landedPending: landedPending[refId] ?? [])
            plan.batch += bookkeeping.entries
            if let pulled = bookkeeping.pulled { plan.pulled.append(pulled) }
        }
        return plan
    }
}
