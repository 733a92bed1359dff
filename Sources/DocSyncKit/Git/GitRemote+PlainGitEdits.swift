import DocSyncJSON

/// Versions committed with plain git (a `sed` in a `git clone`, a merge made there) carry
/// whatever changesetId the file had: often the one of the version they edited. Such a
/// version is a new one, and every replica must give it the same new changesetId, whatever
/// commit it last synced with. So the id is derived from the commit that introduced the
/// blob and from the version that commit replaced, both read from the branch's history,
/// never from the pulling replica's cursor (that made two replicas derive two ids, or one
/// of them keep the old id for new content: issue 21, defect 5).
extension GitRemote {
    /// Where a document blob came from, when a commit not made by docsync put it there.
    struct PlainGitIntroduction: Equatable {
        /// The introducing commit's time (seconds since the epoch).
        var time: Int64
        /// The changesetId of the version the commit replaced at that path (nil: none, or
        /// it had none).
        var replacedChangesetId: String?
        /// The refId of the document the commit replaced at that path: a file plain git
        /// left without one there is a new version of that document (a regenerated file).
        var replacedRefId: String? = nil
    }

    /// Introductions of the document blobs `changes` brings (keys `path + "\0" + blob`) by
    /// commits that docsync did not make, walking the first-parent history from `head` back
    /// to `from` (exclusive). `complete` is false when the walk stopped at `limit` first.
    /// Only commits made by something else than docsync are diffed: usually none, and then
    /// the set of blobs (100,000 keys on a large clone) is never built.
    func plainGitIntroductions(
        of changes: [GitRepository.FileChange], from: GitOID?, head: GitOID,
        limit: Int = 10_000
    ) throws -> (found: [String: PlainGitIntroduction], complete: Bool) {
        var found: [String: PlainGitIntroduction] = [:]
        guard !changes.isEmpty else { return (found, true) }
        lazy var targets = Set(
            changes.compactMap { change in
                change.newPath.flatMap { path in
                    Self.isDocumentPath(path) ? change.newBlob.map { path + "\u{0}" + $0 } : nil
                }
            })
        var current: GitOID? = head
        var steps = 0
        while let id = current, id != from {
            guard steps < limit else { return (found, false) }
            steps += 1
            let info = try repo.commit(id)
            defer { current = info.parents.first }
            if Self.isDocsyncCommit(info) { continue }
            let parentTree = try info.parents.first.map { try repo.commit($0).tree }
            for change in try repo.diff(from: parentTree, to: info.tree) {
                guard let path = change.newPath, let blob = change.newBlob else { continue }
                let key = path + "\u{0}" + blob
                // Walking back, the first commit met that put the blob there is the one the
                // branch's file comes from.
                guard targets.contains(key), found[key] == nil else { continue }
                let replaced = try change.oldBlob.flatMap { try smallBlob($0) }.flatMap {
                    try? JSONScanner.scanDocument($0)
                }
                found[key] = PlainGitIntroduction(
                    time: info.time, replacedChangesetId: replaced?.member(named: "changesetId")?.stringValue,
                    replacedRefId: change.oldPath == path ? replaced?.member(named: "refId")?.stringValue : nil)
            }
        }
        return (found, true)
    }

    /// A commit docsync made (a push, gc, retiring a replica): its versions carry fresh ids.
    static func isDocsyncCommit(_ info: GitRepository.CommitInfo) -> Bool {
        info.author.hasPrefix("docsync (") && info.message.hasPrefix("docsync: ")
    }

    /// The changesetId a plain-git version gets when the one it carries cannot name it
    /// (missing, not a changesetId, or the one of the version it replaced): later than the
    /// replaced version, at the introducing commit's time, with a counter from the blob so
    /// two edits of one version in one second differ. Pure, so every replica agrees.
    static func derivedChangesetId(blob: GitOID, commitTime: Int64, replaced: String?) -> String {
        let floor = replaced.flatMap(ChangesetID.init).map { $0.wallMillis + 1 } ?? 0
        let counter = UInt16(blob.prefix(4), radix: 16) ?? 0
        return ChangesetID(
            wallMillis: max(UInt64(max(commitTime, 0)) * 1000, floor), counter: counter, replica: gitReplica
        ).description
    }
}
