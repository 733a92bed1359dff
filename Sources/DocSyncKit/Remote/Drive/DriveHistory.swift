/// Where a drive-layout remote's history comes from: commits by id (headers alone when
/// a walk needs no entries). Files on disk in `DriveFolderRemote`; a dictionary in tests.
protocol DriveCommitSource {
    func header(_ id: String) -> DriveCommit.Header?
    func commit(_ id: String) -> DriveCommit?
}

/// The rules that turn the commit files of all replicas into one history, as pure
/// functions: every replica that holds the same files computes the same answer, which is
/// what makes replicas converge without any file two of them write.
///
/// - The commits form a tree (each names its parent). Two replicas that pushed without
///   seeing each other's push made two children of one commit: a fork.
/// - **The tip** is the complete commit with the greatest height, ties broken by the
///   greater id. The remote's state is the chain from the root to the tip.
/// - A tree whose last-read tip is on the chain continues from it (fast-forward). A tree
///   whose tip is not (its push lost the fork) goes back to the last commit both chains
///   share and sends again what is not on the chain (`RewoundHistory`): the engine's
///   three-way merge then merges the two pushes field by field, so nothing is lost, and
///   the losing replica's next push puts the merge on top of the tip.
enum DriveHistory {
    /// The tip: greatest (height, id).
    static func tip(_ candidates: [DriveCommit.Header]) -> DriveCommit.Header? {
        candidates.max { ($0.height, $0.commit) < ($1.height, $1.commit) }
    }

    static func isAbove(_ a: (height: Int, id: String), _ b: (height: Int, id: String)) -> Bool {
        (a.height, a.id) > (b.height, b.id)
    }

    /// The commits from `top` down to (not including) the first one at or below
    /// `height`, newest first; nil if one is missing on the way.
    static func chain(from top: String, downToHeight height: Int, in source: DriveCommitSource) -> [DriveCommit.Header]?
    {
        var out: [DriveCommit.Header] = []
        var id: String? = top
        while let current = id {
            guard let header = source.header(current) else { return nil }
            if header.height <= height { break }
            out.append(header)
            id = header.parent
        }
        return out
    }

    /// The id at `height` on the chain below `top` (nil: the chain is shorter).
    static func ancestor(of top: String, atHeight height: Int, in source: DriveCommitSource) -> String? {
        var id: String? = top
        while let current = id, let header = source.header(current) {
            if header.height == height { return current }
            if header.height < height { return nil }
            id = header.parent
        }
        return nil
    }

    /// Whether `descendant` is `ancestor` or has it on its chain.
    static func descends(_ descendant: String, from ancestor: String, in source: DriveCommitSource) -> Bool {
        guard let target = source.header(ancestor) else { return false }
        return Self.ancestor(of: descendant, atHeight: target.height, in: source) == ancestor
    }

    /// The last commit the chains below `a` and `b` share (nil: none, or one is missing).
    static func commonAncestor(_ a: String, _ b: String, in source: DriveCommitSource) -> String? {
        var x: String? = a, y: String? = b
        while let cx = x, let cy = y {
            if cx == cy { return cx }
            guard let hx = source.header(cx), let hy = source.header(cy) else { return nil }
            if hx.height >= hy.height { x = hx.parent }
            if hy.height >= hx.height { y = hy.parent }
        }
        return nil
    }

    /// The state at `id`: the latest entry per key along the chain, from the nearest
    /// checkpoint (or the root) up, in the order they were made. Nil if a commit is missing.
    static func state(at id: String?, in source: DriveCommitSource) -> [FeedLine]? {
        guard let id else { return [] }
        var commits: [DriveCommit] = []
        var current: String? = id
        while let c = current {
            guard let commit = source.commit(c) else { return nil }
            commits.append(commit)
            if commit.header.checkpoint == true { break }
            current = commit.header.parent
        }
        return latest(of: commits.reversed())
    }

