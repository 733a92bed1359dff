import Foundation

/// Issues changesetIds. Two kinds of id:
///
/// - `next()`: now, in hybrid-logical-clock order: later than every id issued or seen so
///   far (merges, restores, resolves: things docsync itself makes now).
/// - `next(savedAt:after:)`: for an edit the user saved: the physical part is when the
///   file was saved (its mtime, never later than now), and the id sorts after the
///   version it was edited from. So whichever replica syncs first, the later save wins
///   a collision ("later" means saved later, not synced later).
///
/// An edit saved before the last id this replica issued or saw gets an id "in the past".
/// Ids must stay unique per replica, so such ids take their counter from a separate,
/// persisted sequence in the upper half of the counter space (0x8000…0xffff), which
/// `next()` never reaches in practice (it would take 32,768 ids within one millisecond);
/// within one run an id is never issued twice. The state lives in `.docsync/clock`:
/// line 1 the highest id issued or seen, line 2 `past <n>` the sequence. Every caller
/// persists it before anything (the journal, a file) names an id it issued: a clock
/// behind another replica's dates what it makes by the newest id it saw, one counter on,
/// and a run that forgot its last id issued it again for other content (an `override`
/// then a `resolve` on a replica a day behind: the resolve's version took the override's
/// id, and one changesetId named two contents).
public final class HybridLogicalClock {
    public let replica: String
    private var lastWall: UInt64
    private var lastCounter: UInt16
    private var pastSequence: UInt64 = 0
    private var issuedInThePast = Set<UInt64>()
    private let path: String?
    private let now: () -> UInt64
    /// Whether the persisted clock was read (false: missing or damaged).
    public private(set) var loaded = false

    static let pastCounterBase: UInt16 = 0x8000

    public init(
        replica: String, persistedAt path: String?,
        now: @escaping () -> UInt64 = { UInt64(FileSystem.currentTimeNanos / 1_000_000) }
    ) {
        self.replica = replica
        self.path = path
        self.now = now
        lastWall = 0
        lastCounter = 0
        if let path, let bytes = try? FileSystem.readFile(path) {
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if let first = lines.first, let id = ChangesetID(first) {
                lastWall = id.wallMillis
                lastCounter = id.counter
                loaded = true
                if lines.count > 1, lines[1].hasPrefix("past "), let n = UInt64(lines[1].dropFirst(5)) {
                    pastSequence = n
                }
            }
        }
    }

    /// A new id later than every id issued or observed so far.
    public func next() -> ChangesetID {
        let wall = now()
        if wall > lastWall {
            lastWall = wall
            lastCounter = 0
        } else if lastCounter >= Self.pastCounterBase - 1 {
            lastWall += 1
            lastCounter = 0
        } else {
            lastCounter += 1
        }
        return ChangesetID(wallMillis: lastWall, counter: lastCounter, replica: replica)
    }

    /// An id for an edit saved at `savedAtMillis` (the file's mtime), sorting after
    /// `editedFrom` (the version the edit started from, if any).
    public func next(savedAt savedAtMillis: UInt64, after editedFrom: String?) -> ChangesetID {
        var wall = min(savedAtMillis, now())
        let floor = editedFrom.flatMap(ChangesetID.init)
        if let floor, wall <= floor.wallMillis { wall = floor.wallMillis + 1 }
        if wall > lastWall { return next(atOrAfter: wall) }
        // In the past of this clock: a counter from the past sequence, never repeated.
        while true {
            let counter = Self.pastCounterBase + UInt16(pastSequence % UInt64(Self.pastCounterBase))
            pastSequence += 1
            let key = wall << 16 | UInt64(counter)
            if issuedInThePast.insert(key).inserted {
                return ChangesetID(wallMillis: wall, counter: counter, replica: replica)
            }
            if pastSequence % UInt64(Self.pastCounterBase) == 0 { wall += 1 }
        }
    }

    private func next(atOrAfter wall: UInt64) -> ChangesetID {
        lastWall = wall
        lastCounter = 0
        return ChangesetID(wallMillis: lastWall, counter: lastCounter, replica: replica)
    }

    /// Moves the clock past an id seen from another replica, or one of its own met again.
    public func observe(_ text: String) {
        guard let id = ChangesetID(text) else { return }
        if (id.wallMillis, id.counter) > (lastWall, lastCounter) {
            lastWall = id.wallMillis
            lastCounter = id.counter
        }
        if id.replica == replica, id.counter >= Self.pastCounterBase { passOwnPastId(id) }
    }

    /// One of this replica's ids from the past sequence, met in a file: a run killed after
    /// stamping it, before persisting the clock, left the sequence behind it, and the next
    /// save dated the same millisecond took the same id for other content (model check,
    /// folder seed 36113: a killed `resolve` stamped one document, the recovery sync kept
    /// that id, the next sync gave it to another). The sequence moves past it.
    private func passOwnPastId(_ id: ChangesetID) {
        issuedInThePast.insert(id.wallMillis << 16 | UInt64(id.counter))
        let base = UInt64(Self.pastCounterBase)
        let position = UInt64(id.counter) - base
        let cycle = pastSequence - pastSequence % base
        if cycle + position >= pastSequence { pastSequence = cycle + position + 1 }
    }

    public func persist() throws {
        guard let path else { return }
        let id = ChangesetID(wallMillis: lastWall, counter: lastCounter, replica: replica)
        try FileSystem.writeAtomically(path, Array((id.description + "\npast \(pastSequence)\n").utf8))
    }
}
