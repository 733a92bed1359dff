/// Which versions of a document each version descends from, read from the commit files
/// of every replica, on every chain: the merge base of a fork is the latest version both
/// sides descend from.
///
/// A version's parents are the ones its entry names (`FeedLine.parents`: the version
/// the pushing tree had synced, and any published version its content carried). An entry
/// written before docsync named them gets the parents the commits imply:
/// - the same replica's previous version of the document (a replica's own pushes follow
///   each other in its tree), and
/// - the document's version on the chain the commit was made on (the replica had read it).
struct VersionAncestry {
    private struct Occurrence {
        var entry: FeedLine
        var commit: DriveCommit.Header
    }

    private let headers: [String: DriveCommit.Header]
    private let entriesByCommit: [String: [String: FeedLine]]
    /// Per replica, its commits by number.
    private let byReplica: [String: [DriveCommit.Header]]
    /// Per document, where each of its versions was pushed.
    private let occurrences: [String: [String: [Occurrence]]]

    init(commits: [DriveCommit]) {
        var headers: [String: DriveCommit.Header] = [:]
        var entries: [String: [String: FeedLine]] = [:]
        var byReplica: [String: [DriveCommit.Header]] = [:]
        var occurrences: [String: [String: [Occurrence]]] = [:]
        // Lowest first, so a version's first occurrence is the push that made it (its path
        // then, not a later move's): in a dictionary's order it was either, from run to run
        // (random kills, folder seeds 3502571521 and 313220633).
        let ordered = commits.sorted { ($0.header.height, $0.header.commit) < ($1.header.height, $1.header.commit) }
        for commit in ordered {
            if commit.header.checkpoint == true {
                // A checkpoint restates versions made before it: there, they are roots.
                for var entry in commit.entries
                where entry.isDocument && !entry.deleted {
                    entry.parents = []
                    occurrences[entry.refId, default: [:]][entry.changesetId, default: []].append(
                        Occurrence(entry: entry, commit: commit.header))
                }
                continue
            }
            headers[commit.id] = commit.header
            var latest: [String: FeedLine] = [:]
            for entry in commit.entries where entry.isDocument {
                latest[entry.refId] = entry
            }
            entries[commit.id] = latest
            byReplica[commit.header.replica, default: []].append(commit.header)
            for entry in latest.values where !entry.deleted {
                occurrences[entry.refId, default: [:]][entry.changesetId, default: []].append(
                    Occurrence(entry: entry, commit: commit.header))
            }
        }
        for key in byReplica.keys { byReplica[key]!.sort { ($0.seq, $0.commit) < ($1.seq, $1.commit) } }
        self.headers = headers
        entriesByCommit = entries
        self.byReplica = byReplica
        self.occurrences = occurrences
    }

    /// The parents of one push of a version, by changesetId.
    private func parents(of occurrence: Occurrence) -> [String] {
        guard let named = occurrence.entry.parents else { return impliedParents(of: occurrence) }
        let known = named.filter { occurrences[occurrence.entry.refId]?[$0] != nil }
        // A named parent whose commit has not arrived yet: the versions the commits imply
        // stand in for it (older, but still ones it descends from), or the ancestry stops
        // short and a merge base older than the real one makes a field look changed twice.
        return known.count == named.count ? named : known + impliedParents(of: occurrence)
    }

    /// The parents the commits imply (see the type's comment).
    private func impliedParents(of occurrence: Occurrence) -> [String] {
        let refId = occurrence.entry.refId
        var out: [String] = []
        if let own = byReplica[occurrence.commit.replica] {
            for header in own.reversed() where header.seq < occurrence.commit.seq {
                if let entry = entriesByCommit[header.commit]?[refId] {
                    out.append(entry.changesetId)
                    break
                }
            }
        }
        var id = occurrence.commit.parent
        while let current = id, let header = headers[current] {
            if let entry = entriesByCommit[current]?[refId] {
                out.append(entry.changesetId)
                break
            }
            id = header.parent
        }
        return out
    }

    /// Every version `changesetId` of document `refId` descends from, itself included,
    /// by changesetId (only versions some commit holds; deletions are not versions here).
    func ancestors(of refId: String, changesetId: String) -> [String: FeedLine] {
        guard let versions = occurrences[refId] else { return [:] }
        var found: [String: FeedLine] = [:]
        var queue = [changesetId]
        while let next = queue.popLast() {
            guard found[next] == nil, let pushes = versions[next], let first = pushes.first else { continue }
            found[next] = first.entry
            for push in pushes { queue += parents(of: push) }
        }
        return found
    }

    /// The versions both descend from that no other such version descends from: one,
    /// usually; several after merges that crossed (each side merged the other's earlier
    /// version), and then the merge base is their merge (git's recursive merge).
    func latestCommonAncestors(of refId: String, _ a: String, _ b: String) -> [FeedLine] {
        latestCommonAncestors(of: refId, [a], b)
    }

    /// The same for content made from every version in `mine` (a tree's base and the
    /// versions its pending content carries, see `JournalEntry.madeFrom`) and version `b`.
    func latestCommonAncestors(of refId: String, _ mine: [String], _ b: String) -> [FeedLine] {
        var left: [String: FeedLine] = [:]
        for id in mine { left.merge(ancestors(of: refId, changesetId: id)) { kept, _ in kept } }
        let right = ancestors(of: refId, changesetId: b)
        return Self.latest(left.filter { right[$0.key] != nil }) { ancestors(of: refId, changesetId: $0) }
    }

    /// Whether some commit holds version `changesetId` of document `refId`.
    func knows(_ refId: String, _ changesetId: String) -> Bool { occurrences[refId]?[changesetId] != nil }

    /// Of `versions`, those no other one of them descends from, oldest first.
    static func latest(_ versions: [String: FeedLine], ancestors: (String) -> [String: FeedLine]) -> [FeedLine] {
        var below = Set<String>()
        // From the latest down: a version below one already kept is not kept.
        for id in versions.keys.sorted(by: >) where !below.contains(id) {
            for older in ancestors(id).keys where older != id { below.insert(older) }
        }
        return versions.keys.sorted().filter { !below.contains($0) }.map { versions[$0]! }
    }

    /// The latest version both descend from (the greatest changesetId: a version's id
    /// always sorts after those it was made from), or nil.
    func commonAncestor(of refId: String, _ a: String, _ b: String) -> FeedLine? {
        let left = ancestors(of: refId, changesetId: a), right = ancestors(of: refId, changesetId: b)
        return left.keys.filter { right[$0] != nil }.max().flatMap { left[$0] }
    }

}
