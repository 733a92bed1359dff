/// One replica a remote knows, as `docsync replicas` shows it.
///
/// A folder remote knows every replica that synced (its record under
/// `.docsync/replicas/`); a git remote knows the replicas whose commits are in the
/// branch's recent history (the `Replica:` trailer), so one that only ever pulled is not
/// listed there. See docs/REMOTE-LAYOUT.md and docs/GIT-REMOTES.md.
public struct KnownReplica: Sendable, Equatable {
    public var replicaId: String
    public var name: String
    /// When it last synced (folder: its record was last written, refreshed at least
    /// hourly while it syncs; git: its last commit), in milliseconds since the epoch.
    public var lastSync: Int64?
    /// What it last saw: its cursor (folder) or the commit it last made (git).
    public var seen: String?
    /// The docsync version it ran then; nil for records written before versions were kept.
    public var version: String?

    public init(replicaId: String, name: String, lastSync: Int64?, seen: String?, version: String?) {
        self.replicaId = replicaId
        self.name = name
        self.lastSync = lastSync
        self.seen = seen
        self.version = version
    }
}
