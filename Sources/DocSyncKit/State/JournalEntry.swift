import DocSyncJSON
import Foundation

/// One line of the action journal: its sequence number, when it was written, and what
/// happened (`Event`), with exactly the data that kind of event carries. Local actions
/// are what the user did; the other events record what syncing did with them.
///
/// On disk each entry is one flat JSON object (`kind` plus the fields of that kind, see
/// docs/FORMATS.md); `Codable` maps between the two, and a line whose fields do not fit
/// its kind is damage, not a guess.
public struct JournalEntry: Sendable, Equatable {
    public var seq: Int
    public var time: Int64
    public var event: Event
    /// Set on every entry of an appended batch but the last: the batch goes on in the
    /// next line. Only in the file (entries read or appended come back without it).
    public var more: Bool?
    /// Set on a `create` whose refId docsync gave to a file that had none. Until the
    /// tree first syncs with its remote, such a document may still join the remote's
    /// document at its path instead (see `ChangeRecorder.joining`): its identity is
    /// docsync's choice, not the user's.
    public var mintedId: Bool?
    /// Set on a local action that moved a document: when the file was moved (its change
    /// time, ms; never later than when it was recorded). The later of two renames of one
    /// document wins on every replica, whichever syncs first (see `Reconciler`).
    public var movedAt: Int64?
    /// Set on a `held` remote deletion: the hash of the version it deleted, whose bytes
    /// were stored when it was held. Why: when the fix meets the deletion, that version is
    /// kept with the conflict record, and the remote may no longer have it by then (gc).
    public var deletedHash: String?
    /// Set on a local action whose content carries published versions beyond the base it
    /// is recorded on (changesetIds): the version a tree held before its remote's history
    /// went back (a lost fork, a rewrite). A push names them as the new version's parents
    /// (`RemoteEntry.parents`), so a later merge measures from what the content really
    /// descends from.
    public var madeFrom: [String]?

    public enum Event: Sendable, Equatable {
        /// A local action, pending until a `done` names it. `version` is the version the
        /// action leaves; for a delete, the version that was deleted.
        case local(LocalAction, version: DocVersion, fromPath: String?)
        /// Finishes the local actions `seqs` (of `refId`, when it is about one document).
        case done(refId: String?, seqs: [Int], reason: DoneReason)
        /// A file operation of a pull, logged before it is done and redone after a crash.
        case apply(FileOperation)
        /// The remote's state of a document, which becomes its base. `reason` says why,
        /// where it is not a pull's (see `SeenReason`).
        case seen(refId: String, RemoteState, reason: SeenReason?)
        /// A remote state held aside while the local file is not a valid document; a
        /// later `seen` of the document ends the hold. `replica` made the change (for a
        /// deletion: who deleted, who is told if the deletion loses to the fix).
        case held(refId: String, RemoteState, replica: String?)
        /// A losing version (or deletion) kept in the conflict store; `side` lost.
        case conflict(refId: String, changesetId: String, path: String?, side: Reconciler.Side, deleted: Bool)
        /// The remote position the base now reflects.
        case cursor(String)
        /// A conflict settled by `docsync resolve`: `take` is what was asked (local, remote,
        /// an id, "as is"), `changesetId` the stored version taken, if any.
        case resolve(refId: String, changesetId: String?, path: String?, take: ResolveTake)
    }

    public enum LocalAction: String, Sendable, Codable { case create, update, rename, delete }

    public enum DoneReason: String, Sendable, Codable {
        /// The actions are on the remote: they become the base.
        case pushed
        /// The outcome of a reconciliation replaced them.
        case superseded
        /// `docsync revert` put the synced version back: they are dropped, the base stays.
        case reverted
    }

    /// A document on the remote: a version, or its deletion (the deleted changesetId,
    /// and where it was).
    public enum RemoteState: Sendable, Equatable {
        case version(DocVersion)
        case deleted(changesetId: String, path: String?)

        public var version: DocVersion? {
            if case .version(let v) = self { return v }
            return nil
        }

