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

/// `pull`, `push`, `sync` and `status`: the tree against its remote.
public struct SyncService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }
    public enum Direction: Sendable { case pull, push, both }

    /// `pull`, `push` and `sync`: record local changes, then talk to the remote. A push
    /// that finds the remote moved pulls and reconciles first, then retries: it never
    /// overwrites a remote version it has not seen.
    public func run(_ direction: Direction, options: SyncOptions = SyncOptions()) throws -> SyncReport {
        var report = SyncReport()
        report.dryRun = options.dryRun
        let mode = config.syncMode
        if mode == .receiveOnly {
            // Refused before anything is recorded or read: the user asked for the one
            // thing this replica never does.
            guard direction != .push else { throw Workspace.Failure.gaveUp(Self.receiveOnlyPush) }
        }
        report.syncMode = reportedMode
        let remote = try makeRemote()
        // After the remote is made: making it may warn (an upgrade, a git repository in a
        // drive folder).
        report.warnings += warnings
        // The versions the base holds are here: a drive remote checks that a commit's
        // named parents arrived without reading older commit files for them.
        remote.tellHeldVersions { [weak store] refId, changesetId in
            store?.state.baseVersions[refId]?.changesetId == changesetId
        }
        let selection = try workspace.sparseSelection()
        let firstContact = state.cursor == nil ? try firstContactListing(of: remote) : nil
        // A widened selection's new part is in no change since the cursor: the pull reads
        // the remote's whole listing, once.
        let widening = firstContact == nil && direction != .push && FileSystem.exists(layout.sparseWidenFile)
        var local = try recordLocalChanges(
            write: !options.dryRun, report: &report, checkpointing: false,
            joining: (try? firstContact?.get()).map(Self.documentRefIdsByPath) ?? [:])
        if options.dryRun {
            // Nothing is journaled in a dry run; plan as if it had been (read-only: the
            // state is never saved).
            for (i, var action) in local.actions.enumerated() {
                action.seq = journal.nextSeq + i
                state.fold(action)
            }
        }
        // Folded into the state by now; the session needs the rest of `local`, not these
        // (a first push of 100,000 documents carried them through the whole run).
        local.actions = []
        let session = SyncSession(workspace: workspace, remote: remote, options: options, local: local, report: report)
        session.selection = selection
        session.widening = widening
        try exchange(
            mode == .receiveOnly ? .pull : direction, in: session, options: options, firstContact: firstContact)
        if mode == .receiveOnly && !options.dryRun && session.remoteAnswered { try finishUnsendable() }
        if widening && !options.dryRun && session.remoteAnswered && session.report.remoteUnreachable == nil {
            try? FileManager.default.removeItem(atPath: layout.sparseWidenFile)
        }
        if let selection, !options.dryRun {
            // Documents another replica moved out, or this one did and has now pushed, or a
            // killed run had pushed: after every run, even one that changed nothing (it reads
            // the base, a sparse replica's own documents only).
            try workspace.sparse.evict(
                outside: selection, force: false, invalidPaths: local.unreadablePaths, into: &session.report)
        }
        // What was recorded and not yet checkpointed by the pull or the push (a run that
        // pushed nothing, or found the remote away). Skipped if the run failed: the
        // journal holds it, and the next run folds it in.
        if !options.dryRun && journal.length != state.journalOffset { try checkpoint() }
        report = session.report
        report.waiting = waitingVersions
        if mode == .sendOnly { report.notApplied = notAppliedChanges }
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    /// A receive-only replica's pending actions of documents that leave nothing to send
    /// (the document is as its base says: a local edit then a deletion of a document the
    /// remote deleted too, e.g. `resolve --take` of a deletion that lost) are finished as
    /// superseded, as the push of a replica that sends finishes them: `status` lists only
    /// what a push would send (model check git seed 55). A version of its own with the
    /// base's content is another changesetId, and stays.
    private func finishUnsendable() throws {
        guard !state.pending.isEmpty else { return }
        try state.readBase()
        let tracked = state.trackedVersions
        let seqs = state.pending.compactMap { action -> Int? in
            guard let refId = action.refId, state.held[refId] == nil else { return nil }
            return tracked[refId] == state.baseVersions[refId] ? action.seq : nil
        }
        if !seqs.isEmpty { _ = try append([JournalEntry(.done(refId: nil, seqs: seqs, reason: .superseded))]) }
    }

    static let receiveOnlyPush =
        "this replica is receive-only (sync.mode): its changes are recorded and never sent; `docsync status` lists them, `docsync config sync.mode both` sends them with the next sync"

    /// First contact: the remote's documents are listed before anything is recorded, so
    /// that files without ids of their own (or with ids docsync gave them while the
    /// remote was out of reach) join the documents at their paths. A remote that cannot
    /// be read now fails the run as before, after recording (see `exchange`).
    private func firstContactListing(of remote: Remote) throws -> Result<RemoteChanges, RemoteError> {
        do {
            return .success(try remote.changes(since: nil).checked(url: remote.displayURL))
        } catch let error as RemoteError {
            return .failure(error)
        }
    }

    /// The pull and the push `direction` asks for; an unreachable remote is noted in the
    /// session's report (within the offline limit), not thrown.
    private func exchange(
        _ direction: Direction, in session: SyncSession, options: SyncOptions,
        firstContact: Result<RemoteChanges, RemoteError>?
    ) throws {
        do {
            let prefetched = try firstContact?.get()
            // A held version waits for a pull to meet the fixed file, even on `push`.
            // So does a file carrying a refId a sparse replica does not hold.
            if direction != .push || options.dryRun || !state.held.isEmpty || session.mustMeetCarriedRefIds {
                try session.pull(prefetched: prefetched)
            }
            if direction != .pull { try session.push() }
            if !options.dryRun && session.report.refusedPush == nil { setLastSync() }
        } catch let error as RemoteError {
            if case .unreachable = error {
                try checkOfflineLimit(error)
                session.report.remoteUnreachable =
                    (config.syncMode == .receiveOnly ? error.receiveOnlyDescription : nil) ?? error.localizedDescription
            } else {
                throw error
            }
        }
    }

    /// The remote changes a send-only replica holds aside, in path order.
    var notAppliedChanges: [ChangeSummary] {
        // On another replica a hold is a remote version waiting for a file to be valid
        // again (`waitingVersions`), not a change send-only keeps out.
        guard !state.held.isEmpty, config.syncMode.holdsRemoteChanges else { return [] }
        let tracked = state.trackedVersions
        return state.held.values.compactMap { hold -> ChangeSummary? in
            guard case let .held(refId, remote, _) = hold.event else { return nil }
            // What applying it would do to the tree.
            return ChangeSummary(
                from: tracked[refId], to: remote.version, refId: refId, changesetId: remote.changesetId,
                fallbackPath: remote.path ?? refId)
        }.sorted { $0.path < $1.path }
    }

    /// The refId of the document at each path of a remote listing.
    static func documentRefIdsByPath(_ changes: RemoteChanges) -> [String: String] {
        var byPath: [String: String] = [:]
        for entry in changes.entries { if let version = entry.version { byPath[version.path] = version.refId } }
        return byPath
    }

    /// Remote versions held aside until their local file is valid again, as
    /// "path: remote version <changesetId>" (on a send-only replica, `notAppliedChanges`).
    var waitingVersions: [String] {
        guard !state.held.isEmpty, !config.syncMode.holdsRemoteChanges else { return [] }
        let tracked = state.trackedVersions
        return state.held.values.compactMap { hold in
            hold.refId.flatMap { tracked[$0]?.path }.map { "\($0): remote version \(hold.changesetId ?? "?")" }
        }.sorted()
    }
}