    /// What changed from `from` to `to` when `to` descends from `from`: the latest entry
    /// per key on the commits between them, oldest first; `snapshot` when one of those
    /// commits is a checkpoint (then the entries are the whole state at `to`). Nil if
    /// `to` does not descend from `from`, or a commit is missing.
    static func changes(from: (id: String, height: Int)?, to: String, in source: DriveCommitSource) -> (
        entries: [FeedLine], snapshot: Bool
    )? {
        guard let from else { return state(at: to, in: source).map { ($0, false) } }
        guard let path = chain(from: to, downToHeight: from.height, in: source) else { return nil }
        let below = path.last?.parent ?? to
        guard below == from.id else { return nil }
        if path.contains(where: { $0.checkpoint == true }) {
            return state(at: to, in: source).map { ($0, true) }
        }
        var commits: [DriveCommit] = []
        for header in path.reversed() {
            guard let commit = source.commit(header.commit) else { return nil }
            commits.append(commit)
        }
        return (latest(of: commits), false)
    }

    /// Every entry of the commits above `from` up to `to`, oldest first (nil if `to` does
    /// not descend from `from`, or a commit is missing).
    static func entries(from: (id: String, height: Int)?, to: String, in source: DriveCommitSource) -> [FeedLine]? {
        guard let path = chain(from: to, downToHeight: from?.height ?? 0, in: source) else { return nil }
        guard (path.last?.parent ?? to) == from?.id || (from == nil && path.last?.parent == nil) else { return nil }
        var out: [FeedLine] = []
        for header in path.reversed() {
            guard let commit = source.commit(header.commit) else { return nil }
            out += commit.entries
        }
        return out
    }

    /// The merge base of a fork, document by document: the latest version on the
    /// winning chain that this replica held too, starting from the state at the last
    /// commit both chains share. Why not that state alone: a replica whose push lost also
    /// holds versions that reached the winning chain another way (a version it pushed on
    /// a chain it left in an earlier lost fork, or one another replica re-sent after
    /// losing too); measured from the shared commit, those looked like its own edits and
    /// collided with later ones, so a stale value could win a field.
    /// - Parameters: `common` the state at the shared commit; `ours` every entry this
    ///   replica held (its chain above the shared commit, and every commit it made, on
    ///   any chain); `theirs` every entry of the winning chain above it, oldest first.
    static func mergeBase(common: [FeedLine], ours: [FeedLine], theirs: [FeedLine]) -> [String: FeedLine] {
        func key(_ e: FeedLine) -> String { e.refId + "\u{0}" + e.changesetId + (e.deleted ? "\u{0}-" : "") }
        let held = Set(ours.map(key))
        var base: [String: FeedLine] = [:]
        for entry in common { base[entry.refId] = entry }
        for entry in theirs where held.contains(key(entry)) { base[entry.refId] = entry }
        return base
    }

    /// The last entry per key (`refId`), in the order of their last appearance.
    static func latest(_ entries: [FeedLine]) -> [FeedLine] { latest(of: [entries]) }

    /// The last entry per key of `commits`' entries, one after another: `latest` without
    /// joining them into one list first. Why: at 100,000 documents the joined list, the
    /// numbered entries a filter kept and the list made of those (grown by doubling)
    /// were 150 MB held at once beside the commits, most of a clone's peak.
    static func latest(of commits: some Collection<DriveCommit>) -> [FeedLine] {
        latest(of: commits.lazy.map(\.entries))
    }

    private static func latest(of lists: some Collection<[FeedLine]>) -> [FeedLine] {
        var last: [String: Int] = [:]
        var position = 0
        for list in lists {
            for e in list {
                last[e.refId] = position
                position += 1
            }
        }
        var kept: [FeedLine] = []
        kept.reserveCapacity(last.count)
        position = 0
        for list in lists {
            for e in list {
                if last[e.refId] == position { kept.append(e) }
                position += 1
            }
        }
        return kept
    }
}