        var changesetId: String {
            switch self {
            case .version(let v): return v.changesetId
            case .deleted(let id, _): return id
            }
        }

        var path: String? {
            switch self {
            case .version(let v): return v.path
            case .deleted(_, let path): return path
            }
        }
    }

    /// The working tree's copy of `refId` becomes `result` (nil: removed), from the file
    /// at `fromPath` with hash `fromHash` (nil: there was none).
    public struct FileOperation: Sendable, Equatable {
        public var refId: String
        /// The resulting version's id, or for a removal the deleted version's.
        public var changesetId: String
        public var result: DocVersion?
        public var fromPath: String?
        public var fromHash: String?
    }

    public init(_ event: Event) {
        seq = 0
        time = FileSystem.currentTimeNanos / 1_000_000
        self.event = event
    }

    /// The base a document had before a pull that could not be applied to it, put back
    /// (so the local file is compared with what it really came from next time).
    static func notApplied(refId: String, base: DocVersion?) -> JournalEntry {
        JournalEntry(
            .seen(
                refId: refId, base.map { .version($0) } ?? .deleted(changesetId: "", path: nil), reason: .notApplied))
    }

    // MARK: Reading an event's fields

    /// The tag written to disk.
    public enum Kind: String, Codable, Sendable {
        case create, update, rename, delete, done, apply, seen, held, conflict, cursor, resolve
    }

    public var kind: Kind {
        switch event {
        case .local(let action, _, _): return Kind(rawValue: action.rawValue)!
        case .done: return .done
        case .apply: return .apply
        case .seen: return .seen
        case .held: return .held
        case .conflict: return .conflict
        case .cursor: return .cursor
        case .resolve: return .resolve
        }
    }

    public var isLocalAction: Bool {
        if case .local = event { return true }
        return false
    }

    public var refId: String? {
        switch event {
        case .local(_, let v, _): return v.refId
        case .done(let refId, _, _): return refId
        case .apply(let op): return op.refId
        case .seen(let refId, _, _), .held(let refId, _, _): return refId
        case .conflict(let refId, _, _, _, _), .resolve(let refId, _, _, _): return refId
        case .cursor: return nil
        }
    }

    public var changesetId: String? {
        switch event {
        case .local(_, let v, _): return v.changesetId
        case .apply(let op): return op.changesetId
        case .seen(_, let state, _), .held(_, let state, _): return state.changesetId
        case .conflict(_, let id, _, _, _): return id
        case .resolve(_, let id, _, _): return id
        case .done, .cursor: return nil
        }
    }

    public var hash: String? {
        switch event {
        case .local(_, let v, _): return v.hash
        case .apply(let op): return op.result?.hash
        case .seen(_, let state, _), .held(_, let state, _): return state.version?.hash
        default: return nil
        }
    }

    public var path: String? {
        switch event {
        case .local(_, let v, _): return v.path
        case .apply(let op): return op.result?.path
        case .seen(_, let state, _), .held(_, let state, _): return state.path
        case .conflict(_, _, let path, _, _), .resolve(_, _, let path, _): return path
        case .done, .cursor: return nil
        }
    }

    public var fromPath: String? {
        switch event {
        case .local(_, _, let from): return from
        case .apply(let op): return op.fromPath
        default: return nil
        }
    }

    /// The version a local action or a file operation leaves the document in (nil:
    /// deleted, or not such an entry).
    public var resultingVersion: DocVersion? {
        switch event {
        case .local(let action, let v, _): return action == .delete ? nil : v
        case .apply(let op): return op.result
        default: return nil
        }
    }

    // MARK: The line format

    /// The entry's fields, in sorted order (see `LineEncodable`): every one is a string,
    /// number, flag or list of them.
    func writeFields(to line: inout JSONObjectLine) -> Bool {
        let f = flat
        line.field("changesetId", f.changesetId)
        line.field("cursor", f.cursor)
        line.field("deleted", f.deleted)
        line.field("deletedHash", deletedHash)
        line.field("fromHash", f.fromHash)
        line.field("fromPath", f.fromPath)
        line.field("hash", f.hash)
        line.field("kind", kind.rawValue)
        line.field("madeFrom", madeFrom)
        line.field("mintedId", mintedId)
        line.field("more", more)
        line.field("movedAt", movedAt)
        line.field("path", f.path)
        line.field("reason", f.reason)
        line.field("refId", f.refId)
        line.field("replica", f.replica)
        line.field("seq", seq)
        line.field("seqs", f.seqs)
        line.field("time", time)
        return true
    }

