import DocSyncKit
import Foundation

/// `--json`: a sync's line.
struct WatchSyncLine: Encodable {
    var event = "sync"
    var time: String
    var trigger: String
    var exitCode: Int32
    var meaning: String
    var recorded: Int
    var pulled: Int
    var pushed: Int
    var conflicts: Int
    var problems: [String]
    var pendingAfter: Int
    var message: String?
    var retryInSeconds: Int?
}

/// `--json`: the first line (`watching`) and the last (`stopped`).
struct WatchEventLine: Encodable {
    var event: String
    var time: String
    var root: String
    var folders: Int?
    var debounceMs: Int?
    var pullSeconds: Double?
    var signal: String?
}
