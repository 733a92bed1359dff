import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A folder remote in the drive layout (`docsync-remote 2`), safe on folders a sync
/// service copies between machines (Dropbox, Google Drive, OneDrive, Nextcloud,
/// Syncthing, Unison): no file is ever written by two replicas, so the service never has
/// two versions of one file to choose between (see docs/REMOTE-LAYOUT.md):
///
///     format                        the remote's id and layout version (its creator, once)
///     objects/                      every pushed version by content hash (immutable)
///     replicas/<id>/commits/<n>.json  replica <id>'s pushes, each written once
///     replicas/<id>/info.json       replica <id>'s record: name, what it has seen
///
/// Readers merge the commits of all replicas into one history (`DriveHistory`); files
/// that have not arrived yet are "not here yet", never a deletion. The documents at
/// their paths are a view for people, never read back as the truth.
public final class DriveFolderRemote: Remote {
    public let root: String
    public let displayURL: String
    let layout: DriveLayout
    let objects: ObjectStore
    let lockWaitSeconds: Double
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    /// This tree's replica id: after its push lost a fork, only its own edits are merged
    /// again (see ForkRebase). Nil: the tree's whole versions are, from the shared one.
    public var localReplica: String?
    /// How this tree merges two versions: a fork's merge base may be the merge of
    /// several versions (see ForkMergeBase). Nil: the latest of them is taken.
    public var versionMerge: VersionMerge?

    public init(url: String, lockWaitSeconds: Double = 10) {
        displayURL = url
        root = FileSystem.absolute(url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url)
        layout = DriveLayout(root: root)
        objects = ObjectStore(root: layout.objects)
        self.lockWaitSeconds = lockWaitSeconds
    }

    static let formatHeader = "docsync-remote 2"

    /// Makes `url` a new, empty remote in this layout. The folder may exist but must hold nothing.
    public static func create(at url: String) throws {
        let remote = DriveFolderRemote(url: url)
        if FileSystem.exists(remote.layout.format) { return }
        if FileSystem.exists(remote.root), !(try FileSystem.listDirectory(remote.root)).isEmpty {
            throw RemoteError.damaged(
                url: url,
                reason: "folder exists and is not empty, and is not a docsync remote; pick an empty or new folder")
        }
        try FileSystem.createDirectories(remote.layout.replicas)
        try FileSystem.createDirectories(remote.layout.objects)
        try FileSystem.writeAtomically(remote.layout.format, Array("\(formatHeader)\nid \(UUIDString.random())\n".utf8))
    }

    // MARK: Format

    struct Format {
        var remoteId: String
        /// The commit an upgrade from format 1 made: the root of every chain.
        var base: String?
        /// The format-1 position it holds (`<generation>:<feed length>`).
        var upgradedFrom: String?
    }

