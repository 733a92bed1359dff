import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The merge base of a fork, document by document (see DriveHistory and ForkMergeBase).
extension DriveFolderRemote {
    public func mergeBase(of refId: String, held: [String], theirs: String) -> (DocVersion, [UInt8]?)? {
        guard let format = try? format() else { return nil }
        if askedBases == nil { askedBases = forkMergeBases(format: format) }
        return askedBases?.version(of: refId, held, theirs)
    }

    /// The merge bases of a fork, built on the first question (see ForkMergeBase).
    func forkMergeBases(format: Format) -> ForkMergeBases {
        let store = objects
        return ForkMergeBases(
            readAncestry: { [self] in
                let all = DriveCommitFiles(layout: layout)
                guard (try? scan(from: nil, format: format, files: all)) != nil else { return nil }
                return VersionAncestry(commits: Array(all.commits.values))
            }, bytes: { entry in entry.hash.flatMap { try? store.get($0) } }, merge: versionMerge)
    }

    /// For each document the two chains hold in different versions, both of which name
    /// their parents: its merge base (`ForkMergeBase`), exact where the rules below (for
    /// entries written before docsync named parents) guess.
    func exactBases(mine: [FeedLine], theirs: [String: FeedLine], bases: ForkMergeBases)
        -> [String: ForkMergeBase.Base]
    {
        var out: [String: ForkMergeBase.Base] = [:]
        for entry in mine where Self.namesParents(entry) {
            guard let other = theirs[entry.refId], Self.namesParents(other), other.changesetId != entry.changesetId
            else { continue }
            out[entry.refId] = bases.base(of: entry.refId, entry.changesetId, other.changesetId)
        }
        return out
    }

    /// A version (not a deletion or a record line) whose entry names its parents.
    static func namesParents(_ entry: FeedLine) -> Bool {
        entry.isDocument && !entry.deleted && entry.parents != nil
    }

    /// For a document both chains changed where the chains hold no version in common,
    /// the latest version both of their versions descend from (VersionAncestry), read
    /// from every commit file: without it the two were merged with no base at all, and
    /// every field that differed collided.
    func betterBases(
        _ base: inout [String: FeedLine], ours: [FeedLine], theirState: [FeedLine], format: Format
    ) {
        let mine = DriveHistory.latest(ours.filter { $0.isDocument })
        let theirs = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        let needing = mine.filter { entry in
            guard let other = theirs[entry.refId], other.changesetId != entry.changesetId else { return false }
            return base[entry.refId] == nil
        }
        guard !needing.isEmpty else { return }
        let all = DriveCommitFiles(layout: layout)
        guard (try? scan(from: nil, format: format, files: all)) != nil else { return }
        let ancestry = VersionAncestry(commits: Array(all.commits.values))
        for entry in needing {
            if let common = ancestry.commonAncestor(
                of: entry.refId, entry.changesetId, theirs[entry.refId]!.changesetId)
            {
                base[entry.refId] = common
            }
        }
    }

    /// Every entry of every commit this tree's replica made, on any chain (what it held
    /// even on a chain it left after an earlier lost fork).
    func authoredEntries(files: DriveCommitFiles) -> [FeedLine] {
        guard let me = localReplica, DriveLayout.isPlainName(me) else { return [] }
        var out: [FeedLine] = []
        for name in ((try? layout.files.listDirectory(layout.commits(me))) ?? []).sorted()
        where DriveLayout.commitName(name) != nil {
            if let commit = files.load(layout.commits(me) + "/" + name), commit.header.replica == me {
                out += commit.entries
            }
        }
        return out
    }

    /// One document's versions on a losing chain, oldest first, each with the version on
    /// the chain below it.
    typealias LosingChain = [(entry: FeedLine, madeOn: FeedLine?)]

    /// For each document this replica's losing chain changed and the winning chain still
    /// holds, the base that replays only this replica's own edits (see ForkRebase), with
    /// its bytes. Documents where none can be made keep the base found before.
    func replayBases(
        commonState: [FeedLine], losing: [DriveCommit], theirState: [FeedLine], me: String,
        authoredEntries: [FeedLine]
    ) -> [String: (version: DocVersion, bytes: [UInt8])] {
        let theirs = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        var authored: [String: [FeedLine]] = [:]
        for entry in authoredEntries where entry.isDocument {
            authored[entry.refId, default: []].append(entry)
        }
        let atFork = Dictionary(commonState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        var out: [String: (version: DocVersion, bytes: [UInt8])] = [:]
        for (refId, chain) in Self.losingChains(commonState: commonState, losing: losing) {
            guard let winning = theirs[refId], !winning.deleted, let last = chain.last?.entry, !last.deleted else {
                continue
            }
            if !chain.contains(where: { $0.entry.replica == me }) {
                // Nothing of this replica's own to replay: where the winning chain changed
                // the document, its version is taken as it is (the others replay theirs).
                if winning.changesetId != atFork[refId]?.changesetId, let version = last.version,
                    let content = bytes(of: last)
                {
                    out[refId] = (version, content)
                }
                continue
            }
            out[refId] = replayBase(chain, me: me, winning: winning, authored: authored[refId] ?? [])
        }
        return out
    }

    /// Per document, its versions on the losing chain (see `LosingChain`).
    static func losingChains(commonState: [FeedLine], losing: [DriveCommit]) -> [String: LosingChain] {
        var current: [String: FeedLine] = [:]
        for entry in commonState where entry.isDocument { current[entry.refId] = entry }
        var chains: [String: LosingChain] = [:]
        for commit in losing {
            for entry in commit.entries where entry.isDocument {
                chains[entry.refId, default: []].append((entry, current[entry.refId]))
                current[entry.refId] = entry
            }
        }
        return chains
    }

    /// The base replaying `me`'s own changes on `chain` (nil: a version's bytes are not
    /// here, or ForkRebase finds none).
    private func replayBase(_ chain: LosingChain, me: String, winning: FeedLine, authored: [FeedLine])
        -> (version: DocVersion, bytes: [UInt8])?
    {
        guard let last = chain.last?.entry, let lastPath = last.path else { return nil }
        var versions: [(replica: String, bytes: [UInt8], madeOn: [UInt8]?)] = []
        for (entry, madeOn) in chain {
            guard let content = bytes(of: entry) else { return nil }
            versions.append((entry.replica, content, bytes(of: madeOn)))
        }
        let held = (chain.map(\.entry) + authored).compactMap { bytes(of: $0) }
        guard let base = ForkRebase.base(chain: versions, me: me, winning: bytes(of: winning), held: held) else {
            return nil
        }
        // The base names the version the replica's first own change was made on (it
        // never leaves this tree: it is only what the merge is measured from).
        let from = chain.first { $0.entry.replica == me }?.madeOn ?? last
        return (
            DocVersion(
                refId: last.refId, changesetId: from.changesetId, hash: ContentHash.of(base),
                path: from.path ?? lastPath), base
        )
    }

    /// A version's bytes from objects/ (nil for a deletion, or bytes not here).
    private func bytes(of entry: FeedLine?) -> [UInt8]? {
        // One larger than remote.maxDocumentBytes is not read (see RemoteDocumentCeiling).
        guard let entry, !entry.deleted, let hash = entry.hash, oversize(hash) == nil else { return nil }
        return try? objects.get(hash)
    }
}
