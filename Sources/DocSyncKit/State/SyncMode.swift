/// Which way a replica syncs (`sync.mode`). Per replica, never synced.
public enum SyncMode: String, Sendable, CaseIterable, Codable {
    /// Send this tree's changes and apply the remote's.
    case both
    /// Apply the remote's changes, never send this tree's: a backup or reporting machine.
    /// Local changes are still recorded (journaled, merged with what arrives), so nothing
    /// a user saves is lost; they stay pending, listed as not sent.
    case receiveOnly = "receive-only"
}

extension Config {
    public var syncMode: SyncMode { self["sync.mode"].flatMap(SyncMode.init(rawValue:)) ?? .both }
}

extension WorkspaceService {
    /// The mode a run's report names: nil for `both` (a report says only what is unusual).
    var reportedMode: SyncMode? { config.syncMode == .both ? nil : config.syncMode }
}