    /// The remote's id and base. Its absence means the folder is missing or not mounted
    /// (or not synced here yet), which must read as "unreachable", never as "empty".
    func format() throws -> Format {
        guard FileSystem.isDirectory(root) else {
            throw RemoteError.unreachable(url: displayURL, reason: "folder \(root) does not exist (not mounted?)")
        }
        guard let bytes = try? FileSystem.readFile(layout.format) else {
            throw RemoteError.unreachable(
                url: displayURL,
                reason: "\(layout.format) is missing: not a docsync remote, or the share is not mounted")
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.first == Self.formatHeader, lines.count >= 2, lines[1].hasPrefix("id ") else {
            throw RemoteError.damaged(
                url: displayURL, reason: "\(layout.format) is not a docsync remote format this version understands")
        }
        var format = Format(remoteId: String(lines[1].dropFirst(3)))
        for line in lines.dropFirst(2) {
            if line.hasPrefix("base ") { format.base = String(line.dropFirst(5)) }
            if line.hasPrefix("upgraded-from ") { format.upgradedFrom = String(line.dropFirst(14)) }
        }
        return format
    }

    /// The tree's cursor as a drive cursor. A format-1 cursor of this remote (the tree
    /// last synced before the upgrade) continues from the upgrade's commit if it was
    /// exactly there; an older one reads the whole state as a snapshot (nil, `snapshot`).
    func parseCursor(_ text: String?, format: Format) throws -> (cursor: DriveCursor?, snapshot: Bool) {
        guard let text else { return (nil, false) }
        if let cursor = DriveCursor(text) {
            guard cursor.remoteId == format.remoteId else { throw differentRemote(format.remoteId, cursor.remoteId) }
            return (cursor, false)
        }
        if let old = DirectoryRemote.Cursor(text) {
            guard old.remoteId == format.remoteId else { throw differentRemote(format.remoteId, old.remoteId) }
            if let base = format.base, let parts = DriveCommit.parts(of: base),
                format.upgradedFrom == "\(old.position.generation):\(old.position.length)"
            {
                return (
                    DriveCursor(remoteId: format.remoteId, tip: base, height: 1, seen: [parts.replica: parts.seq]),
                    false
                )
            }
            return (nil, true)
        }
        throw RemoteError.damaged(url: displayURL, reason: "this tree's remote cursor '\(text)' is not valid")
    }

    private func differentRemote(_ id: String, _ expected: String) -> RemoteError {
        .damaged(
            url: displayURL,
            reason:
                "this is a different remote than the one this tree last synced with (remote id \(id), expected \(expected))"
        )
    }

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
        var canonical: [String: [Int: String]] = [:]
        var unreadable: [String] = []
        var byId: [String: String] = [:]
        var duplicates: [String] = []
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
                        duplicates.append(path)
                        continue
                    }
                    files.noteCopy(name, of: replica)
                }
                guard let commit = files.load(path) else {
                    unreadable.append("replicas/\(replica)/commits/\(name)")
                    continue
                }
                guard commit.header.replica == replica else { continue }
                if isCanonical { canonical[replica, default: [:]][seq] = commit.id }
                if let first = byId[commit.id] {
                    if !isCanonical { duplicates.append(path) } else if first != path { duplicates.append(first) }
                } else {
                    byId[commit.id] = path
                }
            }
        }
        var completeness: [String: Bool] = [:]
        var missingObjects: [String: Int] = [:]
        func isComplete(_ id: String) -> Bool {
            if let known = completeness[id] { return known }
            guard let commit = files.commits[id] else { return false }
            completeness[id] = false  // a cycle (a crafted file) is never complete
            let missing = commit.neededObjects.filter { !objects.contains($0) }.count
            if missing > 0 { missingObjects[id] = missing }
            var ok = missing == 0
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
        func isDeadRoot(_ id: String) -> Bool {
            guard let header = files.commits[id]?.header else { return false }
            return header.parent == nil && format.base != nil && id != format.base
        }
        var candidates: [DriveCommit.Header] = []
        var waiting: [String] = []
        for id in byId.keys.sorted() {
            if isComplete(id), let header = files.commits[id]?.header { candidates.append(header) }
        }
        for id in byId.keys.sorted() where completeness[id] == false {
            guard let header = files.commits[id]?.header else { continue }
            if isDeadRoot(id) { continue }
            let objectsNote = missingObjects[id].map { ", \($0) version(s) not here yet" } ?? ""
            waiting.append(
                "\(displayURL): push \(header.seq) of replica \(header.replica) has not fully arrived yet\(objectsNote); it is read on a later sync"
            )
        }
        for file in unreadable {
            waiting.append(
                "\(displayURL): .docsync/\(file) is incomplete (still being copied?); it is read on a later sync")
        }
        if let tip = cursor?.tip, let header = files.header(tip) { candidates.append(header) }
        var seen: [String: Int] = [:]
        for replica in Set(replicas).union(known.keys) {
            var seq = known[replica] ?? 0
            // An upgrade that died before its commit point left a root that never counts:
            // passed over, or every read would open it again.
            while let id = canonical[replica]?[seq + 1], isComplete(id) || isDeadRoot(id) { seq += 1 }
            if seq > 0 { seen[replica] = seq }
        }
        return Scan(tip: DriveHistory.tip(candidates), seen: seen, waiting: waiting, duplicateCopies: duplicates)
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

    private func changes(
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
                return RemoteChanges(
                    folding: checked(entries, refused: &refused), cursor: next.text, snapshot: isSnapshot,
                    warnings: refused, objects: objects)
            }
            // This tree's last push lost a fork (another replica pushed at the same time
            // without seeing it): go back to the last commit both share; the engine sends
            // again what is not on the chain, merged with what is.
            let common = DriveHistory.commonAncestor(fromTip, tip.commit, in: files)
            let commonHeight = common.flatMap { files.header($0)?.height } ?? 0
            guard let commonState = DriveHistory.state(at: common, in: files),
                let (entries, isSnapshot) = common.map({
                    DriveHistory.changes(from: ($0, commonHeight), to: tip.commit, in: files)
                })
                    ?? DriveHistory.state(at: tip.commit, in: files).map({ ($0, false) })
            else { throw damaged }
            let fromCommon = common.map { ($0, commonHeight) }
            guard let ours = DriveHistory.entries(from: fromCommon, to: fromTip, in: files),
                let theirs = DriveHistory.entries(from: fromCommon, to: tip.commit, in: files)
            else { throw damaged }
            var changes = RemoteChanges(
                folding: checked(entries, refused: &refused), cursor: next.text, snapshot: isSnapshot,
                warnings: refused, objects: objects)
            var versions: [String: DocVersion] = [:]
            let authored = authoredEntries(files: files)
            let theirState = DriveHistory.latest(commonState + theirs)
            let theirLatest = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
            let bases = forkMergeBases(format: format)
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
                if other.changesetId == held { return other.version.map { ($0, nil) } }
                switch bases.base(of: refId, held, other.changesetId) {
                case .version(let entry)?: return entry.version.map { ($0, nil) }
                case .merged(let entry, let bytes)?:
                    guard let path = entry.path else { return nil }
                    let version = DocVersion(
                        refId: refId, changesetId: entry.changesetId, hash: ContentHash.of(bytes), path: path)
                    return (version, bytes)
                case nil: return nil
                }
            }
            rewound.explanation =
                "took a push another replica made at the same time as this tree's last one (both made on "
                + "\(common.map { "commit \($0)" } ?? "the empty remote")); this tree's push is merged again on top of it"
            changes.rewound = rewound
            return changes
        }
        guard let state = DriveHistory.state(at: tip.commit, in: files) else { throw damaged }
        return RemoteChanges(
            folding: checked(state, refused: &refused), cursor: next.text, snapshot: snapshot, warnings: refused,
            objects: objects)
    }

    /// The merge bases of a fork, built on the first question (see ForkMergeBase).
    private func forkMergeBases(format: Format) -> ForkMergeBases {
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
    private func exactBases(mine: [RemoteEntry], theirs: [String: RemoteEntry], bases: ForkMergeBases)
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
    static func namesParents(_ entry: RemoteEntry) -> Bool {
        entry.conflict == nil && entry.purgedDeletion != true && !entry.deleted && entry.parents != nil
    }

    /// For a document both chains changed where the chains hold no version in common,
    /// the latest version both of their versions descend from (VersionAncestry), read
    /// from every commit file: without it the two were merged with no base at all, and
    /// every field that differed collided.
    private func betterBases(
        _ base: inout [String: RemoteEntry], ours: [RemoteEntry], theirState: [RemoteEntry], format: Format
    ) {
        let mine = DriveHistory.latest(ours.filter { $0.conflict == nil && $0.purgedDeletion != true })
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
    private func authoredEntries(files: DriveCommitFiles) -> [RemoteEntry] {
        guard let me = localReplica, DriveLayout.isPlainName(me) else { return [] }
        var out: [RemoteEntry] = []
        for name in ((try? FileSystem.listDirectory(layout.commits(me))) ?? []).sorted()
        where DriveLayout.commitName(name) != nil {
            if let commit = files.load(layout.commits(me) + "/" + name), commit.header.replica == me {
                out += commit.entries
            }
        }
        return out
    }

    /// For each document this replica's losing chain changed and the winning chain still
    /// holds, the base that replays only this replica's own edits (see ForkRebase), with
    /// its bytes. Documents where none can be made keep the base found before.
    private func replayBases(
        commonState: [RemoteEntry], losing: [DriveCommit], theirState: [RemoteEntry], me: String,
        authoredEntries: [RemoteEntry]
    ) -> [String: (version: DocVersion, bytes: [UInt8])] {
        let theirs = Dictionary(theirState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        var authored: [String: [RemoteEntry]] = [:]
        for entry in authoredEntries where entry.conflict == nil && entry.purgedDeletion != true {
            authored[entry.refId, default: []].append(entry)
        }
        var current: [String: RemoteEntry] = [:]
        for entry in commonState where entry.conflict == nil && entry.purgedDeletion != true {
            current[entry.refId] = entry
        }
        // Per document, its versions on the losing chain, oldest first, each with the
        // version on the chain below it.
        var chains: [String: [(entry: RemoteEntry, madeOn: RemoteEntry?)]] = [:]
        for commit in losing {
            for entry in commit.entries where entry.conflict == nil && entry.purgedDeletion != true {
                chains[entry.refId, default: []].append((entry, current[entry.refId]))
                current[entry.refId] = entry
            }
        }
        func bytes(_ entry: RemoteEntry?) -> [UInt8]? {
            guard let entry, !entry.deleted, let hash = entry.hash else { return nil }
            return try? objects.get(hash)
        }
        let atFork = Dictionary(commonState.map { ($0.refId, $0) }, uniquingKeysWith: { $1 })
        var out: [String: (version: DocVersion, bytes: [UInt8])] = [:]
        for (refId, chain) in chains {
            guard let winning = theirs[refId], !winning.deleted, let last = chain.last?.entry, !last.deleted,
                let lastPath = last.path
            else { continue }
            if !chain.contains(where: { $0.entry.replica == me }) {
                // Nothing of this replica's own to replay: where the winning chain changed
                // the document, its version is taken as it is (the others replay theirs).
                if winning.changesetId != atFork[refId]?.changesetId, let version = last.version,
                    let content = bytes(last)
                {
                    out[refId] = (version, content)
                }
                continue
            }
            var versions: [(replica: String, bytes: [UInt8], madeOn: [UInt8]?)] = []
            for (entry, madeOn) in chain {
                guard let content = bytes(entry) else {
                    versions = []
                    break
                }
                versions.append((entry.replica, content, bytes(madeOn)))
            }
            let held = (chain.map(\.entry) + (authored[refId] ?? [])).compactMap(bytes)
            guard versions.count == chain.count,
                let base = ForkRebase.base(chain: versions, me: me, winning: bytes(winning), held: held)
            else { continue }
            // The base names the version the replica's first own change was made on (it
            // never leaves this tree: it is only what the merge is measured from).
            let from = chain.first { $0.entry.replica == me }?.madeOn ?? last
            out[refId] = (
                DocVersion(
                    refId: refId, changesetId: from.changesetId, hash: ContentHash.of(base), path: from.path ?? lastPath
                ), base
            )
        }
        return out
    }

    /// The entries that can be taken; the others are reported and left out.
    private func checked(_ entries: [RemoteEntry], refused: inout [String]) -> [RemoteEntry] {
        entries.filter { entry in
            guard let problem = DirectoryRemote.problem(of: entry) else { return true }
            refused.append("\(displayURL): refused \(problem); not pulled")
            return false
        }
    }

    /// Removes sync-service copies of commit files that hold a commit already read
    /// under its own name: nothing in them is lost.
    private func tidy(_ copies: [String]) {
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

    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursorText: String?, replica: ReplicaInfo
    ) throws -> String {
        let format = try format()
        let (expected, _) = try parseCursor(cursorText, format: format)
        guard DriveLayout.isPlainName(replica.replicaId) else {
            throw RemoteError.rejected(
                url: displayURL, reason: "replica id \(replica.replicaId.debugDescription) cannot name a folder")
        }
        let lock = try DriveLocalLock.acquire(layout.localLock, waitSeconds: lockWaitSeconds, url: displayURL)
        defer { lock.release() }
        removeFormat1Leftovers()
        let files = DriveCommitFiles(layout: layout)
        let now = try scan(from: expected, format: format, files: files)
        // Compare and swap against everything that has arrived here: a push never lands
        // on a state it has not read. (A push on another machine that has not arrived
        // yet is a fork; the reader that sees both resolves it, see DriveHistory.)
        guard now.tip?.commit == expected?.tip, now.seen == expected?.seen ?? [:] else { throw RemoteError.moved }
        let seq = try nextSeq(replica.replicaId, after: expected?.seen[replica.replicaId] ?? 0)
        let time = FileSystem.currentTimeNanos / 1_000_000
        for write in writes {
            if let new = write.new, !objects.contains(new.hash), let content = try write.content() {
                try objects.put(content, hash: new.hash)
            }
        }
        for shared in conflicts {
            if let bytes = shared.bytes { try objects.put(bytes) }
        }
        try objects.seal()
        // The commit's lines are encoded as they are made, not kept as entries first: a
        // first push of 100,000 documents held both (a sixth of its peak memory).
        let header = DriveCommit.Header(
            commit: DriveCommit.makeId(replica: replica.replicaId, seq: seq), replica: replica.replicaId, seq: seq,
            parent: expected?.tip, height: (expected?.height ?? 0) + 1, time: time,
            entries: writes.count + conflicts.count)
        var lines: [UInt8] = []
        for write in writes {
            if let new = write.new {
                var entry = RemoteEntry(
                    refId: write.refId, changesetId: new.changesetId, hash: new.hash, path: new.path,
                    deleted: false, replica: replica.replicaId, time: time)
                entry.movedAt = write.movedAt
                entry.parents = write.parents
                lines += ChecksummedLines.encode(try DirectoryRemote.feedJSON(entry)).utf8
            } else {
                var deletion = RemoteEntry(
                    refId: write.refId, changesetId: write.deletedChangesetId ?? write.previous?.changesetId ?? "",
                    hash: write.previous?.hash, path: write.previous?.path, deleted: true, replica: replica.replicaId,
                    time: time)
                deletion.parents = write.parents
                lines += ChecksummedLines.encode(try DirectoryRemote.feedJSON(deletion)).utf8
            }
        }
        for shared in conflicts {
            let entry = RemoteEntry(
                refId: RemoteEntry.conflictKey(shared.record), changesetId: shared.record.changesetId,
                hash: shared.bytes.map(ContentHash.of),
                path: nil, deleted: false, replica: replica.replicaId, time: time, conflict: shared.record)
            lines += ChecksummedLines.encode(try DirectoryRemote.feedJSON(entry)).utf8
        }
        // The view before the commit: a push killed after its commit leaves a view that
        // matches it, and one killed before is pushed again by the retry, which writes the
        // same view. (Killed before, and the document moved again before the retry: its
        // uncommitted copy stays at the old path, in the view only.)
        writeView(writes)
        try CrashPoint.hit("remote.after-documents")
        let committed = try writeCommit(header: header, lines: lines)
        try CrashPoint.hit("remote.after-feed")
        var next = DriveCursor(
            remoteId: format.remoteId, tip: committed.commit, height: committed.height, seen: expected?.seen ?? [:])
        if (next.seen[replica.replicaId] ?? 0) == seq - 1 { next.seen[replica.replicaId] = seq }
        try? writeInfo(replica, seen: next.text)
        return next.text
    }

    /// One past the highest number among this replica's commit files here (or the one
    /// its cursor saw, if higher: its own files went back, and a number must not repeat
    /// for another commit on a machine that still has the old file).
    func nextSeq(_ replica: String, after seen: Int) throws -> Int {
        let names = (try? FileSystem.listDirectory(layout.commits(replica))) ?? []
        return max(seen, names.compactMap { DriveLayout.commitName($0)?.seq }.max() ?? 0) + 1
    }

    /// Writes a commit file: objects are already in place and flushed, so the file is
    /// the commit point. Temporary name and rename, so a sync service never copies it
    /// half-written (and if one did, the reader would see a torn file and wait).
    @discardableResult
    func writeCommit(_ commit: DriveCommit) throws -> DriveCommit.Header {
        try writeCommit(header: commit.header, lines: try commit.encodedEntries())
    }

    /// Writes a commit file from its header and its entries' encoded lines.
    @discardableResult
    func writeCommit(header: DriveCommit.Header, lines: [UInt8]) throws -> DriveCommit.Header {
        FileSystem.syncFilesystem(containing: layout.objects)
        try FileSystem.createDirectories(layout.commits(header.replica))
        let path = layout.commitFile(header.replica, seq: header.seq)
        // Never over another commit: a file under this number that this machine has not
        // read (it arrived meanwhile) keeps its name.
        guard !FileSystem.exists(path) else { throw RemoteError.moved }
        let first = Array(ChecksummedLines.encode(try DirectoryRemote.json(header)).utf8)
        try FileSystem.writeAtomically(path) { fd in
            try FileSystem.writeAll(fd, first, path: path)
            try FileSystem.writeAll(fd, lines, path: path)
        }
        return header
    }

    /// The readable copies at the documents' paths: a view for people, never read back. A file there that is not a version docsync has is kept under
    /// `.docsync/displaced/` before it is replaced or removed, and a sync service's
    /// conflict copy of a document is removed once its bytes are a version in objects/.
    private func writeView(_ writes: [RemoteWrite]) {
        let io = SafeTreeIO(root: root)
        var folders = Set<String>()
        for write in writes {
            guard let previous = write.previous, write.new?.path != previous.path else { continue }
            folders.insert((previous.path as NSString).deletingLastPathComponent)
            guard let bytes = try? io.readIfPresent(previous.path) else { continue }
            if !objects.contains(ContentHash.of(bytes)) { try? keepDisplaced(bytes, refId: previous.refId) }
            try? io.remove(previous.path)
        }
        for (done, write) in writes.enumerated() {
            defer { writeProgress?(write, done + 1, writes.count) }
            guard let new = write.new, let content = try? write.content() else { continue }
            folders.insert((new.path as NSString).deletingLastPathComponent)
            if let existing = try? io.readIfPresent(new.path), !objects.contains(ContentHash.of(existing)) {
                try? keepDisplaced(existing, refId: write.refId)
            }
            try? io.write(new.path, content, durable: false)
        }
        for folder in folders.sorted() { tidyView(folder, io: io) }
    }

    private func tidyView(_ folder: String, io: SafeTreeIO) {
        guard let (absolute, names) = FolderRemoteFiles.documentFolder(folder, root: root) else { return }
        for name in names {
            if name.hasPrefix(".docsync-tmp-") {
                unlink(absolute + "/" + name)
                continue
            }
            guard SyncServiceConflictName.original(of: name) != nil, name.hasSuffix(".json") else { continue }
            let relative = folder.isEmpty ? name : folder + "/" + name
            if let bytes = try? io.readIfPresent(relative), objects.contains(ContentHash.of(bytes)) {
                try? io.remove(relative)
            }
        }
    }

    func keepDisplaced(_ bytes: [UInt8], refId: String) throws {
        try FolderRemoteFiles.keepDisplaced(bytes, refId: refId, meta: layout.meta)
    }

    // MARK: Replica records

    struct Info: Codable {
        var replicaId: String
        var name: String
        var seen: String
        var time: Int64
        var version: String? = nil
        /// Replicas this one was told to forget (`docsync replicas forget`), with when:
        /// each replica writes only its own record, so forgetting is said here.
        var forgets: [String: Int64]? = nil
    }

    /// A replica's record: the newest of `info.json` and any copies a sync service made
    /// of it (`info (conflicted copy).json`: a mesh of services can make one even though
    /// only the replica writes the file), with the `forgets` of all of them.
    func readInfo(_ replica: String) -> Info? {
        var newest: Info?
        var forgets: [String: Int64] = [:]
        for path in infoFiles(replica) {
            guard let bytes = try? FileSystem.readFile(path),
                let info = try? JSONDecoder().decode(Info.self, from: Data(bytes))
            else { continue }
            for (id, time) in info.forgets ?? [:] { forgets[id] = max(forgets[id] ?? 0, time) }
            if newest.map({ info.time > $0.time }) ?? true { newest = info }
        }
        if !forgets.isEmpty { newest?.forgets = forgets }
        return newest
    }

    /// `info.json` and the service copies of it in a replica's folder.
    func infoFiles(_ replica: String) -> [String] {
        let folder = layout.replicaFolder(replica)
        let names = (try? FileSystem.listDirectory(folder)) ?? []
        return names.filter { $0 == "info.json" || SyncServiceConflictName.original(of: $0) == "info.json" }.sorted()
            .map { folder + "/" + $0 }
    }

    func writeInfo(_ replica: ReplicaInfo, seen cursor: String, forgetting: String? = nil) throws {
        let now = FileSystem.currentTimeNanos / 1_000_000
        let old = readInfo(replica.replicaId)
        let copies = infoFiles(replica.replicaId).filter { !$0.hasSuffix("/info.json") }
        // A replica someone forgot since its record was written is known again as soon as
        // it syncs (even with nothing new), as in format 1, where forgetting deletes the record.
        let forgotten =
            old.map { old in
                infos(includingForgotten: true).contains { ($0.forgets?[replica.replicaId] ?? 0) >= old.time }
            } ?? false
        if forgetting == nil, copies.isEmpty, !forgotten, let old, old.seen == cursor, old.name == replica.name,
            old.version == replica.version,
            now - old.time < DirectoryRemote.replicaRecordRefreshMillis
        {
            return
        }
        // The copies a service made are read (their `forgets` kept) and then tidied: the
        // folder is this replica's own.
        defer { for copy in copies { try? FileSystem.removeFile(copy) } }
        var info = Info(
            replicaId: replica.replicaId, name: replica.name, seen: cursor, time: now, version: replica.version,
            forgets: old?.forgets)
        if forgetting != replica.replicaId { info.forgets?[replica.replicaId] = nil }
        if let forgetting {
            info.forgets = (info.forgets ?? [:]).merging([forgetting: now]) { $1 }
            // Forgetting itself: the record must read as older than the forgetting.
            if forgetting == replica.replicaId { info.time = now - 1 }
        }
        try FileSystem.createDirectories(layout.replicaFolder(replica.replicaId))
        try FileSystem.writeAtomically(
            layout.info(replica.replicaId), Array(try DirectoryRemote.json(info).utf8) + [10])
    }

    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        _ = try format()
        guard DriveLayout.isPlainName(replica.replicaId) else { return }
        try writeInfo(replica, seen: cursor)
    }

    /// Every replica record here, without those a replica was told to forget after the
    /// record was written. Records of format 1 (`replicas/<id>.json`) count too: a
    /// replica that has not synced since the upgrade is still known.
    func infos(includingForgotten: Bool = false) -> [Info] {
        let names = (try? FileSystem.listDirectory(layout.replicas)) ?? []
        var records: [Info] = []
        for name in names.sorted() {
            if DriveLayout.isPlainName(name), let info = readInfo(name) {
                records.append(info)
            } else if name.hasSuffix(".json"), let bytes = try? FileSystem.readFile(layout.replicas + "/" + name),
                let old = try? JSONDecoder().decode(DirectoryRemote.ReplicaRecord.self, from: Data(bytes)),
                !FileSystem.isDirectory(layout.replicaFolder(old.replicaId))
            {
                records.append(
                    Info(replicaId: old.replicaId, name: old.name, seen: old.seen, time: old.time, version: old.version)
                )
            }
        }
        if includingForgotten { return records }
        var forgotten: [String: Int64] = [:]
        for info in records { for (id, time) in info.forgets ?? [:] { forgotten[id] = max(forgotten[id] ?? 0, time) } }
        return records.filter { info in forgotten[info.replicaId].map { info.time > $0 } ?? true }
    }

    public func knownReplicas() throws -> [KnownReplica] {
        _ = try format()
        return infos().map {
            KnownReplica(replicaId: $0.replicaId, name: $0.name, lastSync: $0.time, seen: $0.seen, version: $0.version)
        }
    }

    public func forgetReplica(_ replicaId: String, replica: ReplicaInfo) throws {
        _ = try format()
        let current = readInfo(replica.replicaId)?.seen ?? ""
        try writeInfo(replica, seen: current, forgetting: replicaId)
    }

    // MARK: History

    /// The tip's chain, newest first, with whole commits.
    func chain(files: DriveCommitFiles, format: Format) throws -> [DriveCommit] {
        let scan = try scan(from: nil, format: format, files: files)
        var out: [DriveCommit] = []
        var id = scan.tip?.commit
        while let current = id, let commit = files.commit(current) {
            out.append(commit)
            id = commit.header.parent
        }
        return out
    }

    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        let format = try format()
        let files = DriveCommitFiles(layout: layout)
        var versions: [RemoteVersionInfo] = []
        var seen = Set<String>()
        for commit in try chain(files: files, format: format) {
            for e in commit.entries.reversed()
            where e.refId == refId && seen.insert(e.changesetId + (e.deleted ? "-" : "")).inserted {
                versions.append(
                    RemoteVersionInfo(
                        id: commit.id, changesetId: e.changesetId, time: e.time, author: e.replica,
                        path: e.path, hash: e.hash, deleted: e.deleted))
            }
        }
        return versions
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        try FolderRemoteFiles.content(of: version, refId: refId, objects: objects, url: displayURL)
    }

    // MARK: Verify

    /// Checks what the remote's state needs: every commit on the tip's chain readable and
    /// every current version in objects/ with its hash. The readable view may lag on a
    /// drive (a copy not arrived yet, a push that died after its commit): not a problem.
    public func verify() -> [String] {
        var problems: [String] = []
        do {
            let format = try format()
            let files = DriveCommitFiles(layout: layout)
            let scan = try scan(from: nil, format: format, files: files)
            guard let tip = scan.tip else { return [] }
            guard let state = DriveHistory.state(at: tip.commit, in: files) else {
                return ["remote: a commit on the chain to \(tip.commit) cannot be read"]
            }
            var paths: [String: String] = [:]
            for e in state where e.conflict == nil && e.purgedDeletion != true && !e.deleted {
                if let problem = DirectoryRemote.problem(of: e) { problems.append("remote: \(problem)") }
                if let path = e.path {
                    if let other = paths[path] {
                        problems.append("remote: \(path) is claimed by both \(other) and \(e.refId)")
                    }
                    paths[path] = e.refId
                }
                do { _ = try read(e) } catch { problems.append("remote: " + error.localizedDescription) }
            }
        } catch {
            problems.append(error.localizedDescription)
        }
        return problems
    }
}
