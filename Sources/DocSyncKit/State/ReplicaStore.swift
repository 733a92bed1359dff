import Dispatch
import Foundation

/// Everything a replica keeps in `.docsync/`: the sync state (base, pending actions,
/// cursor), the action journal, the index of file stat data, the object store, the
/// conflict store and the clock, with the operations the engine needs on them: open
/// (taking the tree lock), append to the journal, checkpoint, recover what a killed run
/// left. Nothing else opens those files; services reach them through a store.
final class ReplicaStore {
    let layout: TreeLayout
    var config: Config
    var state: SyncState
    let journal: Journal
    var index: StatCache
    let objects: ObjectStore
    let clock: HybridLogicalClock
    let conflictStore: ConflictStore
    let readOnly: Bool
    private var lock: TreeLock?
    /// The index file as this run found it before reading it (nil: there was none). A
    /// read-only run saves what it learned only over that same file (see `keepRefreshedIndex`).
    var indexFileAtOpen: FileStat?
    /// What the user should hear about the store (a rebuilt clock, a redone write).
    var warnings: [String] = []

    init(layout: TreeLayout, config: Config, state: SyncState, index: StatCache? = nil, readOnly: Bool, lock: TreeLock?)
    {
        self.layout = layout
        self.config = config
        self.state = state
        self.readOnly = readOnly
        self.lock = lock
        journal = Journal(path: layout.journal)
        self.index = index ?? StatCache.load(from: layout.index)
        objects = ObjectStore(root: layout.objects)
        clock = HybridLogicalClock(replica: config.replicaId, persistedAt: layout.clock)
        conflictStore = ConflictStore(root: layout.conflicts)
        if !clock.loaded && (state.baseCount > 0 || !state.pending.isEmpty) {
            // Why: a lost or damaged clock file restarted the clock from the wall clock,
            // so after seeing a version from a machine whose clock runs ahead, a new
            // local edit could get an id *earlier* than the version it replaces (and lose
            // to it). Every id this tree issued or saw is in its state: start past them.
            for version in state.base.values { clock.observe(version.changesetId) }
            for action in state.pending { if let id = action.changesetId { clock.observe(id) } }
            if FileSystem.exists(layout.clock) {
                warnings.append("\(layout.clock) was damaged; rebuilt it from the sync state")
            }
        }
    }

    /// Opens the store of the tree at `layout`: takes the tree lock (unless read-only),
    /// reads the state and the index, and finishes what an interrupted run left.
    /// - Parameter baseOnDemand: the base file is read where the run first needs it (a
    ///   scan, a pull, a push; see `SyncState.readBase`), not here: for `status` and the
    ///   syncs, which read none when nothing changed.
    static func open(_ layout: TreeLayout, readOnly: Bool, baseOnDemand: Bool = false) throws -> ReplicaStore {
        let config = try Config.load(from: layout.config)
        var lock: TreeLock? = nil
        if !readOnly {
            do { lock = try TreeLock(path: layout.lock, waitSeconds: config.number("lock.waitSeconds")) } catch let busy
                as TreeLock.Busy
            {
                throw Workspace.Failure.busy(busy.holder)
            }
        }
        // Before the read: a save that lands between the two makes this stat stale, and a
        // read-only run then keeps its refreshed index to itself.
        let indexFile = try? FileSystem.status(layout.index)
        let (state, index) = try loadStateAndIndex(layout, readingBase: !baseOnDemand)
        let store = ReplicaStore(
            layout: layout, config: config, state: state, index: index, readOnly: readOnly, lock: lock)
        store.indexFileAtOpen = indexFile
        try store.recover()
        return store
    }

