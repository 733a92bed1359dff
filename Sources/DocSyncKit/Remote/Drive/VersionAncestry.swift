/// Which versions of a document each version descends from, read from the commit files
/// of every replica, on every chain: what a fork's merge base is found with when the two
/// chains hold no version in common (a document re-sent, after an earlier lost fork, as a
/// new version made from one the winning chain never held).
///
/// A version pushed in commit C by replica R descends from
/// - R's previous version of the document (a replica's own pushes follow each other in
///   its tree), and
/// - the document's version on the chain C was made on (R had read it: C's parent is
///   where R's tree stood).
struct VersionAncestry {
    private struct Occurrence {
        var entry: RemoteEntry
        var commit: DriveCommit.Header
    }

    private let headers: [String: DriveCommit.Header]
    private let entriesByCommit: [String: [String: RemoteEntry]]
    /// Per replica, its commits by number.
    private let byReplica: [String: [DriveCommit.Header]]

    init(commits: [DriveCommit]) {
        var headers: [String: DriveCommit.Header] = [:]
        var entries: [String: [String: RemoteEntry]] = [:]
        var byReplica: [String: [DriveCommit.Header]] = [:]
        for commit in commits where commit.header.checkpoint != true {
            headers[commit.id] = commit.header
            var latest: [String: RemoteEntry] = [:]
            for entry in commit.entries where entry.conflict == nil && entry.purgedDeletion != true { latest[entry.refId] = entry }
            entries[commit.id] = latest
            byReplica[commit.header.replica, default: []].append(commit.header)
        }
        for key in byReplica.keys { byReplica[key]!.sort { ($0.seq, $0.commit) < ($1.seq, $1.commit) } }
        self.headers = headers
        entriesByCommit = entries
        self.byReplica = byReplica
    }

    private func occurrences(of refId: String, changesetId: String) -> [Occurrence] {
        entriesByCommit.compactMap { id, entries in
            guard let entry = entries[refId], entry.changesetId == changesetId, let header = headers[id] else { return nil }
            return Occurrence(entry: entry, commit: header)
        }
    }

    private func parents(of occurrence: Occurrence) -> [Occurrence] {
        let refId = occurrence.entry.refId
        var out: [Occurrence] = []
        // The same replica's previous push of the document.
        if let own = byReplica[occurrence.commit.replica] {
            for header in own.reversed() where header.seq < occurrence.commit.seq {
                if let entry = entriesByCommit[header.commit]?[refId] {
                    out.append(Occurrence(entry: entry, commit: header))
                    break
                }
            }
        }
        // The version on the chain the commit was made on.
        var id = occurrence.commit.parent
        while let current = id, let header = headers[current] {
            if let entry = entriesByCommit[current]?[refId] {
                out.append(Occurrence(entry: entry, commit: header))
                break
            }
            id = header.parent
        }
        return out
    }

    /// Every version `version` of document `refId` descends from, itself included, by
    /// changesetId (a deletion is a version too).
    func ancestors(of refId: String, changesetId: String) -> [String: RemoteEntry] {
        var found: [String: RemoteEntry] = [:]
        var visited = Set<String>()
        var queue = occurrences(of: refId, changesetId: changesetId)
        while let next = queue.popLast() {
            guard visited.insert(next.commit.commit).inserted else { continue }
            found[next.entry.changesetId] = next.entry
            queue += parents(of: next)
        }
        return found
    }

    /// The latest version both descend from (the greatest changesetId: a version's id
    /// always sorts after those it was made from), or nil.
    func commonAncestor(of refId: String, _ a: String, _ b: String) -> RemoteEntry? {
        let left = ancestors(of: refId, changesetId: a), right = ancestors(of: refId, changesetId: b)
        return left.keys.filter { right[$0] != nil }.max().flatMap { left[$0] }
    }
}
