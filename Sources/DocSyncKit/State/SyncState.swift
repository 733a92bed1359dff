import Foundation

/// The checkpoint of everything that is not a cache: the base (last-synced version of
/// every document), the local actions not yet on the remote, and the remote position
/// the base reflects. Written whole and atomically to `.docsync/state`; the journal
/// entries after `journalOffset` are folded in on load, so a crash between a journal
/// append and a checkpoint loses nothing.
public struct SyncState: Sendable {
    /// The state file's lines until a version is asked for (see `BaseStorage`).
    var baseStorage = BaseStorage()
    /// Every document's base version, parsed whole. Runs that touch a few documents ask
    /// `baseVersions` (or `trackedVersions`) instead, which parse only what they look up.
    public var base: [String: DocVersion] {
        get { baseStorage.parsed }
        set {
            baseStorage = BaseStorage(newValue)
            savedDigest = nil
            baseChangedPaths = nil
        }
        _modify {
            makeBaseUnique()
            baseStorage.willChange()
            _ = baseStorage.parsed
            baseChangedPaths = nil
            yield &baseStorage.versions
        }
    }
    /// The base versions, looked up one at a time.
    var baseVersions: VersionTable { VersionTable(base: baseStorage, count: baseStorage.count) }
    /// The paths, before and after, of every document whose base version changed since
    /// the state was read; nil when the base changed otherwise (set whole), so unknown.
    /// Why: an index's synced flags set against the state as read still hold for every
    /// other path (see `UnchangedTree.Against`), and need no lookup.
    var baseChangedPaths: Set<String>? = []
    /// The stamp of the state file this state was read from (0: not read from one).
    var readStamp: UInt64 = 0
    /// Reads and checks the base file (`BaseFile`) if it was not read yet; a run calls it
    /// where it first needs the base, so that a damaged one is an error it reports.
    public func readBase() throws { try baseStorage.read() }
    /// Whether the base file was read (for tests: a no-op reads none).
    var baseFileRead: Bool { baseStorage.isRead }
    /// How many of the state file's base lines this state parsed (see `BaseStorage`).
    var baseLinesParsed: Int { baseStorage.linesParsed }
    /// How many documents the base holds, without parsing it.
    public var baseCount: Int { baseStorage.count }
    /// The checksum of the state file this state is (nil: changed since it was read or
    /// saved). The index's synced flags hold for the state it names (see `UnchangedTree`).
    public internal(set) var savedDigest: String? = nil
    /// Set when a pull moved the base and its cursor did not follow (it was killed, or a
    /// file it meant to write had changed): the base may hold versions of a remote
    /// position the cursor does not name, which a remote whose histories fork may have
    /// left since (see `SyncSession.reconcileBaseAhead`). The next cursor clears it.
    public var baseAheadOfCursor = false
    public var pending: [JournalEntry] = []
    /// Remote versions held aside while the local file is invalid (see `JournalEntry.Kind.held`).
    public var held: [String: JournalEntry] = [:]
    public var cursor: String? = nil
    public var journalSeq: Int = 0
    public var journalOffset: Int = 0
    public var lastSync: Int64? = nil

    public init() {}

    /// The recorded local state: the base with the pending actions applied in order.
    public var tracked: [String: DocVersion] { trackedVersions.all }

    /// The recorded local state, looked up one document at a time: the base, and over it
    /// what the pending actions made of the documents they touch.
    var trackedVersions: VersionTable {
        guard !pending.isEmpty else { return baseVersions }
        var overlay: [String: DocVersion?] = [:]
        for action in pending {
            guard case .local = action.event, let refId = action.refId else { continue }
            overlay[refId] = .some(action.resultingVersion)
        }
        var count = baseStorage.count
        for (refId, version) in overlay {
            count += (version != nil ? 1 : 0) - (baseStorage.version(refId) != nil ? 1 : 0)
        }
        return VersionTable(base: baseStorage, overlay: overlay, count: count)
    }

    /// Documents whose refId docsync gave to a file without ids and that never reached
    /// a remote, with all their pending actions (see `ChangeRecorder.rejoining`).
    var unsyncedMintedDocuments: [String: [Int]] {
        var minted: [String: [Int]] = [:]
        for action in pending where action.mintedId == true {
            if let refId = action.refId, base[refId] == nil { minted[refId] = [] }
        }
        guard !minted.isEmpty else { return [:] }
        for action in pending {
            if let refId = action.refId, minted[refId] != nil { minted[refId]!.append(action.seq) }
        }
        return minted
    }

    /// When each document with pending actions was last moved (see `JournalEntry.movedAt`).
    static func moveTimes(_ pending: [JournalEntry]) -> [String: Int64] {
        var times: [String: Int64] = [:]
        for action in pending where action.fromPath != nil {
            if let refId = action.refId { times[refId] = action.movedAt ?? action.time }
        }
        return times
    }

    static func applyLocal(_ action: JournalEntry, to docs: inout [String: DocVersion]) {
        guard case let .local(kind, version, _) = action.event else { return }
        if kind == .delete { docs.removeValue(forKey: version.refId) } else { docs[version.refId] = version }
    }

    /// Applies one journal entry. The same function runs live and during recovery.
    public mutating func fold(_ entry: JournalEntry) {
        savedDigest = nil
        switch entry.event {
        case .local:
            pending.append(entry)
        case let .done(refId, seqs, reason):
            let finished = Set(seqs)
            // A pull's own push found on the remote: the base moves with the pull's cursor.
            if refId != nil && reason == .pushed { baseAheadOfCursor = true }
            if reason == .pushed {
                for action in pending where finished.contains(action.seq) {
                    guard case let .local(kind, version, _) = action.event else { continue }
                    setBase(version.refId, kind == .delete ? nil : version)
                }
            }
            pending.removeAll { finished.contains($0.seq) }
        case .apply, .conflict, .resolve:
            // A file operation (redone on recovery) and a note: no state of their own.
            break
        case let .seen(refId, remote, reason):
            // A document leaving a sparse replica is no remote position.
            if reason != .leftSelection { baseAheadOfCursor = true }
            setBase(refId, remote.version)
            held.removeValue(forKey: refId)
        case let .held(refId, _, _):
            held[refId] = entry
        case let .cursor(position):
            cursor = position
            baseAheadOfCursor = false
            lastSync = entry.time
        }
        journalSeq = max(journalSeq, entry.seq)
    }

    /// Sets (or with nil removes) one document's base version, noting its paths.
    private mutating func setBase(_ refId: String, _ version: DocVersion?) {
        makeBaseUnique()
        let before = baseStorage.set(refId, version)
        if let before { baseChangedPaths?.insert(before.path) }
        if let version { baseChangedPaths?.insert(version.path) }
    }

    /// The base this state's own (cloned if another state or table shares it), about to
    /// change.
    private mutating func makeBaseUnique() {
        if !isKnownUniquelyReferenced(&baseStorage) { baseStorage = baseStorage.clone() }
        savedDigest = nil
    }
}
