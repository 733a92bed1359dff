import DocSyncKit
import Foundation

/// `--json`: a sync's line.
struct WatchSyncLine: Encodable {
    var event = "sync"
    var time, trigger: String
    var exitCode: Int32
    var meaning: String
    var recorded, pulled, pushed, conflicts: Int
    var problems: [String]
    var pendingAfter: Int
    var message: String?
    var retryInSeconds: Int?
}

/// `--json`: the first line (`watching`) and the last (`stopped`).
struct WatchEventLine: Encodable {
    var event, time, root: String
    var folders, debounceMs: Int?
    var pullSeconds: Double?
    var signal: String?
}
