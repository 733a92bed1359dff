extension Workspace {
    /// Readable names of the replicas this tree knows, by id: its own, and with
    /// `fromRemote` the remote's: on a folder remote every replica record there (read
    /// without the lock, skipped when the folder cannot be read), on a git remote the
    /// authors of the history last fetched (no network).
    public func replicaNames(fromRemote: Bool = true) -> [String: String] {
        var names: [String: String] = [:]
        if fromRemote, config["remote.url"] != nil, let remote = try? makeRemote() {
            names = remote.replicaNamesAtHand()
        }
        names[config.replicaId] = config["core.replicaName"] ?? config.replicaId
        return names
    }
}