extension SyncService {
    // MARK: status

    public func status() throws -> StatusReport {
        var scratch = SyncReport()
        let local = try recordLocalChanges(write: false, report: &scratch, refreshingIndex: true)
        let synced = lastSync ?? state.lastSync
        // An attempt is news only until a run gets through.
        let attempt = DeferredAttempt.load(layout).flatMap { $0.time > (synced ?? 0) ? $0 : nil }
        return StatusReport(
            root: layout.root, replicaId: config.replicaId, remote: config["remote.url"], lastSync: synced,
            pending: state.pending.map(ChangeSummary.init), unrecorded: local.actions.map(ChangeSummary.init),
            conflicts: conflictStore.list().filter(\.isOpen), waiting: waitingVersions, problems: scratch.problems,
            warnings: warnings + scratch.warnings, lastAttempt: attempt, syncMode: config.syncMode,
            notApplied: notAppliedChanges, selection: try workspace.sparseSelection()?.patterns,
            outsideSelection: local.outsideSelection, unknown: scratch.unknown)
    }
}

// MARK: When the remote was last reached

extension SyncService {
    func setLastSync() {
        try? FileSystem.writeAtomically(
            layout.metadata + "/last-sync", Array("\(FileSystem.currentTimeNanos / 1_000_000)\n".utf8), durable: false)
    }

    /// `.docsync/reached`: when the tree was made (written once). The
    /// `sync.maxOfflineDays` clock starts at the later of it and the last sync.
    var reachedFile: String { layout.metadata + "/reached" }

    func noteRemoteReached() {
        try? FileSystem.writeAtomically(
            reachedFile, Array("\(FileSystem.currentTimeNanos / 1_000_000)\n".utf8), durable: false)
    }

    var remoteReachedAt: Int64? {
        let made = (try? FileSystem.readFile(reachedFile)).flatMap {
            Int64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return [made, lastSync, state.lastSync].compactMap { $0 }.max()
    }

    /// The remote could not be reached: past `sync.maxOfflineDays` since it last was,
    /// that is an error saying since when (exit 1), not "try again later".
    func checkOfflineLimit(_ error: RemoteError) throws {
        guard case let .unreachable(url, reason) = error else { return }
        guard let since = remoteReachedAt else {
            noteRemoteReached()
            return
        }
        let days = config.number("sync.maxOfflineDays")
        if Double(FileSystem.currentTimeNanos / 1_000_000 - since) > days * 86_400_000 {
            throw Workspace.Failure.offlineTooLong(url: url, since: since, days: days, reason: reason)
        }
    }

    var lastSync: Int64? {
        (try? FileSystem.readFile(layout.metadata + "/last-sync")).flatMap {
            Int64(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
