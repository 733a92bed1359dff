import DocSyncJSON
import Foundation

/// One change as the remote records it: the latest version of a document, or its
/// tombstone.
public struct RemoteEntry: Codable, Sendable, Equatable {
    public var refId: String
    public var changesetId: String
    public var hash: String?
    public var path: String?
    public var deleted: Bool
    public var replica: String
    public var time: Int64
    /// Set when the remote holds this version without docsync's ids (written with plain
    /// git): the hash of the bytes as they are there. The pulling replica publishes the
    /// stamped version back.
    public var publishedHash: String? = nil
    /// When the version's path was set by a rename (ms), as the replica that moved it
    /// recorded it (see `JournalEntry.movedAt`); nil when the path is not a rename's.
    public var movedAt: Int64? = nil
    /// The versions (changesetIds) this one was made from: the version the pushing tree
    /// had synced, and any other published version its content carries (one it held on a
    /// chain that lost a fork). Written in drive-layout commits, where two chains can
    /// meet: their merge base is the latest version both descend from (VersionAncestry).
    /// Nil in entries written before docsync kept it, and in the other layouts.
    public var parents: [String]? = nil

    public var version: DocVersion? {
        guard !deleted, let hash, let path else { return nil }
        return DocVersion(refId: refId, changesetId: changesetId, hash: hash, path: path)
    }
}

extension RemoteEntry: LineEncodable {
    /// A git tombstone file's fields, in sorted order (see `LineEncodable`): a feed
    /// line's, without the folder-only ones.
    func writeFields(to line: inout JSONObjectLine) -> Bool { FeedLine(self).writeFields(to: &line) }
}

/// What changed on the remote since a cursor: the latest entry per document, in the
/// order they were made, and the cursor to remember once they are applied.
public struct RemoteChanges: Sendable {
    public var entries: [RemoteEntry]
    public var cursor: String
    /// Remote files that could not be taken as documents (plain-git edits gone wrong).
    public var warnings: [String] = []
    /// The entries are the remote's whole state, not the changes since the cursor (the
    /// cursor predates a feed compaction by `docsync gc`): a base document they do not
    /// name was deleted and its tombstone purged.
    public var isSnapshot = false
    /// Conflict records (and resolutions) other replicas shared since the cursor.
    public var conflicts: [SharedConflict] = []
    /// With `isSnapshot`: who made the deletions whose tombstones were purged, by refId,
    /// where the remote still says (a folder remote's compacted feed).
    public var purgedDeleters: [String: String] = [:]
    /// With `isSnapshot`: the deletions whose tombstones were purged, by refId, as the
    /// remote still records them (the deleted changesetId, and its hash where kept).
    public var purgedDeletions: [String: RemoteEntry] = [:]
    /// Set when the remote no longer holds the position this tree last synced with (a
    /// push another one overwrote, or history rewritten with `git push --force`): the
    /// entries are the changes since the last position both histories share.
    public var rewound: RewoundHistory? = nil
    /// Changes the remote holds only in part so far (a drive folder whose sync service
    /// has not copied every file yet): told to the user, read again on a later sync;
    /// never a problem and never a deletion.
    public var notArrived: [String] = []
    /// The versions the commits of this tree's own replica in the range hold, by refId
    /// (`entries` names only each document's latest): a push that landed but was killed
    /// before the tree journaled it shows here even after another replica built on it,
    /// and its version, not the one before, is what the tree's later edits were made on.
    public var ownVersions: [String: Set<String>] = [:]
    /// Documents the remote holds a version of that it left out for its size (see
    /// RemoteDocumentCeiling), by refId: named all the same, never read as deleted.
    public var withheld: Set<String> = []
}

