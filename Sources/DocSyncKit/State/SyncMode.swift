/// Which way a replica syncs (`sync.mode`). Per replica, never synced.
public enum SyncMode: String, Sendable, CaseIterable, Codable {
    /// Send this tree's changes and apply the remote's.
    case both
    /// Apply the remote's changes, never send this tree's: a backup or reporting machine.
    /// Local changes are still recorded (journaled, merged with what arrives), so nothing
    /// a user saves is lost; they stay pending, listed as not sent.
    case receiveOnly = "receive-only"
    /// Send this tree's changes, never apply the remote's: a machine that produces records
    /// (an exporter run by cron). A remote change is held aside, unapplied, and listed; a
    /// local change to a document the remote changed too waits with it, until `docsync
    /// override` pushes the local version over the remote's (kept in the conflict store),
    /// or the mode goes back to `both` and the next pull merges them.
    case sendOnly = "send-only"

    /// Whether remote changes wait aside instead of being applied.
    var holdsRemoteChanges: Bool { self == .sendOnly }
}

extension Config {
    public var syncMode: SyncMode { self["sync.mode"].flatMap(SyncMode.init(rawValue:)) ?? .both }
}

extension WorkspaceService {
    /// The mode a run's report names: nil for `both` (a report says only what is unusual).
    var reportedMode: SyncMode? { config.syncMode == .both ? nil : config.syncMode }
}
