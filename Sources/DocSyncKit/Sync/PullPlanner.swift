import DocSyncJSON

/// Decides what a pull does: from the sync state, the recorded local state and the
/// remote's changes to a `PullPlan`. The decisions are `DocumentPlanner`'s pure functions;
/// this type feeds them (reads remote contents, stored objects, which tree paths are
/// taken) and gathers their results, but writes nothing, so a dry run is this and nothing
/// else. The one exception is `storeFetched`: a real pull stores each remote version it
/// fetches in the object store as it goes (content-addressed and unreferenced until the
/// plan's batch is journaled, so harmless if the pull stops there; gc drops it).
///
/// Two passes: every document is decided first (`DocumentPlanner.decide`), so a path one
/// document leaves is free for another; then each is carried out in order
/// (`carryOut`): held aside if its file is invalid, placed beside a document holding its
/// path, its content settled by policy, its losses recorded, its journal entries written.
struct PullPlanner {
    let base: VersionTable
    let pending: [JournalEntry]
    let held: [String: JournalEntry]
    let tracked: VersionTable
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
    /// Of the `unreadable` paths, those the scan could not look at, with why (see
    /// `UnknownDocument`): a remote change to one waits aside, as for an invalid file.
    var unknownReasons: [String: String] = [:]
    /// Per document, the base a merge is measured from instead of the tree's, where its
    /// pending content carries versions beyond that base (see `SyncSession.carriedMergeBases`).
    var mergeBases: [String: DocVersion] = [:]
    /// A send-only replica (`sync.mode`): remote changes wait aside, unapplied, until
    /// `override` or the mode is `both` again.
    var holdsRemoteChanges: Bool { config.syncMode.holdsRemoteChanges }
    /// Where a fetched remote version goes (hash, bytes); nil: into `plan.objects`. Why
    /// not always the plan: then a clone would hold every document's bytes in it at once.
    let storeFetched: ((String, [UInt8]) throws -> Void)?

    /// One remote change to reconcile; `held` when it is a version held aside earlier
    /// (its bytes are in the object store).
    struct Incoming {
        var entry: RemoteEntry
        var held: Bool
    }

    /// The remote's entries, then the held versions that meet a fix. The entries are read
    /// in place, not copied: at 100,000 documents each copy was tens of megabytes.
    struct IncomingList {
        let entries: [RemoteEntry]
        let held: [Incoming]
        var count: Int { entries.count + held.count }
        subscript(index: Int) -> Incoming {
            index < entries.count ? Incoming(entry: entries[index], held: false) : held[index - entries.count]
        }
    }

    /// What the first pass found: each document with something to do, and what the
    /// second pass needs of the others.
    struct Decided {
        var documents: [(index: Int, plan: DocumentPlan)] = []
        var pendingVersions: [String: [PendingVersion]]
        /// Paths that documents of this pull move away from: free for incoming versions.
        var vacated = Set<String>()
        var trackedByPath: TrackedPaths
    }

    /// Which tracked document is at a path, indexed the first time a version lands at a
    /// path its document did not have. Why lazily: most pulls move nothing, and making
    /// the index (100,000 entries) was every pull's cost.
    final class TrackedPaths {
        private let tracked: VersionTable
        private lazy var refIds = Dictionary(
            tracked.all.values.map { ($0.path, $0.refId) }, uniquingKeysWith: { a, _ in a })

        init(_ tracked: VersionTable) { self.tracked = tracked }

        subscript(path: String) -> String? { refIds[path] }
    }

    func plan(_ changes: RemoteChanges, time: Int64) throws -> PullPlan {
        let settings = DocumentPlanner.Settings(config: config, replicaId: replicaId)
        var plan = PullPlan(cursor: changes.cursor)
        plan.problems = changes.warnings
        receiveSharedConflicts(changes.conflicts, into: &plan)
        let (meetingFixes, settledHolds) = heldVersions(beside: changes.entries)
        plan.settledHolds += settledHolds
        let incoming = IncomingList(entries: changes.entries, held: meetingFixes)
        let decided = decideAll(incoming, ownVersions: changes.ownVersions, into: &plan)
        // A document pulled as is takes two journal entries (seen, apply).
        plan.batch.reserveCapacity(plan.batch.count + 2 * decided.documents.count)
        var claimedPaths = Set<String>()
        for (index, document) in decided.documents {
            try carryOut(
                document, change: incoming[index], decided: decided, claimedPaths: &claimedPaths, settings: settings,
                time: time, into: &plan)
        }
        return plan
    }

    /// The first pass: every document's decision before any is carried out, so that a
    /// path one document leaves is free for another's incoming version.
    private func decideAll(
        _ incoming: IncomingList, ownVersions: [String: Set<String>], into plan: inout PullPlan
    ) -> Decided {
        var decided = Decided(
            pendingVersions: PendingVersion.byDocument(pending),
            trackedByPath: TrackedPaths(tracked))
        let localMoves = SyncState.moveTimes(pending)
        let holdsRemoteChanges = holdsRemoteChanges  // read from the configuration once
        decided.documents.reserveCapacity(incoming.count)
        for index in 0..<incoming.count {
            let entry = incoming[index].entry
            clock.observe(entry.changesetId)
            let refId = entry.refId
            let local = tracked[refId]
            let document = DocumentPlanner.decide(
                DocumentInputs(
                    entry: entry, base: base[refId], local: local,
                    localIsUnreadable: local.map { unreadable.contains($0.path) } ?? false,
                    pending: decided.pendingVersions[refId] ?? [], ownVersions: ownVersions[refId],
                    user: userVersions[refId], mergeBase: mergeBases[refId], localMovedAt: localMoves[refId],
                    holdsRemoteChanges: holdsRemoteChanges))
            if !document.start.landedSeqs.isEmpty {
                plan.batch.append(JournalEntry(.done(refId: refId, seqs: document.start.landedSeqs, reason: .pushed)))
            }
            if document.start.remerged { plan.remerged.insert(refId) }
            guard let decision = document.decision else {
                // The remote went back to the base (a document a send-only replica never
                // had, made and deleted there meanwhile): nothing waits any more.
                if held[refId] != nil && !incoming[index].held {
                    plan.batch.append(
                        JournalEntry(
                            .seen(
                                refId: refId,
                                entry.version.map { .version($0) }
                                    ?? .deleted(changesetId: entry.changesetId, path: entry.path), reason: nil)))
                }
                continue
            }
            decided.documents.append((index, document))
            // Why not an invalid file: it stays where it is, so its path is not free.
            if let from = local?.path, decision.result?.path != from, !unreadable.contains(from) {
                decided.vacated.insert(from)
            }
        }
        return decided
    }
}