/// The remote's history lost the position a tree synced with. What the tree based on it
/// and the remote no longer holds must be sent again, never read as deleted: the base
/// goes back to `common` (the documents at the last shared position) and the versions
/// that are not there become local actions again (see `RewoundHistory.entries`).
public struct RewoundHistory: Sendable {
    /// The position the tree had synced with, now gone from the remote's history.
    public var lost: String
    /// The last position both histories share (nil: none, as after a history replaced whole).
    public var commonPosition: String?
    /// The documents at `commonPosition`, by refId.
    public var common: [String: DocVersion]
    /// Their bytes, by content hash (the base of the merges that follow).
    public var contents: [String: [UInt8]]
    /// Reads bytes not in `contents` (a remote that keeps every version by hash reads
    /// only the few the tree needs, not all of `common`).
    public var load: (@Sendable (String) -> [UInt8]?)? = nil
    /// Why the position was lost, as the user is told (nil: a push another one
    /// overwrote, or history rewritten).
    public var explanation: String? = nil
    /// The merge base of the version of a document the tree holds (by changesetId) and
    /// the remote's, with its bytes when it is not a version the remote has (nil: not
    /// known; `common` stands). A remote whose versions name their parents answers it
    /// exactly, whatever the tree's cursor says it held.
    public var mergeBase: (@Sendable (_ refId: String, _ held: [String]) -> (DocVersion, [UInt8]?)?)? = nil
}

/// One document change to send: `new` nil means delete. `previous` is the version the
/// remote holds according to our base (nil: none), which is what the write replaces.
public struct RemoteWrite: Sendable {
    public var refId: String
    public var new: DocVersion?
    public var previous: DocVersion?
    public var deletedChangesetId: String?
    /// When the new version's path was set by a rename (see `RemoteEntry.movedAt`).
    public var movedAt: Int64?
    /// The versions the new one (or the deletion) was made from (see `RemoteEntry.parents`).
    public var parents: [String] = []
    /// The new version is sent again (this tree held it, pushed by it or by another
    /// replica, on a position the remote's history left: a lost fork). A remote whose versions name their parents names the
    /// ones its first push named as well: a reader that has this push and not the first
    /// one must still see what the version was made from.
    public var sentAgain = false
    /// Why a loader and not the bytes: a push plan then holds no document's bytes; the
    /// remote reads each one as it writes it, so a first push's memory does not grow
    /// with the documents' size.
    private let load: @Sendable () throws -> [UInt8]?

    public init(
        refId: String, new: DocVersion?, previous: DocVersion?, content: [UInt8]?, deletedChangesetId: String? = nil
    ) {
        self.init(
            refId: refId, new: new, previous: previous, deletedChangesetId: deletedChangesetId, loading: { content })
    }

    /// A write whose bytes `load` reads when the remote asks for them (`content()`).
    public init(
        refId: String, new: DocVersion?, previous: DocVersion?, deletedChangesetId: String? = nil,
        loading load: @escaping @Sendable () throws -> [UInt8]?
    ) {
        self.refId = refId
        self.new = new
        self.previous = previous
        self.deletedChangesetId = deletedChangesetId
        self.load = load
    }

    /// The new version's bytes; nil only for a deletion. A new version whose bytes cannot
    /// be had throws (`ObjectStore.Missing`): never written as an empty file or taken
    /// for a deletion.
    public func content() throws -> [UInt8]? {
        guard let new else { return nil }
        guard let bytes = try load() else { throw ObjectStore.Missing(hash: new.hash) }
        return bytes
    }
}

public struct ReplicaInfo: Codable, Sendable {
    public var replicaId: String
    public var name: String
    /// The docsync version this replica runs (shown by `docsync replicas`).
    public var version: String? = nil
    /// A sparse replica's selection patterns (nil: it keeps everything). Kept in its
    /// record on the remote, so that gc does not wait for it to read tombstones of
    /// documents it does not keep (see `SparseSelection.mayHold`).
    public var selection: [String]? = nil

    /// The running docsync's version, set once by the command line at start-up (the
    /// engine does not know its own release number).
    nonisolated(unsafe) public static var softwareVersion: String?
}

public enum RemoteError: Error, LocalizedError, Sendable {
    /// The remote cannot be reached now; try again later (exit 75).
    case unreachable(url: String, reason: String)
    /// Another machine holds the remote's lock (exit 75).
    case locked(url: String, holder: String)
    /// The remote changed since the cursor the write was based on: pull, then retry.
    case moved
    /// The remote's own metadata is damaged or is not what this tree synced with.
    case damaged(url: String, reason: String)
    /// A path or id from the remote that would escape the tree.
    case unsafe(url: String, reason: String)
    /// The remote answered but refused us: authentication, trust, no such repository or
    /// branch. Trying again will not help until the user fixes something.
    case rejected(url: String, reason: String)

