import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Each replica's own record (`replicas/<id>/info.json`).
extension DriveFolderRemote {
    // MARK: Replica records

    struct Info: Codable {
        var replicaId: String
        var name: String
        var seen: String
        var time: Int64
        var version: String? = nil
        /// Replicas this one was told to forget (`docsync replicas forget`), with when:
        /// each replica writes only its own record, so forgetting is said here.
        var forgets: [String: Int64]? = nil
        /// A sparse replica's selection (absent: it keeps everything).
        var selection: [String]? = nil
    }

    /// A replica's record: the newest of `info.json` and any copies a sync service made
    /// of it (`info (conflicted copy).json`: a mesh of services can make one even though
    /// only the replica writes the file), with the `forgets` of all of them.
    func readInfo(_ replica: String) -> Info? {
        var newest: Info?
        var forgets: [String: Int64] = [:]
        for path in infoFiles(replica) {
            guard let bytes = try? layout.files.readFile(path),
                let info = try? JSONDecoder().decode(Info.self, from: Data(bytes))
            else { continue }
            for (id, time) in info.forgets ?? [:] { forgets[id] = max(forgets[id] ?? 0, time) }
            if newest.map({ info.time > $0.time }) ?? true { newest = info }
        }
        if !forgets.isEmpty { newest?.forgets = forgets }
        return newest
    }

    /// `info.json` and the service copies of it in a replica's folder.
    func infoFiles(_ replica: String) -> [String] {
        let folder = layout.replicaFolder(replica)
        let names = (try? layout.files.listDirectory(folder)) ?? []
        return names.filter { $0 == "info.json" || SyncServiceConflictName.original(of: $0) == "info.json" }.sorted()
            .map { folder + "/" + $0 }
    }

    func writeInfo(_ replica: ReplicaInfo, seen cursor: String, forgetting: String? = nil) throws {
        let now = FileSystem.currentTimeNanos / 1_000_000
        let old = readInfo(replica.replicaId)
        let copies = infoFiles(replica.replicaId).filter { !$0.hasSuffix("/info.json") }
        // A replica someone forgot since its record was written is known again as soon as
        // it syncs (even with nothing new), as in format 1, where forgetting deletes the record.
        let forgotten =
            old.map { old in
                infos(includingForgotten: true).contains { ($0.forgets?[replica.replicaId] ?? 0) >= old.time }
            } ?? false
        if forgetting == nil, copies.isEmpty, !forgotten, let old, old.seen == cursor, old.name == replica.name,
            old.version == replica.version, old.selection == replica.selection,
            now - old.time < DirectoryRemote.replicaRecordRefreshMillis
        {
            return
        }
        // The copies a service made are read (their `forgets` kept) and then tidied: the
        // folder is this replica's own.
        defer { for copy in copies { try? layout.files.removeFile(copy) } }
        var info = Info(
            replicaId: replica.replicaId, name: replica.name, seen: cursor, time: now, version: replica.version,
            forgets: old?.forgets, selection: replica.selection)
        if forgetting != replica.replicaId { info.forgets?[replica.replicaId] = nil }
        if let forgetting {
            info.forgets = (info.forgets ?? [:]).merging([forgetting: now]) { $1 }
            // Forgetting itself: the record must read as older than the forgetting.
            if forgetting == replica.replicaId { info.time = now - 1 }
        }
        try layout.files.createDirectories(layout.replicaFolder(replica.replicaId))
        try layout.files.writeAtomically(
            layout.info(replica.replicaId), Array(try LineEncoding.json(info).utf8) + [10])
    }

    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        _ = try format()
        guard DriveLayout.isPlainName(replica.replicaId) else { return }
        try writeInfo(replica, seen: cursor)
    }

    /// Every replica record here, without those a replica was told to forget after the
    /// record was written. Records of format 1 (`replicas/<id>.json`) count too: a
    /// replica that has not synced since the upgrade is still known.
    func infos(includingForgotten: Bool = false) -> [Info] {
        let names = (try? layout.files.listDirectory(layout.replicas)) ?? []
        var records: [Info] = []
        for name in names.sorted() {
            if DriveLayout.isPlainName(name), let info = readInfo(name) {
                records.append(info)
            } else if name.hasSuffix(".json"), let bytes = try? layout.files.readFile(layout.replicas + "/" + name),
                let old = try? JSONDecoder().decode(DirectoryRemote.ReplicaRecord.self, from: Data(bytes)),
                !layout.files.isDirectory(layout.replicaFolder(old.replicaId))
            {
                records.append(
                    Info(replicaId: old.replicaId, name: old.name, seen: old.seen, time: old.time, version: old.version)
                )
            }
        }
        if includingForgotten { return records }
        var forgotten: [String: Int64] = [:]
        for info in records { for (id, time) in info.forgets ?? [:] { forgotten[id] = max(forgotten[id] ?? 0, time) } }
        return records.filter { info in forgotten[info.replicaId].map { info.time > $0 } ?? true }
    }

    public func replicaNamesAtHand() -> [String: String] {
        var names: [String: String] = [:]
        for record in infos() where !record.name.isEmpty { names[record.replicaId] = record.name }
        return names
    }

    public func knownReplicas() throws -> [KnownReplica] {
        _ = try format()
        return infos().map {
            KnownReplica(replicaId: $0.replicaId, name: $0.name, lastSync: $0.time, seen: $0.seen, version: $0.version)
        }
    }

    public func forgetReplica(_ replicaId: String, replica: ReplicaInfo) throws {
        _ = try format()
        let current = readInfo(replica.replicaId)?.seen ?? ""
        try writeInfo(replica, seen: current, forgetting: replicaId)
    }
}
