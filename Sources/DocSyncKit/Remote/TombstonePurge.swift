/// What `docsync gc` did (or would do) to a remote's tombstones.
public struct TombstonePurge: Codable, Sendable {
    public struct Purged: Codable, Sendable, Equatable {
        public var refId: String
        /// Where the document was, and the version that was deleted.
        public var path: String?
        public var changesetId: String
        /// The replica that deleted it.
        public var deletedBy: String
        public var time: Int64
        /// `seen by every replica` or `older than N days`.
        public var reason: String
    }

    public var purged: [Purged] = []
    /// Tombstones kept: some known replica may not have seen them yet, and they are young.
    public var kept = 0
    /// The replicas the remote knows (ids), whose progress decides.
    public var replicas: [String] = []
    /// For each known replica that has not seen some kept tombstone: how many. These are
    /// the tombstones that replica holds back (`docsync replicas`, `replicas forget`).
    public var heldBack: [String: Int] = [:]
    /// Folder remotes: the feed's size before and after its compaction.
    public var feedBytesBefore: Int? = nil
    public var feedBytesAfter: Int? = nil
    /// Git remotes: the commit that deleted the tombstone files.
    public var commit: String? = nil
    /// Folder remotes: the position before and after the compaction. A tree whose cursor
    /// was exactly `cursorBefore` has seen everything, so it may move to `cursorAfter`
    /// instead of reading the new feed whole.
    public var cursorBefore: String? = nil
    public var cursorAfter: String? = nil

    public init() {}

    /// Judges each of `tombstones` by `rule`, given the known replicas that have not seen
    /// it (`unseenBy`), and counts it as purged or kept; returns the refIds to purge. Why
    /// `replicasKnown`: with no replica record at all, "seen by every replica" says nothing.
    mutating func judge(
        _ tombstones: some Sequence<RemoteEntry>, by rule: TombstoneRule, replicasKnown: Bool,
        unseenBy: (RemoteEntry) -> [String]
    ) -> Set<String> {
        var purge = Set<String>()
        for entry in tombstones {
            let unseen = unseenBy(entry)
            let reason = rule.reason(deletedAt: entry.time, seenByAll: replicasKnown && unseen.isEmpty)
            record(entry, purgedBecause: reason, unseenBy: unseen)
            if reason != nil { purge.insert(entry.refId) }
        }
        return purge
    }

    /// Counts the tombstone of `entry` as purged (`reason` set) or kept.
    /// `unseenBy` are the known replicas that have not seen it: a kept one is held back by them.
    mutating func record(_ entry: RemoteEntry, purgedBecause reason: String?, unseenBy: [String] = []) {
        guard let reason else {
            kept += 1
            for replicaId in unseenBy { heldBack[replicaId, default: 0] += 1 }
            return
        }
        purged.append(
            Purged(
                refId: entry.refId, path: entry.path, changesetId: entry.changesetId,
                deletedBy: entry.replica, time: entry.time, reason: reason))
    }
}

/// When a tombstone may go: once every replica the remote knows has seen it, or once it
/// is older than `gc.tombstoneMaxAgeDays`. A replica that comes back after that still
/// ends up right (see docs/SYNC.md, "Tombstones"): the age limit bounds growth, it does
/// not decide what is deleted.
public struct TombstoneRule: Sendable {
    public var maxAgeDays: Double
    var now: Int64 = FileSystem.currentTimeNanos / 1_000_000

    public init(maxAgeDays: Double) { self.maxAgeDays = maxAgeDays }

    /// Why the tombstone may be purged, or nil to keep it.
    func reason(deletedAt time: Int64, seenByAll: Bool) -> String? {
        if seenByAll { return "seen by every replica" }
        if Double(now - time) > maxAgeDays * 86_400_000 { return "older than \(String(format: "%g", maxAgeDays)) days" }
        return nil
    }
}
