extension RemoteChanges {
    /// A snapshot (see `isSnapshot`) names every document the remote still has, live or
    /// tombstoned. A document in this tree's base that it does not name was deleted there
    /// and its tombstone purged by `docsync gc`: that deletion is added, as the version the
    /// base holds, so it goes through the ordinary three-way decision (unchanged here:
    /// deleted here too; edited here: the edit wins and is pushed back, reported). Why
    /// not just skip them: the document would stay here and never be deleted, or be
    /// pushed back as if new.
    func addingPurgedDeletions(base: [String: DocVersion]) -> RemoteChanges {
        guard isSnapshot else { return self }
        let named = Set(entries.map(\.refId)).union(withheld)
        var result = self
        let time = FileSystem.currentTimeNanos / 1_000_000
        for version in base.values.sorted(by: { $0.refId < $1.refId }) where !named.contains(version.refId) {
            // The version that was deleted, where the remote still says which: this tree's
            // base may be an older one (never name the base as what was deleted).
            let purged = purgedDeletions[version.refId]
            let deletedHash = purged.map { $0.hash } ?? version.hash
            result.entries.append(
                RemoteEntry(
                    refId: version.refId, changesetId: purged?.changesetId ?? version.changesetId, hash: deletedHash,
                    path: version.path, deleted: true,
                    replica: purgedDeleters[version.refId] ?? Self.purgedReplica, time: purged?.time ?? time))
        }
        return result
    }

    /// The `replica` of a deletion whose tombstone was purged when the remote no longer
    /// says who deleted it.
    static let purgedReplica = "gc"
}
