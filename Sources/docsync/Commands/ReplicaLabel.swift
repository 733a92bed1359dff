/// How a line names a replica: `beta (132cd05e9f9a)`, the name people gave it and the id
/// that `docsync replicas` shows beside it; the id alone when its name is not known.
enum ReplicaLabel {
    static func text(_ replicaId: String, names: [String: String]) -> String {
        guard let name = names[replicaId], name != replicaId else { return replicaId }
        return "\(name) (\(replicaId))"
    }
}
