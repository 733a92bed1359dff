extension Workspace {
    /// Readable names of the replicas this tree knows, by id: its own, and with
    /// `fromRemote` the remote's: on a folder remote every replica record there (read
    /// without the lock, skipped when the folder cannot be read), on a git remote the
    /// authors of the history last fetched (no network).
    public func replicaNames(fromRemote: Bool = true) -> [String: String] {
        var names: [String: String] = [:]
        if fromRemote, config["remote.url"] != nil, let remote = try? makeRemote() {
            if let folder = remote as? DirectoryRemote {
                for record in folder.replicaRecords() where !record.name.isEmpty {
                    names[record.replicaId] = record.name
                }
            } else if let drive = remote as? DriveFolderRemote {
                for record in drive.infos() where !record.name.isEmpty { names[record.replicaId] = record.name }
            } else if let git = remote as? GitRemote {
                names = git.cachedReplicaNames()
            }
        }
        names[config.replicaId] = config["core.replicaName"] ?? config.replicaId
        return names
    }
}