    /// The state and the index, read on two cores at once. Why: every run reads both
    /// whole (a read, a SHA-256 and a parse each), and neither needs the other.
    static func loadStateAndIndex(_ layout: TreeLayout, readingBase: Bool) throws -> (SyncState, StatCache) {
        final class Loaded: @unchecked Sendable {
            var state: Result<SyncState, Error>?
            var index: StatCache?
        }
        let loaded = Loaded()
        let statePath = layout.state, indexPath = layout.index
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            if part == 0 {
                loaded.state = Result {
                    let state = try SyncState.load(from: statePath)
                    if readingBase { try state.readBase() }
                    return state
                }
            } else {
                loaded.index = StatCache.load(from: indexPath)
            }
        }
        return (try loaded.state!.get(), loaded.index!)
    }

    /// Journals entries (fsynced) and folds them into the state; returns the numbers they
    /// were given.
    @discardableResult
    func append(_ entries: [JournalEntry]) throws -> Range<Int> {
        let seqs = try journal.append(entries)
        // A large batch of local actions (a first push records every document) would
        // otherwise grow the pending list by doubling, holding up to twice what it needs
        // at the peak. Small batches don't reserve: reserving exactly, batch after batch,
        // copies every time. Only local actions stay pending: a clone's batch of 100,000
        // `seen` entries reserved room for as many that never came.
        if entries.count > 1024 {
            let local = entries.count(where: { if case .local = $0.event { true } else { false } })
            if local > 1024 { state.pending.reserveCapacity(state.pending.count + local) }
        }
        for (entry, seq) in zip(entries, seqs) {
            var numbered = entry
            numbered.seq = seq
            state.fold(numbered)
        }
        return seqs
    }

    /// Writes the state checkpoint (and the stat cache) atomically.
    func checkpoint() throws {
        state.journalOffset = journal.length
        state.savedDigest = try state.save(to: layout.state)
        try saveIndexIfNeeded()
    }

    func saveIndexIfNeeded() throws {
        if index.isDirty && !readOnly { try index.save(to: layout.index, synced: UnchangedTree.against(state)) }
    }

    /// What a scan can check the tree against to know, without the base, that nothing
    /// changed (nil: it cannot).
    var unchangedTree: UnchangedTree? { UnchangedTree(state: state) }

    /// The index saved again when its synced flags were set against an older state (or
    /// none) and this run knows the state's tracked versions. Why at the end of a run:
    /// a sync checkpoints several times, and the flags are needed only by the next run.
    private func refreshIndexFlags() {
        guard !readOnly, let against = UnchangedTree.against(state), index.stamp != against.stamp else { return }
        try? index.save(to: layout.index, synced: against)
    }

    /// What a read-only scan (`status`) learned about files it had to read, saved for the
    /// next run, as `git status` refreshes git's index. Why: after a push every file it
    /// stamped is racy, and each `status` read all of them again until the next sync saved
    /// the index (1.4 s instead of 0.5 s at 100,000 documents).
    ///
    /// The index only caches what files hold (each entry is checked against the file's
    /// stat data before it is trusted), never what was recorded, so this records nothing.
    /// It is saved only when no other run holds the tree (the lock is tried, not waited
    /// for) and the index file is still the one this run read: a run that saved a newer
    /// one meanwhile keeps it.
    func keepRefreshedIndex(_ refreshed: StatCache) {
        let against = UnchangedTree.against(state)
        let flagsAreStale = against.map { refreshed.stamp != $0.stamp } ?? false
        guard readOnly, refreshed.isDirty || flagsAreStale, let held = try? TreeLock(path: layout.lock, waitSeconds: 0)
        else { return }
        defer { held.release() }
        guard (try? FileSystem.status(layout.index)) == indexFileAtOpen else { return }
        var refreshed = refreshed
        do {
            try refreshed.save(to: layout.index, synced: against)
            index = refreshed
            indexFileAtOpen = try? FileSystem.status(layout.index)
        } catch {
            warnings.append(
                "\(layout.index): could not save the refreshed index (\(error.localizedDescription)); the next run reads those files again"
            )
        }
    }

    func close() {
        try? saveIndexIfNeeded()
        refreshIndexFlags()
        lock?.release()
        lock = nil
    }

    deinit { close() }
}
