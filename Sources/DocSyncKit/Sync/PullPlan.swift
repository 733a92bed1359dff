/// Everything one pull will do, decided before anything is written: applying it is a
/// separate, small step (`SyncSession.apply(_:)`), and `--dry-run` prints it and stops.
///
/// Order of application (each step safe to die after, see docs/RELIABILITY.md):
/// 1. `objects`: contents the batch refers to that are not stored yet (merge results;
///    remote versions only in a dry run: a real pull stores them as it fetches them),
///    flushed with everything stored while planning;
/// 2. `conflicts`: losing versions kept aside, and records arriving from the remote;
/// 3. `batch`: one all-or-nothing journal batch (bases, holds, file operations, new
///    local actions);
/// 4. the `.apply` entries of the batch, as file operations in the tree (redone from
///    the journal after a crash);
/// 5. the cursor, if every document could be applied.
public struct PullPlan: Sendable {
    public var objects: [String: [UInt8]] = [:]
    public var conflicts: [ConflictStore.Record] = []
    /// Bytes of the losing versions in `conflicts`, by record key.
    var conflictBytes: [String: [UInt8]] = [:]
    /// Conflict records (and resolutions) that arrived from the remote.
    public var incoming: [SharedConflict] = []
    /// Held versions merged now: their records are settled by this pull.
    public var settledHolds: [String] = []
    /// Documents decided again from the user's own versions (a retry after a push lost
    /// its race, see `PullPlanner.userVersions`): what an earlier pull of the run
    /// decided for them, and has not shared, is replaced by this decision.
    public var remerged: Set<String> = []
    public var batch: [JournalEntry] = []
    public var cursor: String
    /// What to tell the user.
    public var pulled: [ChangeSummary] = []
    public var conflictSummaries: [ConflictSummary] = []
    public var notices: [String] = []
    public var problems: [String] = []

    init(cursor: String) { self.cursor = cursor }

    /// The file operations of the batch.
    /// Read from the batch as it is walked, not copied out of it: a clone's 100,000
    /// operations were 17 MB held beside the batch while its files were written.
    public var fileOperations: some Sequence<JournalEntry.FileOperation> {
        batch.lazy.compactMap { if case .apply(let op) = $0.event { return op } else { return nil } }
    }

    public var isEmpty: Bool { batch.isEmpty && conflicts.isEmpty && incoming.isEmpty }

    static func key(_ record: ConflictStore.Record) -> String { record.refId + "\u{0}" + record.storeName }
}
