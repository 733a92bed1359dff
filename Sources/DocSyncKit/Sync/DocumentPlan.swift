import DocSyncJSON

/// One document's inputs to a pull's decision: what the tree, the journal and the remote
/// say of it. `DocumentPlanner` decides from these alone.
struct DocumentInputs {
    var entry: RemoteEntry
    /// The version this tree last synced.
    var base: DocVersion?
    /// The version the tree's file holds (recorded).
    var local: DocVersion?
    /// The local file is not a valid document right now.
    var localIsUnreadable = false
    var pending: [PullPlanner.PendingVersion] = []
    /// Pending versions the tree's own commits on the remote hold.
    var ownVersions: Set<String>? = nil
    /// What the user had when the run first met the document (a retry of the run).
    var user: PullPlanner.UserVersion? = nil
    /// The base a merge is measured from, where pending content carries later versions.
    var mergeBase: DocVersion? = nil
    /// When the local side renamed the document (ms), if it did.
    var localMovedAt: Int64? = nil
    /// A send-only replica: a remote change that would change the tree waits aside.
    var holdsRemoteChanges = false
}

/// A pull's decision for one document, made before any content is read.
struct DocumentPlan: Equatable {
    var start: PullPlanner.DecisionStart
    /// The three-way decision; nil when the remote entry brings nothing new.
    var decision: Reconciler.Decision?
    /// The local file is not a valid document, or the replica is send-only and the remote
    /// version would change the tree: the remote version waits aside instead.
    var holdsAside = false

    /// Which contents settling this document reads: only what its outcome needs, so a
    /// pull of documents that changed on one side reads each remote version once and
    /// nothing else.
    var reads: ContentReads {
        guard let d = decision, !holdsAside else { return [] }
        var reads: ContentReads = []
        if d.loser != nil { reads.formUnion([.remote, .local, .base]) }
        if d.contentFrom == .remote && !remoteIsDeletion { reads.insert(.remote) }
        if let side = d.lostDeletion, d.result != nil {
            reads.insert(side == .remote && deletesAnotherVersion ? .deleted : .base)
        }
        if let lost = d.renameLoser, d.result != nil {
            reads.insert(lost.side == .local || lost.version.hash == start.local?.hash ? .local : .remote)
        }
        return reads
    }

    /// The remote entry is a deletion.
    var remoteIsDeletion = false
    /// A remote deletion of a version other than this tree's base (another replica
    /// changed the document, then deleted it).
    var deletesAnotherVersion = false
}

/// The contents a document's outcome may read (`DocumentPlan.reads`).
struct ContentReads: OptionSet, Sendable {
    let rawValue: UInt8
    /// The remote's version (or the held one).
    static let remote = ContentReads(rawValue: 1)
    /// The version decided as local (`DecisionStart.local`).
    static let local = ContentReads(rawValue: 2)
    /// The version both sides are measured from (`DecisionStart.base`).
    static let base = ContentReads(rawValue: 4)
    /// The version a remote deletion deleted, when it is not the base.
    static let deleted = ContentReads(rawValue: 8)
}

/// The bytes a document's outcome is settled from (nil: not read, or not there).
struct DocumentContent {
    var remote: [UInt8]?
    var local: [UInt8]?
    var base: [UInt8]?
    var deleted: [UInt8]?
}

/// What settling a document's content made of its decision.
struct SettledContent {
    var decision: Reconciler.Decision
    /// The path's policy, the fields that collided, whether the result is a merge (nil:
    /// no policy settled anything).
    var settled: DocumentPlanner.Settled?
    /// A merge's new content (its hash is `decision.result.hash`).
    var mergedBytes: [UInt8]?
}

/// A version a document's outcome lost, kept with its conflict record.
struct DocumentLoss {
    var record: ConflictStore.Record
    var bytes: [UInt8]?
    var summary: ConflictSummary
    var entry: JournalEntry
}
