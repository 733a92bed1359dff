import Foundation

/// What `docsync replicas` shows: every replica the remote knows, and how many of the
/// remote's tombstones each holds back from `docsync gc` (kept because it has not seen them).
public struct ReplicasReport: Sendable {
    public struct Entry: Sendable {
        public var replica: KnownReplica
        /// Tombstones gc would keep now because this replica has not seen them.
        public var holdsBack: Int
        /// The replica this tree is.
        public var isSelf: Bool
    }

    public var remote: String
    public var replicas: [Entry]
}

/// `docsync replicas`: the replicas a remote knows, forgetting one, their names.
public struct ReplicaService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }
    public enum ReplicaFailure: Error, LocalizedError {
        case unknown(String, known: [String])
        case ambiguous(String, ids: [String])
        case isSelf(String)

        public var errorDescription: String? {
            switch self {
            case .unknown(let name, let known):
                return "no replica named \(name) is known to the remote"
                    + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))")
                    + "; see `docsync replicas`"
            case .ambiguous(let name, let ids):
                return
                    "several replicas are named \(name) (\(ids.joined(separator: ", "))); give the id instead"
            case .isSelf(let name):
                return
                    "\(name) is this replica; forgetting it only lasts until its next sync. Use --force to do it anyway"
            }
        }
    }

    /// `docsync replicas`. Which tombstones a replica holds back comes from gc's own plan
    /// (a dry run), so the list and gc cannot disagree.
    public func list() throws -> ReplicasReport {
        let remote = try makeRemote()
        let known = try remote.knownReplicas()
        let rule = TombstoneRule(maxAgeDays: config.number("gc.tombstoneMaxAgeDays"))
        let plan = try remote.purgeTombstones(rule, dryRun: true, replica: replicaInfo)
        let entries = known.map {
            ReplicasReport.Entry(
                replica: $0, holdsBack: plan.heldBack[$0.replicaId] ?? 0,
                isSelf: $0.replicaId == config.replicaId)
        }
        return ReplicasReport(
            remote: remote.displayURL,
            replicas: entries.sorted {
                ($0.replica.name, $0.replica.replicaId) < ($1.replica.name, $1.replica.replicaId)
            })
    }

    /// `docsync replicas forget NAME`: NAME is a replica id, or a name only one replica has.
    /// Refuses this tree's own replica unless `force`. Returns the replica forgotten (with
    /// `dryRun`, the one that would be; nothing is written).
    public func forget(_ nameOrId: String, force: Bool, dryRun: Bool = false) throws
        -> KnownReplica
    {
        let remote = try makeRemote()
        let known = try remote.knownReplicas()
        let target: KnownReplica
        if let byId = known.first(where: { $0.replicaId == nameOrId }) {
            target = byId
        } else {
            let named = known.filter { $0.name == nameOrId }
            guard let first = named.first else {
                throw ReplicaFailure.unknown(nameOrId, known: known.map(\.name).sorted())
            }
            guard named.count == 1 else {
                throw ReplicaFailure.ambiguous(nameOrId, ids: named.map(\.replicaId).sorted())
            }
            target = first
        }
        if target.replicaId == config.replicaId && !force { throw ReplicaFailure.isSelf(nameOrId) }
        if !dryRun { try remote.forgetReplica(target.replicaId, replica: replicaInfo) }
        return target
    }
}

extension ReplicaService {
    /// Readable names of the replicas this tree knows, by id: its own, and with
    /// `fromRemote` the remote's: on a folder remote every replica record there (read
    /// without the lock, skipped when the folder cannot be read), on a git remote the
    /// authors of the history last fetched (no network).
    public func names(fromRemote: Bool = true) -> [String: String] {
        var names: [String: String] = [:]
        if fromRemote, config["remote.url"] != nil, let remote = try? makeRemote() {
            names = remote.replicaNamesAtHand()
        }
        names[config.replicaId] = config["core.replicaName"] ?? config.replicaId
        return names
    }
}
