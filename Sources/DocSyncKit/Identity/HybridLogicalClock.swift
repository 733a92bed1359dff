/// Issues changesetIds in hybrid-logical-clock order. The last value issued or seen is
/// persisted in `.docsync/clock`, so ids keep increasing across runs even if the wall
/// clock steps back, and a replica that saw a later id from elsewhere issues later ones.
public final class HybridLogicalClock {
    public let replica: String
    private var lastWall: UInt64
    private var lastCounter: UInt16
    private let path: String?
    private let now: () -> UInt64
    /// Whether the persisted clock was read (false: missing or damaged).
    public private(set) var loaded = false

    public init(replica: String, persistedAt path: String?, now: @escaping () -> UInt64 = { UInt64(FileSystem.currentTimeNanos / 1_000_000) }) {
        self.replica = replica
        self.path = path
        self.now = now
        lastWall = 0
        lastCounter = 0
        if let path, let bytes = try? FileSystem.readFile(path),
           let id = ChangesetID(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) {
            lastWall = id.wallMillis
            lastCounter = id.counter
            loaded = true
        }
    }

    /// A new id later than every id issued or observed so far.
    public func next() -> ChangesetID {
        let wall = now()
        if wall > lastWall {
            lastWall = wall
            lastCounter = 0
        } else if lastCounter == UInt16.max {
            lastWall += 1
            lastCounter = 0
        } else {
            lastCounter += 1
        }
        return ChangesetID(wallMillis: lastWall, counter: lastCounter, replica: replica)
    }

    /// Moves the clock past an id seen from another replica.
    public func observe(_ text: String) {
        guard let id = ChangesetID(text) else { return }
        if (id.wallMillis, id.counter) > (lastWall, lastCounter) {
            lastWall = id.wallMillis
            lastCounter = id.counter
        }
    }

    public func persist() throws {
        guard let path else { return }
        let id = ChangesetID(wallMillis: lastWall, counter: lastCounter, replica: replica)
        try FileSystem.writeAtomically(path, Array((id.description + "\n").utf8))
    }
}

import Foundation
