/// How far a tree has read a drive-layout folder remote:
/// `drive:<remote id>:<tip commit>:<tip height>:<replica>=<seq>,…`.
///
/// The tip is the commit whose state the tree holds. The vector says, per replica, up to
/// which number every commit file had arrived and was complete when the tree last read:
/// the next read only opens files after those, so a pull reads what it has not seen, and
/// a file that arrives late (below a number another replica's file already passed) is
/// still read, because the vector stops at the first gap.
struct DriveCursor: Equatable, Sendable {
    static let prefix = "drive:"

    var remoteId: String
    /// Nil before the tree has read any commit.
    var tip: String?
    var height: Int
    var seen: [String: Int]

    var text: String {
        let vector = seen.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        return Self.prefix + remoteId + ":" + (tip ?? "-") + ":\(height):" + vector
    }

    init(remoteId: String, tip: String?, height: Int, seen: [String: Int]) {
        self.remoteId = remoteId
        self.tip = tip
        self.height = height
        self.seen = seen
    }

    init?(_ text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        let p = text.dropFirst(Self.prefix.count).split(separator: ":", omittingEmptySubsequences: false)
        guard p.count == 4, !p[0].isEmpty, let height = Int(p[2]), height >= 0 else { return nil }
        remoteId = String(p[0])
        tip = p[1] == "-" ? nil : String(p[1])
        if let tip, DriveCommit.parts(of: tip) == nil { return nil }
        self.height = height
        var seen: [String: Int] = [:]
        for item in p[3].split(separator: ",") {
            let kv = item.split(separator: "=")
            guard kv.count == 2, let seq = Int(kv[1]), seq >= 0, DriveLayout.isPlainName(String(kv[0])) else {
                return nil
            }
            seen[String(kv[0])] = seq
        }
        self.seen = seen
    }
}

/// How a remote cursor is shown to people (`docsync log`).
public enum RemoteCursorText {
    /// A drive-layout cursor as the push it is at (`push 3 of laptop (0c257acab335)`,
    /// with `label` naming the replica); other cursors as they are.
    /// Whether `display` names a replica for this cursor.
    public static func namesReplicas(_ cursor: String) -> Bool { DriveCursor(cursor)?.tip != nil }

    public static func display(_ cursor: String, label: (String) -> String) -> String {
        guard let drive = DriveCursor(cursor) else { return cursor }
        guard let tip = drive.tip, let parts = DriveCommit.parts(of: tip) else { return "an empty folder remote" }
        return "push \(parts.seq) of \(label(parts.replica))"
    }
}
