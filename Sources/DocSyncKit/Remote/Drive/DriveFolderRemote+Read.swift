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
        let replicas = ((try? layout.files.listDirectory(layout.replicas)) ?? []).filter {
            DriveLayout.isPlainName($0) && layout.files.isDirectory(layout.replicaFolder($0))
        }.sorted()
        let listing = try readCommitFiles(of: replicas, above: known, into: files)
        let judge = DriveCompleteness(
            files: files, objects: objects, layout: layout, held: heldVersion, base: format.base, cursor: cursor)
        var candidates: [DriveCommit.Header] = []
        let ids = listing.byId.keys.sorted()
        for id in ids {
            if judge.isComplete(id), let header = files.commits[id]?.header { candidates.append(header) }
        }
        let incomplete = ids.compactMap { id -> WaitingCommit? in
            guard judge.isKnownIncomplete(id), let header = files.commits[id]?.header, !judge.isDeadRoot(id) else {
                return nil
            }
            return WaitingCommit(
                header: header, missingObjects: judge.missingObjects[id], missingParents: judge.missingParents[id])
        }
        let waiting = Self.waitingNotes(incomplete, unreadable: listing.unreadable, url: displayURL)
        if let tip = cursor?.tip, let header = files.header(tip) { candidates.append(header) }
        // A path refused on the way (read as "nothing here") stops the run before it acts.
        try layout.files.checkPerimeter()
        var seen: [String: Int] = [:]
        for replica in Set(replicas).union(known.keys) {
            var seq = known[replica] ?? 0
            // An upgrade that died before its commit point left a root that never counts:
            // passed over, or every read would open it again.
            while let id = listing.canonical[replica]?[seq + 1], judge.isComplete(id) || judge.isDeadRoot(id) {
                seq += 1
            }
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
        try checkNothingReadIsGone(known)
        var listing = CommitListing()
        for replica in replicas {
            let names = (try? layout.files.listDirectory(layout.commits(replica))) ?? []
            for name in names.sorted() {
                guard let (seq, isCanonical) = DriveLayout.commitName(name) else { continue }
                if isCanonical, seq <= known[replica] ?? 0 { continue }
                let path = layout.commits(replica) + "/" + name
                if !isCanonical {
                    // A service's copy of a commit this replica's own file holds, byte for
                    // byte: tidied.
                    if let copy = try? layout.files.readFile(path),
                        copy == (try? layout.files.readFile(layout.commitFile(replica, seq: seq)))
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

    /// A replica's files never disappear from a folder on their own: if the last one
    /// this tree read is gone, the folder went back in time (a backup restored, or a
    /// sync service that restored an older copy). Say so; guessing could lose data.
    private func checkNothingReadIsGone(_ known: [String: Int]) throws {
        for (replica, seq) in known where seq > 0 && !layout.files.exists(layout.commitFile(replica, seq: seq)) {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "\(layout.commitFile(replica, seq: seq)) is gone, and this tree had read it: the folder went back "
                    + "in time (restored from an older copy?). Nothing was changed; restore the folder, or run `docsync reset-base` to sync this tree with it as it is"
            )
        }
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
        // A path refused on the way (a lookup that answered "nothing here") stops the pull.
        try layout.files.checkPerimeter()
        withholdOversized(&changes)
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
            where entry.isDocument && !entry.deleted {
                out[entry.refId, default: []].insert(entry.changesetId)
            }
        }
        return out
    }

    /// The entries that can be taken; the others are reported and left out.
    func checked(_ entries: [FeedLine], refused: inout [String]) -> [FeedLine] {
        // Why look before filtering: a clone's 100,000 lines copied to refuse none were a
        // twentieth of its peak memory.
        guard entries.contains(where: { DirectoryRemote.problem(of: $0) != nil }) else { return entries }
        return entries.filter { entry in
            guard let problem = DirectoryRemote.problem(of: entry) else { return true }
            refused.append("\(displayURL): refused \(problem); not pulled")
            return false
        }
    }

    /// Removes sync-service copies of commit files that hold a commit already read
    /// under its own name: nothing in them is lost.
    func tidy(_ copies: [String]) {
        for path in copies { try? layout.files.removeFile(path) }
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        guard let hash = entry.hash, entry.path != nil else {
            throw RemoteError.damaged(url: displayURL, reason: "entry for \(entry.refId) has no content")
        }
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.unreachable(url: displayURL, reason: "folder disappeared")
        }
        if let size = oversize(hash) {
            throw RemoteError.damaged(
                url: displayURL, reason: ceiling.tooLarge(entry.path ?? entry.refId, size: size, url: displayURL))
        }
        guard let bytes = try? objects.get(hash) else {
            try layout.files.checkPerimeter()
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "version \(entry.changesetId) of \(entry.path ?? entry.refId) is missing from the remote's objects")
        }
        return bytes
    }
}