    static func decode(_ payload: String) throws -> JournalEntry {
        try JSONDecoder().decode(JournalEntry.self, from: Data(payload.utf8))
    }
}

extension JournalEntry: Codable, LineEncodable {
    private enum Field: String, CodingKey {
        case seq, kind, time, refId, changesetId, hash, path, fromPath, fromHash, deleted, seqs, reason, cursor,
            replica, more, mintedId, movedAt, deletedHash, madeFrom
    }

    /// The flat fields of one line (the format every earlier version wrote).
    private struct Flat {
        var refId, changesetId, hash, path, fromPath, fromHash, reason, cursor, replica: String?
        var deleted: Bool?
        var seqs: [Int]?
    }

    struct Malformed: Error, CustomStringConvertible {
        var kind: Kind
        var description: String { "a \(kind.rawValue) entry without the fields it needs" }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Field.self)
        seq = try c.decode(Int.self, forKey: .seq)
        time = try c.decode(Int64.self, forKey: .time)
        more = try c.decodeIfPresent(Bool.self, forKey: .more)
        mintedId = try c.decodeIfPresent(Bool.self, forKey: .mintedId)
        movedAt = try c.decodeIfPresent(Int64.self, forKey: .movedAt)
        madeFrom = try c.decodeIfPresent([String].self, forKey: .madeFrom)
        deletedHash = try c.decodeIfPresent(String.self, forKey: .deletedHash)
        let kind = try c.decode(Kind.self, forKey: .kind)
        let f = Flat(
            refId: try c.decodeIfPresent(String.self, forKey: .refId),
            changesetId: try c.decodeIfPresent(String.self, forKey: .changesetId),
            hash: try c.decodeIfPresent(String.self, forKey: .hash),
            path: try c.decodeIfPresent(String.self, forKey: .path),
            fromPath: try c.decodeIfPresent(String.self, forKey: .fromPath),
            fromHash: try c.decodeIfPresent(String.self, forKey: .fromHash),
            reason: try c.decodeIfPresent(String.self, forKey: .reason),
            cursor: try c.decodeIfPresent(String.self, forKey: .cursor),
            replica: try c.decodeIfPresent(String.self, forKey: .replica),
            deleted: try c.decodeIfPresent(Bool.self, forKey: .deleted),
            seqs: try c.decodeIfPresent([Int].self, forKey: .seqs))
        guard let event = Self.event(kind, f) else { throw Malformed(kind: kind) }
        self.event = event
    }

    private static func event(_ kind: Kind, _ f: Flat) -> Event? {
        func state() -> RemoteState? {
            guard let id = f.changesetId else { return nil }
            if f.deleted != true, let refId = f.refId, let hash = f.hash, let path = f.path {
                return .version(DocVersion(refId: refId, changesetId: id, hash: hash, path: path))
            }
            return .deleted(changesetId: id, path: f.path)
        }
        switch kind {
        case .create, .update, .rename, .delete:
            guard let refId = f.refId, let id = f.changesetId, let hash = f.hash, let path = f.path else { return nil }
            return .local(
                LocalAction(rawValue: kind.rawValue)!,
                version: DocVersion(refId: refId, changesetId: id, hash: hash, path: path), fromPath: f.fromPath)
        case .done:
            guard let seqs = f.seqs, let reason = DoneReason(rawValue: f.reason ?? "") else { return nil }
            return .done(refId: f.refId, seqs: seqs, reason: reason)
        case .apply:
            guard let refId = f.refId, let id = f.changesetId else { return nil }
            let result =
                f.deleted == true
                ? nil
                : f.hash.flatMap { hash in
                    f.path.map { DocVersion(refId: refId, changesetId: id, hash: hash, path: $0) }
                }
            return .apply(
                FileOperation(refId: refId, changesetId: id, result: result, fromPath: f.fromPath, fromHash: f.fromHash)
            )
        case .seen:
            guard let refId = f.refId, let state = state() else { return nil }
            return .seen(refId: refId, state, reason: f.reason.map(SeenReason.init(text:)))
        case .held:
            guard let refId = f.refId, let state = state() else { return nil }
            return .held(refId: refId, state, replica: f.replica)
        case .conflict:
            // Records before deletions lost to edits said "local file invalid" for a
            // remote version kept aside.
            guard let refId = f.refId, let id = f.changesetId else { return nil }
            let side: Reconciler.Side = f.reason == "local" ? .local : .remote
            return .conflict(refId: refId, changesetId: id, path: f.path, side: side, deleted: f.deleted == true)
        case .cursor:
            guard let cursor = f.cursor else { return nil }
            return .cursor(cursor)
        case .resolve:
            guard let refId = f.refId else { return nil }
            return .resolve(refId: refId, changesetId: f.changesetId, path: f.path, take: ResolveTake(text: f.reason))
        }
    }

    private var flat: Flat {
        var f = Flat()
        func put(_ state: RemoteState) {
            f.changesetId = state.changesetId
            f.path = state.path
            if case .version(let v) = state { f.hash = v.hash } else { f.deleted = true }
        }
        switch event {
        case let .local(_, v, from):
            (f.refId, f.changesetId, f.hash, f.path, f.fromPath) = (v.refId, v.changesetId, v.hash, v.path, from)
        case let .done(refId, seqs, reason):
            (f.refId, f.seqs, f.reason) = (refId, seqs, reason.rawValue)
        case let .apply(op):
            (f.refId, f.changesetId, f.hash, f.path, f.fromPath, f.fromHash) = (
                op.refId, op.changesetId, op.result?.hash, op.result?.path, op.fromPath, op.fromHash
            )
            if op.result == nil { f.deleted = true }
        case let .seen(refId, state, reason):
            f.refId = refId
            put(state)
            f.reason = reason?.text
        case let .held(refId, state, replica):
            f.refId = refId
            put(state)
            f.replica = replica
        case let .conflict(refId, id, path, side, deleted):
            (f.refId, f.changesetId, f.path, f.reason) = (refId, id, path, side.rawValue)
            if deleted { f.deleted = true }
        case let .cursor(cursor):
            f.cursor = cursor
        case let .resolve(refId, id, path, take):
            (f.refId, f.changesetId, f.path, f.reason) = (refId, id, path, take.text)
        }
        return f
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Field.self)
        try c.encode(seq, forKey: .seq)
        try c.encode(kind, forKey: .kind)
        try c.encode(time, forKey: .time)
        try c.encodeIfPresent(more, forKey: .more)
        try c.encodeIfPresent(mintedId, forKey: .mintedId)
        try c.encodeIfPresent(movedAt, forKey: .movedAt)
        try c.encodeIfPresent(madeFrom, forKey: .madeFrom)
        try c.encodeIfPresent(deletedHash, forKey: .deletedHash)
        let f = flat
        try c.encodeIfPresent(f.refId, forKey: .refId)
        try c.encodeIfPresent(f.changesetId, forKey: .changesetId)
        try c.encodeIfPresent(f.hash, forKey: .hash)
        try c.encodeIfPresent(f.path, forKey: .path)
        try c.encodeIfPresent(f.fromPath, forKey: .fromPath)
        try c.encodeIfPresent(f.fromHash, forKey: .fromHash)
        try c.encodeIfPresent(f.deleted, forKey: .deleted)
        try c.encodeIfPresent(f.seqs, forKey: .seqs)
        try c.encodeIfPresent(f.reason, forKey: .reason)
        try c.encodeIfPresent(f.cursor, forKey: .cursor)
        try c.encodeIfPresent(f.replica, forKey: .replica)
    }
}
