import Foundation

/// The checkpoint of everything that is not a cache: the base (last-synced version of
/// every document), the local actions not yet on the remote, and the remote position
/// the base reflects. Written whole and atomically to `.docsync/state`; the journal
/// entries after `journalOffset` are folded in on load, so a crash between a journal
/// append and a checkpoint loses nothing.
public struct SyncState: Sendable {
    public var base: [String: DocVersion] = [:]
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
    public var tracked: [String: DocVersion] {
        var result = base
        for action in pending { Self.applyLocal(action, to: &result) }
        return result
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
        switch entry.event {
        case .local:
            pending.append(entry)
        case let .done(refId, seqs, reason):
            let finished = Set(seqs)
            // A pull's own push found on the remote: the base moves with the pull's cursor.
            if refId != nil && reason == .pushed { baseAheadOfCursor = true }
            if reason == .pushed {
                for action in pending where finished.contains(action.seq) { Self.applyLocal(action, to: &base) }
            }
            pending.removeAll { finished.contains($0.seq) }
        case .apply, .conflict, .resolve:
            // A file operation (redone on recovery) and a note: no state of their own.
            break
        case let .seen(refId, remote, _):
            baseAheadOfCursor = true
            if let version = remote.version { base[refId] = version } else { base.removeValue(forKey: refId) }
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

    // MARK: - File format

    static let header = "docsync-state 1"

    public struct Damaged: Error, LocalizedError {
        public var path: String
        public var reason: String
        public var errorDescription: String? {
            "\(path): the sync state is \(reason). docsync will not guess (that could look like every document was deleted). See docs/RECOVERY.md: `docsync reset-base` rebuilds it safely from the tree and the remote"
        }
    }

    public static func load(from path: String) throws -> SyncState {
        guard let bytes = try FileSystem.readFileIfPresent(path) else {
            throw Damaged(path: path, reason: "missing")
        }
        var state = SyncState()
        state.base.reserveCapacity(bytes.count / 150)
        var sawHeader = false
        var sawEnd = false
        let sound = try SealedFile.forEachLine(bytes) { f in
            if !sawHeader {
                guard f.count == 1, f.equals(0, "docsync-state 1") else {
                    throw Damaged(path: path, reason: "not a state file this version understands")
                }
                sawHeader = true
            } else if f.equals(0, "end") && f.count == 3 {
                guard f.int64(1) == Int64(state.base.count), f.int64(2) == Int64(state.pending.count) else {
                    throw Damaged(path: path, reason: "incomplete")
                }
                sawEnd = true
            } else {
                try state.readRecord(f, path: path)
            }
        }
        guard sound else { throw Damaged(path: path, reason: "damaged (checksum mismatch: torn or corrupted)") }
        guard sawHeader else { throw Damaged(path: path, reason: "not a state file this version understands") }
        guard sawEnd else { throw Damaged(path: path, reason: "incomplete") }
        return state
    }

    /// Folds one line of the state file (after the header, before `end`) into `self`.
    private mutating func readRecord(_ f: SealedFile.Fields, path: String) throws {
        if f.equals(0, "base") && f.count == 5 {
            let v = DocVersion(refId: f.text(1), changesetId: f.text(2), hash: f.raw(3), path: f.text(4))
            base[v.refId] = v
        } else if f.equals(0, "journal") && f.count == 3 {
            journalSeq = f.int64(1).map { Int($0) } ?? 0
            journalOffset = f.int64(2).map { Int($0) } ?? 0
        } else if f.equals(0, "cursor") && f.count == 2 {
            let position = f.text(1)
            cursor = position.isEmpty ? nil : position
        } else if f.equals(0, "lastsync") && f.count == 2 {
            lastSync = f.int64(1)
        } else if f.equals(0, "ahead") && f.count == 1 {
            baseAheadOfCursor = true
        } else if f.equals(0, "held") && f.count == 2 {
            guard let entry = try? JournalEntry.decode(f.text(1)), let refId = entry.refId else {
                throw Damaged(path: path, reason: "damaged (bad held entry)")
            }
            held[refId] = entry
        } else if f.equals(0, "pending") && f.count == 2 {
            guard let entry = try? JournalEntry.decode(f.text(1)) else {
                throw Damaged(path: path, reason: "damaged (bad pending entry)")
            }
            pending.append(entry)
        } else {
            throw Damaged(path: path, reason: "damaged (unknown record)")
        }
    }

    public func save(to path: String) throws {
        try SealedFile.write(to: path, durable: true) { out in
            writePosition(to: &out)
            // In no particular order: readers key them by refId, so sorting on every
            // checkpoint would be work nobody uses.
            for v in base.values {
                out.raw("base")
                out.tabText(v.refId)
                out.tabText(v.changesetId)
                out.tabRaw(v.hash)
                out.tabText(v.path)
                out.newline()
            }
            for p in pending { try out.line("pending", text: p.encodedLine()) }
            for h in held.values.sorted(by: { UTF8Order.precedes($0.refId ?? "", $1.refId ?? "") }) {
                try out.line("held", text: h.encodedLine())
            }
            out.raw("end")
            out.tabNumbers(base.count, pending.count)
            out.newline()
        }
    }

    /// The header and the lines that say where the state stands: journal, cursor, last
    /// sync, and whether the base is ahead of the cursor.
    private func writePosition(to out: inout SealedFile.Builder) {
        out.raw(Self.header)
        out.newline()
        out.raw("journal")
        out.tabNumbers(journalSeq, journalOffset)
        out.newline()
        out.line("cursor", text: cursor ?? "")
        if let lastSync {
            out.raw("lastsync")
            out.tabNumber(lastSync)
            out.newline()
        }
        if baseAheadOfCursor {
            out.raw("ahead")
            out.newline()
        }
    }
}
