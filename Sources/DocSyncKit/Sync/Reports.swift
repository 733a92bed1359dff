/// What happened to a document, as shown to users and in `--json` output.
public enum ChangeKind: String, Codable, Sendable {
    case create, update, rename, delete, restore, resolve

    /// The change that takes a document from `previous` to `next` (nil: no document).
    static func between(_ previous: DocVersion?, _ next: DocVersion?) -> ChangeKind {
        guard let next else { return .delete }
        guard let previous else { return .create }
        return previous.hash == next.hash ? .rename : .update
    }
}

/// One document change as shown to users and in `--json` output.
public struct ChangeSummary: Codable, Sendable, Equatable {
    public var kind: ChangeKind
    public var path: String
    public var refId: String
    public var changesetId: String?
    public var fromPath: String?

    /// A local action's summary.
    init(_ entry: JournalEntry) {
        kind = ChangeKind(rawValue: entry.kind.rawValue) ?? .update
        path = entry.path ?? ""
        refId = entry.refId ?? ""
        changesetId = entry.changesetId
        fromPath = entry.fromPath
    }

    /// The change that takes a document from `from` to `to` (nil: no document), named by
    /// the path it ends at (`fallbackPath` when neither version has one), with the path it
    /// left when it moved.
    init(from: DocVersion?, to: DocVersion?, refId: String, changesetId: String?, fallbackPath: String = "") {
        self.init(
            kind: .between(from, to), path: to?.path ?? from?.path ?? fallbackPath, refId: refId,
            changesetId: changesetId, fromPath: from != nil && to != nil && from?.path != to?.path ? from?.path : nil)
    }

    init(kind: ChangeKind, path: String, refId: String, changesetId: String?, fromPath: String? = nil) {
        self.kind = kind
        self.path = path
        self.refId = refId
        self.changesetId = changesetId
        self.fromPath = fromPath
    }
}

/// Which version a conflict kept in the file.
public enum KeptVersion: String, Codable, Sendable, Equatable {
    case local, remote, merged

    /// The side that is not `side`: what stays when `side`'s deletion or name lost.
    static func other(than side: Reconciler.Side) -> KeptVersion { side == .local ? .remote : .local }
}

/// What a conflict stored aside: a side's version, deletion or name; or, for a loss heard
/// from the replica that recorded it, that replica's version or deletion.
public enum StoredVersion: String, Codable, Sendable, Equatable {
    case local, remote
    case localDeletion = "local deletion", remoteDeletion = "remote deletion"
    case localRename = "local rename", remoteRename = "remote rename"
    case version, deletion

    static func version(of side: Reconciler.Side) -> StoredVersion { side == .local ? .local : .remote }
    static func deletion(of side: Reconciler.Side) -> StoredVersion {
        side == .local ? .localDeletion : .remoteDeletion
    }
    static func rename(of side: Reconciler.Side) -> StoredVersion { side == .local ? .localRename : .remoteRename }

    public var isDeletion: Bool { [.localDeletion, .remoteDeletion, .deletion].contains(self) }
}

public struct ConflictSummary: Codable, Sendable, Equatable {
    public var refId: String
    public var path: String
    public var kept: KeptVersion
    public var keptChangesetId: String
    public var stored: StoredVersion
    public var storedChangesetId: String
    public var file: String?
    /// Fields changed differently on both sides, when the document was merged.
    public var fields: [String]? = nil
    /// The replica that recorded it, when that was another one (it arrived with a pull).
    public var recordedBy: String? = nil
}

/// A problem a run reports: a file that is not a valid document, or one that is not about
/// a file's content.
public enum ReportedProblem: Sendable, Equatable, Codable, CustomStringConvertible {
    /// A file that is not a valid document (invalid JSON, or failing its schema), left
    /// untouched.
    case invalidDocument(DocumentProblem)
    /// Anything else: a refused write, something the remote sent that was refused.
    case other(String)

    /// The file that is not a valid document (nil: another kind of problem).
    public var invalidFile: String? {
        if case .invalidDocument(let problem) = self { problem.path } else { nil }
    }

    /// As shown: `path:line:col: reason`, `path: /pointer: reason`, `refused to write …`.
    public var message: String {
        switch self {
        case .invalidDocument(let problem): problem.description
        case .other(let text): text
        }
    }

    public var description: String { message }

    /// The distinct files of `problems` that are not valid documents, sorted.
    static func invalidFiles(in problems: [ReportedProblem]) -> [String] {
        Array(Set(problems.compactMap(\.invalidFile))).sorted()
    }

