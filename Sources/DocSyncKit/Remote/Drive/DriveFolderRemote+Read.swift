import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reading a drive remote: the commit files of every replica into one history.
extension DriveFolderRemote {
    // MARK: Reading

    /// What the commit files say now, read from where `cursor` left off.
    struct Scan {
        var tip: DriveCommit.Header?
        var seen: [String: Int]
        /// Commits read but not usable yet (a file, an object or a parent not here yet).
        var waiting: [String] = []
        /// Sync-service copies of commit files that hold a commit already read.
        var duplicateCopies: [String] = []
    }

    func scan(from cursor: DriveCursor?, format: Format, files: DriveCommitFiles) throws -> Scan {
        let known = cursor?.seen ?? [:]
        let replicas = ((try? FileSystem.listDirectory(layout.replicas)) ?? []).filter {
            DriveLayout.isPlainName($0) && FileSystem.isDirectory(layout.replicaFolder($0))
        }.sorted()
        let listing = try readCommitFiles(of: replicas, above: known, into: files)
        var completeness: [String: Bool] = [:]
        var missingObjects: [String: Int] = [:]
        var missingParents: [String: Int] = [:]
        var presence: ParentPresence?
        func isComplete(_ id: String) -> Bool {
            if let known = completeness[id] { return known }
            guard let commit = files.commits[id] else { return false }
            completeness[id] = false  // a cycle (a crafted file) is never complete
            let missing = commit.neededObjects.filter { !objects.contains($0) }.count
            if missing > 0 { missingObjects[id] = missing }
            var ok = missing == 0
            if ok, commit.entries.contains(where: { !($0.parents ?? []).isEmpty }) {
                let checker = presence ?? ParentPresence(read: files.commits.values, layout: layout, held: heldVersion)
                presence = checker
                let absent = checker.missing(in: commit, counts: counts)
                if absent > 0 {
                    missingParents[id] = absent
                    ok = false
                }
            }
            if ok {
                if let parent = commit.header.parent {
                    if files.commits[parent] != nil {
                        ok = isComplete(parent)
                    } else if let parts = DriveCommit.parts(of: parent) {
                        ok = parts.seq <= known[parts.replica] ?? 0 || parent == cursor?.tip
                    } else {
                        ok = false
                    }
                } else {
                    ok = format.base == nil || commit.id == format.base
                }
            }
            completeness[id] = ok
            return ok
        }
        /// Whether a commit holding a parent version counts: read before, or read now
        /// and complete itself.
        func counts(_ id: String) -> Bool {
            if id == format.base || id == cursor?.tip { return true }
            if let parts = DriveCommit.parts(of: id), parts.seq <= known[parts.replica] ?? 0 { return true }
            return files.commits[id] != nil && isComplete(id)
        }
        func isDeadRoot(_ id: String) -> Bool {
            guard let header = files.commits[id]?.header else { return false }
            return header.parent == nil && format.base != nil && id != format.base
        }
        var candidates: [DriveCommit.Header] = []
        let ids = listing.byId.keys.sorted()
        for id in ids {
            if isComplete(id), let header = files.commits[id]?.header { candidates.append(header) }
        }
        let incomplete = ids.compactMap { id -> WaitingCommit? in
            guard completeness[id] == false, let header = files.commits[id]?.header, !isDeadRoot(id) else { return nil }
            return WaitingCommit(header: header, missingObjects: missingObjects[id], missingParents: missingParents[id])
        }
        let waiting = Self.waitingNotes(incomplete, unreadable: listing.unreadable, url: displayURL)
        if let tip = cursor?.tip, let header = files.header(tip) { candidates.append(header) }
        var seen: [String: Int] = [:]
        for replica in Set(replicas).union(known.keys) {
            var seq = known[replica] ?? 0
            // An upgrade that died before its commit point left a root that never counts:
            // passed over, or every read would open it again.
            while let id = listing.canonical[replica]?[seq + 1], isComplete(id) || isDeadRoot(id) { seq += 1 }
            if seq > 0 { seen[replica] = seq }
        }
        return Scan(
            tip: DriveHistory.tip(candidates), seen: seen, waiting: waiting, duplicateCopies: listing.duplicates)
    }

    /// A commit read but not usable yet, and what it waits for.
    struct WaitingCommit {
        var header: DriveCommit.Header
        var missingObjects: Int?
        var missingParents: Int?
    }