    public var errorDescription: String? {
        switch self {
        case let .unreachable(url, reason):
            return
                "remote \(url) is unreachable: \(reason). Local changes stay recorded and will be sent on the next push"
        case let .locked(url, holder): return "remote \(url) is locked by another push (\(holder)); try again shortly"
        case .moved: return "the remote changed during the push"
        case let .damaged(url, reason): return "remote \(url): \(reason)"
        case let .unsafe(url, reason): return "remote \(url): refused \(reason)"
        case let .rejected(url, reason): return "remote \(url): \(reason)"
        }
    }

    /// A folder remote's root that is not a folder here: not there (not mounted: exit 75),
    /// or one this user may not look into (permission denied: exit 1, naming the path).
    static func missingFolder(_ root: String, url: String) -> RemoteError {
        do { _ = try FileSystem.status(root) } catch  where error.code == EACCES || error.code == EPERM {
            return unreadableFormat(root, error, url: url)
        } catch {}
        return .unreachable(url: url, reason: "folder \(root) does not exist (not mounted?)")
    }

    /// A folder remote's `format` file that could not be read. Permission denied is the
    /// user's to fix (exit 1), and says so with the path; a file that is not there reads
    /// as a share that is not mounted (exit 75). Why: a folder this user may not read said
    /// "not a docsync remote, or the share is not mounted", and cron stayed silent on 75.
    static func unreadableFormat(_ path: String, _ error: Error, url: String) -> RemoteError {
        if let error = error as? FileSystemError, error.code == EACCES || error.code == EPERM {
            return .rejected(
                url: url,
                reason:
                    "permission denied (EACCES) reading \(path): this user may not read the folder remote; "
                    + "give it read and write access to the folder, or run docsync as a user who has it")
        }
        return .unreachable(url: url, reason: "\(path) is missing: not a docsync remote, or the share is not mounted")
    }

    /// `unreachable`'s message for a replica that never sends (`sync.mode receive-only`).
    var receiveOnlyDescription: String? {
        guard case let .unreachable(url, reason) = self else { return nil }
        return "remote \(url) is unreachable: \(reason). Local changes stay recorded here (receive-only: never sent)"
    }
}

/// One version of a document in the remote's history.
public struct RemoteVersionInfo: Codable, Sendable, Equatable {
    /// Where it is in the remote's history: a commit id (git) or a generation (dir).
    public var id: String
    public var changesetId: String
    public var time: Int64
    public var author: String
    public var path: String?
    public var hash: String?
    public var deleted: Bool
}

