import Foundation

extension DirectoryRemote {
    /// The replica records under `.docsync/replicas/`: one per replica that synced.
    public func knownReplicas() throws -> [KnownReplica] {
        _ = try identity()
        return replicaRecords().map {
            KnownReplica(
                replicaId: $0.replicaId, name: $0.name, lastSync: $0.time, seen: $0.seen,
                version: $0.version)
        }
    }

    /// Removes the replica's record under the remote lock, so gc stops waiting for it.
    /// The replica's next sync writes a new record: it is simply known again (and a
    /// tombstone purged meanwhile reaches it as a feed snapshot, like an age purge).
    public func forgetReplica(_ replicaId: String, replica: ReplicaInfo) throws {
        _ = try identity()
        let lock = RemoteLock(folder: meta, replica: replica.replicaId, files: files)
        if let holder = try lock.acquire(waitSeconds: lockWaitSeconds, staleSeconds: lockStaleSeconds) {
            throw RemoteError.locked(url: displayURL, holder: holder)
        }
        defer { lock.release() }
        // Every file that names it, whatever it is called (the record's own path first).
        let folder = meta + "/replicas"
        let names = (try? files.listDirectory(folder)) ?? []
        for name in names where name.hasSuffix(".json") {
            let path = folder + "/" + name
            guard
                path == replicaRecordPath(replicaId)
                    || (try? files.readFile(path)).flatMap({
                        try? JSONDecoder().decode(ReplicaRecord.self, from: Data($0))
                    })?.replicaId == replicaId
            else { continue }
            try files.removeFile(path)
        }
    }
}