    /// What `sync` says about commits and files that have not fully arrived.
    static func waitingNotes(_ commits: [WaitingCommit], unreadable: [String], url: String) -> [String] {
        commits.map { commit in
            let what =
                commit.missingObjects.map { ", \($0) version(s) not here yet" }
                ?? commit.missingParents.map { ", it names \($0) earlier version(s) not here yet" } ?? ""
            return
                "\(url): push \(commit.header.seq) of replica \(commit.header.replica) has not fully arrived yet\(what); it is read on a later sync"
        }
            + unreadable.map {
                "\(url): .docsync/\($0) is incomplete (still being copied?); it is read on a later sync"
            }
    }

    /// The commit files read in one scan: by replica and number (canonical names only),
    /// by commit id, and the service copies and unreadable files met on the way.
    struct CommitListing {
        var canonical: [String: [Int: String]] = [:]
        var unreadable: [String] = []
        var byId: [String: String] = [:]
        var duplicates: [String] = []
    }

    /// Reads every replica's commit files above what this tree read before (`known`), and
    /// says when a file it read is gone (the folder went back in time).
    func readCommitFiles(of replicas: [String], above known: [String: Int], into files: DriveCommitFiles) throws
        -> CommitListing
    {
        // A replica's files never disappear from a folder on their own: if the last one
        // this tree read is gone, the folder went back in time (a backup restored, or a
        // sync service that restored an older copy). Say so; guessing could lose data.
        for (replica, seq) in known where seq > 0 && !FileSystem.exists(layout.commitFile(replica, seq: seq)) {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "\(layout.commitFile(replica, seq: seq)) is gone, and this tree had read it: the folder went back "
                    + "in time (restored from an older copy?). Nothing was changed; restore the folder, or run `docsync reset-base` to sync this tree with it as it is"
            )
        }
        var listing = CommitListing()
        for replica in replicas {
            let names = (try? FileSystem.listDirectory(layout.commits(replica))) ?? []
            for name in names.sorted() {
                guard let (seq, isCanonical) = DriveLayout.commitName(name) else { continue }
                if isCanonical, seq <= known[replica] ?? 0 { continue }
                let path = layout.commits(replica) + "/" + name
                if !isCanonical {
                    // A service's copy of a commit this replica's own file holds, byte for
                    // byte: tidied.
                    if let copy = try? FileSystem.readFile(path),
                        copy == (try? FileSystem.readFile(layout.commitFile(replica, seq: seq)))
                    {
                        listing.duplicates.append(path)
                        continue
                    }
                    files.noteCopy(name, of: replica)
                }
                guard let commit = files.load(path) else {
                    listing.unreadable.append("replicas/\(replica)/commits/\(name)")
                    continue
                }
                guard commit.header.replica == replica else { continue }
                if isCanonical { listing.canonical[replica, default: [:]][seq] = commit.id }
                if let first = listing.byId[commit.id] {
                    if !isCanonical {
                        listing.duplicates.append(path)
                    } else if first != path {
                        listing.duplicates.append(first)
                    }
                } else {
                    listing.byId[commit.id] = path
                }
            }
        }
        return listing
    }

    func cursor(_ scan: Scan, format: Format) -> DriveCursor {
        DriveCursor(remoteId: format.remoteId, tip: scan.tip?.commit, height: scan.tip?.height ?? 0, seen: scan.seen)
    }

    public func changes(since cursorText: String?) throws -> RemoteChanges {
        let format = try format()
        let (from, snapshot) = try parseCursor(cursorText, format: format)
        let files = DriveCommitFiles(layout: layout)
        let scan = try scan(from: from, format: format, files: files)
        let next = cursor(scan, format: format)
        tidy(scan.duplicateCopies)
        var changes = try changes(from: from, snapshot: snapshot, scan: scan, next: next, files: files, format: format)
        changes.notArrived = scan.waiting
        return changes
    }

    func changes(
        from: DriveCursor?, snapshot: Bool, scan: Scan, next: DriveCursor, files: DriveCommitFiles, format: Format
    ) throws -> RemoteChanges {
        guard let tip = scan.tip, tip.commit != from?.tip else {
            return RemoteChanges(entries: [], cursor: next.text)
        }
        var refused: [String] = []
        let damaged = RemoteError.damaged(
            url: displayURL, reason: "a commit file on the way to \(tip.commit) could not be read")
        if let from, let fromTip = from.tip {
            if let (entries, isSnapshot) = DriveHistory.changes(from: (fromTip, from.height), to: tip.commit, in: files)
            {
                var changes = RemoteChanges(
                    folding: checked(entries, refused: &refused), cursor: next.text, snapshot: isSnapshot,
                    warnings: refused, objects: objects)
                changes.ownVersions = ownVersions(above: (fromTip, from.height), upTo: tip.commit, in: files)
                return changes
            }
            return try changesAfterLostFork(from: fromTip, to: tip.commit, next: next, files: files, format: format)
        }
        guard let state = DriveHistory.state(at: tip.commit, in: files) else { throw damaged }
        return RemoteChanges(
            folding: checked(state, refused: &refused), cursor: next.text, snapshot: snapshot, warnings: refused,
            objects: objects)
    }

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
        // This tree's last push lost a fork (another replica pushed at the same time
        // without seeing it): go back to the last commit both share; the engine sends
        // again what is not on the chain, merged with what is.
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
        var versions: [String: DocVersion] = [:]
        let authored = authoredEntries(files: files)
        let theirState = DriveHistory.latest(commonState + theirs)
        let theirLatest = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        let bases = forkMergeBases(format: format)
        askedBases = bases  // a pull of the same run asks again: one read of every commit
        let exact = exactBases(mine: DriveHistory.latest(commonState + ours), theirs: theirLatest, bases: bases)
        var base = DriveHistory.mergeBase(common: commonState, ours: ours + authored, theirs: theirs)
        betterBases(&base, ours: ours, theirState: theirState, format: format)
        var contents: [String: [UInt8]] = [:]
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
        for entry in checked(Array(base.values), refused: &refused)
        where entry.conflict == nil && entry.purgedDeletion != true {
            if let version = entry.version { versions[entry.refId] = version }
        }
        if let me = localReplica {
            let losing = (DriveHistory.chain(from: fromTip, downToHeight: commonHeight, in: files) ?? []).reversed()
                .compactMap { files.commit($0.commit) }
            for (refId, version) in replayBases(
                commonState: commonState, losing: losing, theirState: theirState, me: me,
                authoredEntries: authored) where exact[refId] == nil
            {
                versions[refId] = version.version
                contents[version.version.hash] = version.bytes
            }
        }
        let store = objects
        var rewound = RewoundHistory(lost: fromTip, commonPosition: common, common: versions, contents: contents)
        rewound.load = { try? store.get($0) }
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

    /// The versions this tree's replica's own commits above `from` up to `to` hold, by
    /// refId (see `RemoteChanges.ownVersions`): only commits on the chain being read.
    func ownVersions(above from: (id: String, height: Int), upTo to: String, in files: DriveCommitFiles)
        -> [String: Set<String>]
    {
        guard let me = localReplica, let path = DriveHistory.chain(from: to, downToHeight: from.height, in: files)
        else { return [:] }
        var out: [String: Set<String>] = [:]
        for header in path where header.replica == me && header.checkpoint != true {
            for entry in files.commit(header.commit)?.entries ?? []
            where entry.conflict == nil && entry.purgedDeletion != true && !entry.deleted {
                out[entry.refId, default: []].insert(entry.changesetId)
            }
        }
        return out
    }

    /// The entries that can be taken; the others are reported and left out.
    func checked(_ entries: [RemoteEntry], refused: inout [String]) -> [RemoteEntry] {
        entries.filter { entry in
            guard let problem = DirectoryRemote.problem(of: entry) else { return true }
            refused.append("\(displayURL): refused \(problem); not pulled")
            return false
        }
    }

    /// Removes sync-service copies of commit files that hold a commit already read
    /// under its own name: nothing in them is lost.
    func tidy(_ copies: [String]) {
        for path in copies { try? FileSystem.removeFile(path) }
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        guard let hash = entry.hash, entry.path != nil else {
            throw RemoteError.damaged(url: displayURL, reason: "entry for \(entry.refId) has no content")
        }
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.unreachable(url: displayURL, reason: "folder disappeared")
        }
        guard let bytes = try? objects.get(hash) else {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "version \(entry.changesetId) of \(entry.path ?? entry.refId) is missing from the remote's objects")
        }
        return bytes
    }
}
