extension PullPlanner {
    /// Remote versions held aside while their local file was not a valid document
    /// (`held`): those whose file is valid again meet the fix three-way now (incoming,
    /// after the remote's own entries); a hold the remote names again is settled by that
    /// entry. Returns the held versions to reconcile and the holds this pull settles.
    func heldVersions(beside entries: [RemoteEntry]) -> (incoming: [Incoming], settled: [String]) {
        var incoming: [Incoming] = []
        var settled: [String] = []
        let named = Set(entries.map(\.refId))
        for (refId, hold) in held.sorted(by: { $0.key < $1.key }) {
            guard case let .held(_, waiting, replica) = hold.event else { continue }
            let fileIsValid = tracked[refId].map { !unreadable.contains($0.path) } ?? true
            if named.contains(refId) {
                if fileIsValid { settled.append(refId) }
                continue
            }
            // Send-only: a held version waits for `override` or the mode `both`.
            guard fileIsValid, !holdsRemoteChanges else { continue }
            incoming.append(
                Incoming(
                    entry: RemoteEntry(
                        refId: refId, changesetId: waiting.changesetId, hash: waiting.version?.hash ?? hold.deletedHash,
                        path: waiting.path, deleted: waiting.version == nil, replica: replica ?? "", time: hold.time),
                    held: true))
            settled.append(refId)
        }
        return (incoming, settled)
    }

    /// The local file is not a valid document right now: never overwrite it. The remote
    /// version (or deletion) waits aside, the base stays, and it meets the fix three-way
    /// on the first pull after the file is valid again. On a send-only replica every
    /// remote change waits so (a document new on the remote too, with no `local`), and a
    /// pull meets it once the mode is `both` again.
    func holdAside(
        _ entry: RemoteEntry, local: DocVersion?, bytes: () throws -> [UInt8], in plan: inout PullPlan
    ) throws {
        let remoteVersion = entry.version
        if let remoteVersion { try keepFetched(remoteVersion.hash, try bytes(), in: &plan) }
        var hold = JournalEntry(
            .held(
                refId: entry.refId,
                remoteVersion.map { .version($0) } ?? .deleted(changesetId: entry.changesetId, path: entry.path),
                replica: entry.replica))
        // A deletion of a version this tree does not have: keep that version now, for
        // the record the fix will meet (the remote may have dropped it by then).
        if remoteVersion == nil, let deleted = readDeleted(entry) {
            let hash = ContentHash.of(deleted)
            try keepFetched(hash, deleted, in: &plan)
            hold.deletedHash = hash
        }
        plan.batch.append(hold)
        if let local, let reason = unknownReasons[local.path] {
            plan.notices.append(
                DocumentNotice.waitsForLook(path: local.path, reason: reason, deletion: remoteVersion == nil)
                    .description)
        } else if let local, unreadable.contains(local.path) {
            plan.notices.append(
                DocumentNotice.waitsForFix(path: local.path, deletion: remoteVersion == nil).description)
        }
    }
}