/// What every remote does for the sync engine. Both kinds (a folder, a git repository)
/// implement it; nothing kind-specific leaks into the engine, and nothing the engine
/// relies on is left to one kind:
///
/// - `changes(since:)` answers with the latest entry per document changed after the
///   cursor, the conflict records shared since, and a new cursor; a cursor that is not
///   this remote's is an error, never "everything is new" (and a missing remote is
///   `.unreachable`, never "empty"). A no-op answer reads almost nothing.
/// - `commit` is all or nothing and compare-and-swap: it lands only if the remote is
///   still at the cursor (else `.moved`), so a push never overwrites a version it has not
///   seen. Afterwards every replica's `changes` sees all of it.
/// - `read` returns bytes whose hash is checked against the entry.
/// - Errors say whether trying again can help: `.unreachable` and `.locked` (exit 75),
///   everything else needs the user.
/// The engine checks every path and id that arrives (RemoteChanges.checked), whatever a
/// remote checked itself.
public protocol Remote: AnyObject {
    /// The URL as shown to users (never with credentials).
    var displayURL: String { get }
    /// Called by `commit` as each document is written (the write, how many so far, of
    /// how many), so a long push can show progress. A commit that then fails has not
    /// landed any of them.
    var writeProgress: ((RemoteWrite, Int, Int) -> Void)? { get set }
    /// Changes after `cursor` (nil: everything). A no-op answer must be cheap.
    func changes(since cursor: String?) throws -> RemoteChanges
    /// The bytes of one remote version, checked against its hash.
    func read(_ entry: RemoteEntry) throws -> [UInt8]
    /// Applies the writes and shares the conflict records as one change if the remote is
    /// still at `cursor`, else throws `RemoteError.moved`. Returns the new cursor.
    func commit(_ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursor: String?, replica: ReplicaInfo)
        throws -> String
    /// Records that `replica` has seen the remote up to `cursor` (for tombstone gc).
    func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws
    /// Problems with the remote's integrity, for `docsync verify`.
    func verify() -> [String]
    /// The versions of one document the remote has kept, newest first.
    func history(of refId: String, path: String?) throws -> [RemoteVersionInfo]
    /// The bytes of a version `history` returned.
    func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8]
    /// `docsync gc`: removes the tombstones every replica known to the remote has seen,
    /// or older than the rule's age. With `dryRun`, only says which.
    func purgeTombstones(_ rule: TombstoneRule, dryRun: Bool, replica: ReplicaInfo) throws -> TombstonePurge
    /// `docsync replicas`: every replica the remote knows, as it last recorded them.
    func knownReplicas() throws -> [KnownReplica]
    /// `docsync replicas forget`: the remote stops counting `replicaId` (for gc) until it
    /// syncs again. `replica` is the one doing it.
    func forgetReplica(_ replicaId: String, replica: ReplicaInfo) throws
    /// Readable names of the replicas the remote knows, by id, from what is at hand (a
    /// folder's replica records, read without the lock; the authors of the git history
    /// last fetched): no network, nothing written. Empty when nothing can be read.
    func replicaNamesAtHand() -> [String: String]
    /// `docsync gc`: compacts what this remote keeps on the local machine (a git remote's
    /// cache repository), keeping what `cursor` names. Nil: nothing kept locally.
    func compactLocalCache(keeping cursor: String?, dryRun: Bool) throws -> GitCacheRepack?
    /// The merge base of content made from the versions `held` (a tree's base and those its
    /// pending content carries) and the remote's version `theirs` of `refId`, with its bytes
    /// when it is not a version the remote has. Nil: not known (the tree's base stands). A
    /// remote whose versions name their parents (the drive layout) answers it.
    func mergeBase(of refId: String, held: [String], theirs: String) -> (DocVersion, [UInt8]?)?
    /// Whether the remote's history can leave a position behind without anyone rewriting
    /// it (two pushes at the same time on a drive, one of which loses): a pull that did not
    /// reach its cursor is then checked against the remote's whole state.
    var historiesFork: Bool { get }
    /// Tells the remote which versions the tree holds (its base), before a pull: a remote
    /// that checks what a version names as its parents has them at hand then.
    func tellHeldVersions(_ held: @escaping (_ refId: String, _ changesetId: String) -> Bool)
    /// Of `candidates` (versions of this tree's pending actions, by refId), those a commit
    /// this tree's replica made at or after `time` holds, on any chain: pushes that landed
    /// before the run that made them was killed. The tree's later versions are made from
    /// them, and a remote whose versions name their parents names them too.
    func ownCommitsHold(_ candidates: [String: Set<String>], since time: Int64) -> [String: Set<String>]
}

extension Remote {
    public func compactLocalCache(keeping cursor: String?, dryRun: Bool) throws -> GitCacheRepack? { nil }
    public func mergeBase(of refId: String, held: [String], theirs: String) -> (DocVersion, [UInt8]?)? { nil }
    public var historiesFork: Bool { false }
    public func tellHeldVersions(_ held: @escaping (_ refId: String, _ changesetId: String) -> Bool) {}
    public func ownCommitsHold(_ candidates: [String: Set<String>], since time: Int64) -> [String: Set<String>] {
        [:]
    }

    /// A commit of document writes only.
    public func commit(_ writes: [RemoteWrite], expecting cursor: String?, replica: ReplicaInfo) throws -> String {
        try commit(writes, conflicts: [], expecting: cursor, replica: replica)
    }
}
