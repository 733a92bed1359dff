import Foundation

/// Reading a drive remote after this tree's last push lost a fork.
extension DriveFolderRemote {
    /// This tree's last push lost a fork (another replica pushed at the same time without
    /// seeing it): the changes from the last commit both chains share, and what the tree
    /// held there (`RewoundHistory`), so the engine sends again what is not on the winning
    /// chain, merged with what is.
    func changesAfterLostFork(
        from fromTip: String, to tipCommit: String, next: DriveCursor, files: DriveCommitFiles, format: Format
    ) throws -> RemoteChanges {
        var refused: [String] = []
        let damaged = RemoteError.damaged(
            url: displayURL, reason: "a commit file on the way to \(tipCommit) could not be read")
        let common = DriveHistory.commonAncestor(fromTip, tipCommit, in: files)
        let commonHeight = common.flatMap { files.header($0)?.height } ?? 0
        guard let commonState = DriveHistory.state(at: common, in: files),
            let (entries, isSnapshot) = common.map({
                DriveHistory.changes(from: ($0, commonHeight), to: tipCommit, in: files)
            })
                ?? DriveHistory.state(at: tipCommit, in: files).map({ ($0, false) })
        else { throw damaged }
        let fromCommon = common.map { ($0, commonHeight) }
        guard let ours = DriveHistory.entries(from: fromCommon, to: fromTip, in: files),
            let theirs = DriveHistory.entries(from: fromCommon, to: tipCommit, in: files)
        else { throw damaged }
        var changes = RemoteChanges(
            folding: checked(entries, refused: &refused), cursor: next.text, snapshot: isSnapshot,
            warnings: refused, objects: objects)
        if let fromCommon { changes.ownVersions = ownVersions(above: fromCommon, upTo: tipCommit, in: files) }
        let theirState = DriveHistory.latest(commonState + theirs)
        let theirLatest = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        let bases = forkMergeBases(format: format)
        askedBases = bases  // a pull of the same run asks again: one read of every commit
        let fork = ForkSides(
            fromTip: fromTip, commonHeight: commonHeight, commonState: commonState, ours: ours, theirs: theirs,
            theirState: theirState)
        let (versions, contents) = baseVersions(
            of: fork, theirLatest: theirLatest, bases: bases, refused: &refused, files: files, format: format)
        let store = objects
        var rewound = RewoundHistory(lost: fromTip, commonPosition: common, common: versions, contents: contents)
        let ceiling = ceiling
        // One larger than remote.maxDocumentBytes is not read (see RemoteDocumentCeiling).
        rewound.load = { hash in
            (store.size(of: hash) ?? 0) > ceiling.maxBytes ? nil : try? store.get(hash)
        }
        // The tree may hold a later version than its cursor says (a pull killed after
        // its files, before its cursor): the engine asks with the version it holds.
        rewound.mergeBase = { refId, held in
            guard let other = theirLatest[refId], Self.namesParents(other) else { return nil }
            if held == [other.changesetId] { return other.version.map { ($0, nil) } }
            return bases.version(of: refId, held, other.changesetId)
        }
        rewound.explanation =
            "took a push another replica made at the same time as this tree's last one (both made on "
            + "\(common.map { "commit \($0)" } ?? "the empty remote")); this tree's push is merged again on top of it"
        changes.rewound = rewound
        return changes
    }

    /// The two sides of a lost fork, from the last commit both chains share.
    struct ForkSides {
        var fromTip: String
        var commonHeight: Int
        var commonState: [FeedLine]
        /// The entries of this tree's (losing) chain and of the winning one, above the common commit.
        var ours: [FeedLine]
        var theirs: [FeedLine]
        var theirState: [FeedLine]
    }

    /// What the tree held at the fork, document by document: an exact merge base where
    /// both versions name their parents, else the best base the chains give, replaced by
    /// a replay of this replica's own edits where one can be made.
    private func baseVersions(
        of fork: ForkSides, theirLatest: [String: FeedLine], bases: ForkMergeBases, refused: inout [String],
        files: DriveCommitFiles, format: Format
    ) -> (versions: [String: DocVersion], contents: [String: [UInt8]]) {
        var versions: [String: DocVersion] = [:]
        var contents: [String: [UInt8]] = [:]
        let authored = authoredEntries(files: files)
        let exact = exactBases(
            mine: DriveHistory.latest(fork.commonState + fork.ours), theirs: theirLatest, bases: bases)
        var base = DriveHistory.mergeBase(common: fork.commonState, ours: fork.ours + authored, theirs: fork.theirs)
        betterBases(&base, ours: fork.ours, theirState: fork.theirState, format: format)
        for (refId, found) in exact {
            switch found {
            case .version(let entry): base[refId] = entry
            case .merged(let entry, let bytes):
                // Named after the latest version it merges: only what the merge is measured from.
                base[refId] = nil
                guard let path = entry.path else { continue }
                let hash = ContentHash.of(bytes)
                versions[refId] = DocVersion(refId: refId, changesetId: entry.changesetId, hash: hash, path: path)
                contents[hash] = bytes
            }
        }
        for entry in checked(Array(base.values), refused: &refused) where entry.isDocument {
            if let version = entry.version { versions[entry.refId] = version }
        }
        guard let me = localReplica else { return (versions, contents) }
        let losing = (DriveHistory.chain(from: fork.fromTip, downToHeight: fork.commonHeight, in: files) ?? [])
            .reversed().compactMap { files.commit($0.commit) }
        for (refId, version) in replayBases(
            commonState: fork.commonState, losing: losing, theirState: fork.theirState, me: me,
            authoredEntries: authored) where exact[refId] == nil
        {
            versions[refId] = version.version
            contents[version.version.hash] = version.bytes
        }
        return (versions, contents)
    }
}
