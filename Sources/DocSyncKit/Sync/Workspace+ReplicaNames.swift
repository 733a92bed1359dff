extension Workspace {
  /// Readable names of the replicas this tree knows, by id: its own, and with
  /// `fromRemote` on a folder remote every replica record there (read without the lock,
  /// skipped when the folder cannot be read). Git remotes carry the name in each commit's
  /// author already.
  public func replicaNames(fromRemote: Bool = true) -> [String: String] {
    var names: [String: String] = [:]
    if fromRemote, config["remote.url"] != nil, let remote = try? makeRemote() as? DirectoryRemote {
      for record in remote.replicaRecords() where !record.name.isEmpty {
        names[record.replicaId] = record.name
      }
    }
    names[config.replicaId] = config["core.replicaName"] ?? config.replicaId
    return names
  }
}