    /// In `--json` output a problem is its message (docs/JSON.md). Read back, it is
    /// `.other`: the text does not say which file, if any, it is about.
    public init(from decoder: Decoder) throws {
        self = .other(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(message)
    }
}

/// What a push, pull or sync did (or, with --dry-run, would do).
public struct SyncReport: Codable, Sendable {
    public var dryRun = false
    public var recorded: [ChangeSummary] = []
    public var pulled: [ChangeSummary] = []
    public var pushed: [ChangeSummary] = []
    public var conflicts: [ConflictSummary] = []
    public var notices: [String] = []
    public var problems: [ReportedProblem] = []
    public var warnings: [String] = []
    /// Remote versions waiting for a local file to become valid again (path: version).
    public var waiting: [String] = []
    public var pendingAfter = 0
    public var remoteUnreachable: String? = nil
    /// Set when the max-delete guard stopped the push (the pull before it still happened).
    public var refusedPush: RefusedPush? = nil
    /// `restore`: which version each document got back, and the new version it became.
    public var restored: [RestoredVersion]? = nil
    /// `revert`: the local changes it undid (what status listed), each document once.
    public var reverted: [ChangeSummary]? = nil
    /// `override`: the held remote changes it pushed the local version over.
    public var overridden: [ChangeSummary]? = nil
    /// "receive-only" when this replica never sends (`sync.mode`): the run only pulled,
    /// and `pendingAfter` counts documents whose changes stay here. "send-only" when it
    /// never applies: `notApplied` lists the remote changes held aside.
    public var syncMode: SyncMode? = nil
    /// Send-only: every remote change held aside after the run, unapplied (nil otherwise).
    public var notApplied: [ChangeSummary]? = nil
    /// A sparse replica: the files of documents that left its selection, removed here
    /// (still on the remote).
    public var leftSelection: [String]? = nil
    /// Tracked documents the scan could not look at (nil: none): kept, not deleted; the
    /// run exits 1.
    public var unknown: [UnknownDocument]? = nil

    public init() {}

    /// The files behind `problems` that are not valid documents (invalid JSON, or failing
    /// their schema: one file can have several problems), sorted.
    public var invalidFiles: [String] { ReportedProblem.invalidFiles(in: problems) }
}

/// A push the max-delete guard (`push.maxDeleteShare`) stopped: nothing was sent.
public struct RefusedPush: Codable, Sendable, Equatable {
    /// Deletions the push would have made, of the remote's `total` documents.
    public var count: Int
    public var total: Int
    public var maxDeleteShare: Double
    /// The documents it would have deleted (path, refId, the version deleted).
    public var deletions: [ChangeSummary]
    /// The one command that brings every one of them back (see `Workspace.restore`).
    public var restoreCommand = "docsync restore --deleted"
}

/// One document `restore` brought back.
public struct RestoredVersion: Codable, Sendable, Equatable {
    public var refId: String
    public var path: String
    /// The version brought back.
    public var version: String
    /// Where it was found: `journal` (this replica's object store) or `remote`.
    public var source: String
    /// The changesetId the restored content carries now (a new edit); nil in a dry run.
    public var changesetId: String?
}

public struct StatusReport: Codable, Sendable {
    public var root: String
    public var replicaId: String
    public var remote: String?
    public var lastSync: Int64?
    public var pending: [ChangeSummary]
    public var unrecorded: [ChangeSummary]
    public var conflicts: [ConflictStore.Record]
    /// Remote versions held aside until a local file is valid again (path: version).
    public var waiting: [String] = []
    public var problems: [ReportedProblem]
    public var warnings: [String]
    /// The last run that gave up for now (exit 75), if none has synced since.
    public var lastAttempt: DeferredAttempt? = nil
    /// `sync.mode`: both, receive-only (`pending` is then never sent) or send-only.
    public var syncMode: SyncMode = .both
    /// Send-only: the remote changes held aside, unapplied (a document's local changes
    /// wait with them, see `docsync override`).
    public var notApplied: [ChangeSummary] = []
    /// A sparse replica's selection patterns (nil: the replica keeps everything).
    public var selection: [String]? = nil
    /// A sparse replica's files outside its selection that hold no document it keeps:
    /// never recorded or synced.
    public var outsideSelection: [String] = []
    /// Tracked documents the scan could not look at (nil: none): kept, not deleted.
    public var unknown: [UnknownDocument]? = nil

    /// The files behind `problems`, sorted.
    public var invalidFiles: [String] { ReportedProblem.invalidFiles(in: problems) }
}

public struct LogEntry: Codable, Sendable {
    public var entry: JournalEntry
    public var pending: Bool
}
