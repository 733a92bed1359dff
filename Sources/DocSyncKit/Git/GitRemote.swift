import CLibGit2
import DocSyncJSON
import Foundation

/// A git repository as the remote: documents at their paths in the branch's tree,
/// tombstones under `.docsync/tombstones/`, one commit per push. The fetched history is
/// cached in a bare repository inside the working tree's `.docsync/git`. The cursor is
/// the commit the base reflects, so a pull diffs two trees and reads only what changed.
///
/// Commits made with plain git are first-class: a changed blob is a change even if its
/// changesetId was not updated, and a file without ids is adopted. Ids derived for such
/// files are deterministic (every replica derives the same), and the stamped version is
/// published back by the next push.
public final class GitRemote: Remote {
    public let url: GitURL
    public let branch: String
    public var displayURL: String { url.display }
    public var writeProgress: ((RemoteWrite, Int, Int) -> Void)?
    let repo: GitRepository
    let context: TransportContext
    let effectiveURL: String

    /// Content of versions docsync derived (stamped) during `changes`, by refId.
    private var derivedContent: [String: [UInt8]] = [:]
    /// Blob of each version `changes` returned, by refId.
    private var blobOf: [String: GitOID] = [:]

    static let gitReplica = "git0"
    static let tombstoneFolder = ".docsync/tombstones/"
    /// Shared conflict records: `<refId>/<changesetId>.meta.json` and the losing bytes
    /// beside it as `<changesetId>.json`.
    static let conflictFolder = ".docsync/conflicts/"
    /// When each document was last renamed, and by whom: `<refId>.json` holding
    /// `{"movedAt", "path", "refId", "replica"}`, written with the rename. A commit's time
    /// is when it was pushed; of two renames of one document the later *rename* wins.
    static let movedFolder = ".docsync/moved/"

    struct MovedRecord: Codable {
        var refId: String
        var path: String
        var movedAt: Int64
        var replica: String
    }

    static func conflictPaths(_ record: ConflictStore.Record) -> (meta: String, bytes: String) {
        let stem =
            conflictFolder + DocumentPath.fileName(forRefId: record.refId) + "/"
            + DocumentPath.fileName(forRefId: record.storeName)
        return (stem + ".meta.json", stem + ".json")
    }

    public init(url text: String, branch: String, cachePath: String, settings: GitTransportSettings) throws {
        guard let url = GitURL(text) else {
            throw RemoteError.rejected(url: text, reason: "not a URL docsync understands")
        }
        self.url = url
        self.branch = branch
        let resolved = url.resolved(with: SSHConfig(path: settings.home + "/.ssh/config"))
        effectiveURL = resolved.url
        context = TransportContext(
            settings: settings, url: GitURL(resolved.url) ?? url, identityFile: resolved.identityFile)
        repo = try GitRepository.openOrCreateBare(at: cachePath)
    }

    var trackingRef: String { "refs/remotes/origin/\(branch)" }

    // MARK: Errors

    /// Turns a libgit2 failure into what the user should hear: try later (75), or fix
    /// something (credentials, trust, URL, branch).
    func translate(_ error: GitError, during action: String) -> RemoteError {
        if error.code == GitError.certificate || context.trustProblem != nil {
            return .rejected(url: displayURL, reason: context.trustProblem ?? "certificate refused: \(error.message)")
        }
        if error.code == GitError.auth || error.code == GitError.user
            || error.message.lowercased().contains("authentication")
        {
            let tried =
                context.lastCredentialKind.isEmpty
                ? "no usable credentials found" : "tried \(context.lastCredentialKind)"
            let fix =
                url.scheme == .ssh
                ? "load a key into ssh-agent or set `docsync config remote.sshKey ~/.ssh/id_ed25519`"
                : "set DOCSYNC_GIT_TOKEN or configure a git credential helper"
            return .rejected(url: displayURL, reason: "authentication failed (\(tried)); \(fix)")
        }
        let lower = error.message.lowercased()
        if url.scheme == .file, !FileSystem.exists(FileSystem.absolute(url.path)) {
            return .rejected(
                url: displayURL,
                reason:
                    "no git repository there (the path does not exist); check the URL, or create one with `git init --bare \(url.path)`"
            )
        }
        // Why: libgit2 reports ENOSPC as an OS-class error, which counted as "network":
        // a full disk exited 75, and cron stays silent on 75 while the disk stays full.
        // Checked first: the message names a path, which may contain any of the words below.
        if lower.contains("no space left on device") || lower.contains("disk quota exceeded")
            || Self.isNearlyFull(repo.path)
        {
            let which = lower.contains("no space left on device") ? "" : "No space left on device for \(repo.path): "
            return .damaged(
                url: displayURL,
                reason:
                    "\(action) failed: \(error.message) (\(which)the disk is full: free some space and run again; local changes stay recorded)"
            )
        }
        // The HTTP status only as libgit2 words it. Why: a bare "404" matched a path that
        // merely contained those digits (a temporary folder's UUID) and blamed the URL.
        if lower.contains("could not find repository") || lower.contains("not found") && url.scheme != .file
            || lower.contains("does not appear to be a git repository")
            || lower.contains("repository not found") || lower.contains("status code: 404")
            || lower.contains("404 not found")
        {
            return .rejected(
                url: displayURL,
                reason:
                    "no git repository there (\(error.message)); check the URL, or create one with `git init --bare`")
        }
        if error.isNetwork || lower.contains("connect") || lower.contains("early eof")
            || lower.contains("unexpected") && lower.contains("socket")
        {
            return .unreachable(url: displayURL, reason: error.message)
        }
        return .damaged(url: displayURL, reason: "\(action) failed: \(error.message)")
    }

    /// Whether the file system holding `path` has (almost) no room left. Why: libgit2
    /// does not always pass ENOSPC on; an object write that failed for want of space later
    /// surfaced as "target OID for the reference doesn't exist", which blamed the remote.
    static func isNearlyFull(_ path: String) -> Bool {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return false }
        return UInt64(fs.f_bavail) * UInt64(fs.f_frsize) < 256 * 1024
    }

    /// Fetches the branch; nil when the repository has no such branch yet (a new,
    /// empty repository is a valid remote).
    func fetchHead() throws -> GitOID? {
        let branches: [String]
        do {
            context.trustProblem = nil
            context.credentialAttempts = 0
            branches = try TrustStore.with(context.settings, url: context.url, scratch: repo.path) {
                try GitTransport.fetch(repo, url: effectiveURL, branch: branch, context: context)
            }
        } catch let error as GitError {
            throw translate(error, during: "fetch")
        }
        let head = try repo.referenceTarget(trackingRef)
        if head == nil, !branches.isEmpty {
            throw RemoteError.rejected(
                url: displayURL,
                reason:
                    "branch '\(branch)' does not exist there (branches: \(branches.sorted().joined(separator: ", "))); set `docsync config remote.branch NAME`"
            )
        }
        return head
    }

    static let cursorPrefix = "git:"

    func commitOf(cursor: String?) throws -> GitOID? {
        guard let cursor else { return nil }
        guard cursor.hasPrefix(Self.cursorPrefix) else {
            throw RemoteError.damaged(
                url: displayURL, reason: "this tree last synced with a different kind of remote (cursor \(cursor))")
        }
        let id = String(cursor.dropFirst(Self.cursorPrefix.count))
        return id.isEmpty ? nil : id
    }

    // MARK: Reading

    public func changes(since cursor: String?) throws -> RemoteChanges {
        var from = try commitOf(cursor: cursor)
        let head = try fetchHead()
        if head == from { return RemoteChanges(entries: [], cursor: Self.cursorPrefix + (head ?? "")) }
        guard let head else {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "branch '\(branch)' disappeared from the remote; docsync will not read that as \"everything was deleted\""
            )
        }
        // The branch no longer reaches the commit this tree synced with: diffing from it
        // would read everything only that commit had as deleted. The changes are read
        // from the last commit both histories share instead, and the engine sends the
        // rest again.
        var rewound: RewoundHistory? = nil
        if let lost = from, (try? repo.commit(lost)) != nil, try !repo.isAncestor(lost, of: head) {
            let common = try repo.mergeBase(lost, head)
            rewound = try rewoundHistory(lost: lost, common: common)
            from = common
        }
        let headCommit = try repo.commit(head)
        let fromTree: GitOID?
        do { fromTree = try from.map { try repo.commit($0).tree } } catch {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "this tree's last synced commit \(from ?? "") is no longer in the fetched history (history rewritten?)"
            )
        }
        var warnings: [String] = []
        let diff = try repo.diff(from: fromTree, to: headCommit.tree)
        // Sized once: grown by doubling, a clone's table of 100,000 documents held its old
        // and new storage at once, at the peak of the clone.
        var puts: [String: (Int, RemoteEntry)] = [:]
        puts.reserveCapacity(diff.count)
        var deletes: [String: (Int, RemoteEntry)] = [:]
        let introductions = try plainGitIntroductions(of: diff, from: from, head: head)
        var order = 0
        var conflictMeta: [String: ConflictStore.Record] = [:]
        var conflictBytes: [String: GitOID] = [:]
        var moved: [String: MovedRecord] = [:]
        for change in diff {
            order += 1
            if let path = change.newPath, let blob = change.newBlob, path.hasPrefix(Self.movedFolder) {
                if let bytes = try? repo.blob(blob),
                    let record = try? JSONDecoder().decode(MovedRecord.self, from: Data(bytes))
                {
                    moved[record.refId] = record
                }
                continue
            }
            if let path = change.newPath, let blob = change.newBlob, path.hasPrefix(Self.conflictFolder) {
                if path.hasSuffix(".meta.json") {
                    if let bytes = try? repo.blob(blob),
                        let record = try? JSONDecoder().decode(ConflictStore.Record.self, from: Data(bytes)),
                        RefID.isAcceptable(record.refId), RefID.isAcceptable(record.changesetId),
                        Self.conflictPaths(record).meta == path
                    {
                        conflictMeta[String(path.dropLast(".meta.json".count))] = record
                    }
                } else if path.hasSuffix(".json") {
                    conflictBytes[String(path.dropLast(".json".count))] = blob
                }
                continue
            }
            if let name = change.undecodableName, name.hasSuffix(".json") {
                warnings.append(
                    "\(displayURL): \(name): the file name is not valid UTF-8; not pulled (rename it on the remote)")
            }
            var refIdNowAtOldPath: String?
            if let path = change.newPath, let blob = change.newBlob {
                if path.hasPrefix(Self.tombstoneFolder) {
                    if let entry = tombstone(blob) { deletes[entry.refId] = (order, entry) }
                } else if Self.isDocumentPath(path) {
                    let oldBytes = try change.oldBlob.map { try repo.blob($0) }
                    switch try entry(
                        path: path, blob: blob, previous: oldBytes, commitTime: headCommit.time,
                        introduction: introductions.found[path + "\u{0}" + blob], historyRead: introductions.complete)
                    {
                    case .success(let entry):
                        puts[entry.refId] = (order, entry)
                        if change.oldPath == path { refIdNowAtOldPath = entry.refId }
                    case .failure(let problem): warnings.append(problem.message)
                    }
                } else if path.hasSuffix(".json"), !path.hasPrefix(".docsync/"),
                    let problem = DocumentPath.problem(path)
                {
                    // Why: such a file (a name over 255 bytes, say) was skipped silently,
                    // so nobody learned it was not pulled.
                    warnings.append("\(displayURL): \(path): \(problem); not pulled")
                }
            }
            // Removed here (deleted, or moved: the put of the same refId wins), or replaced
            // by another document at the same path: once gc purged its tombstone, nothing
            // else says that one went.
            if let path = change.oldPath, let blob = change.oldBlob, Self.isDocumentPath(path),
                change.newPath != path || refIdNowAtOldPath != nil
            {
                let bytes = try repo.blob(blob)
                if let scanned = try? JSONScanner.scanDocument(bytes),
                    let refId = scanned.member(named: "refId")?.stringValue, deletes[refId] == nil,
                    refId != refIdNowAtOldPath
                {
                    let cs = scanned.member(named: "changesetId")?.stringValue ?? ""
                    deletes[refId] = (
                        order,
                        RemoteEntry(
                            refId: refId, changesetId: cs, hash: ContentHash.of(bytes), path: path, deleted: true,
                            replica: Self.gitReplica, time: headCommit.time * 1000)
                    )
                }
            }
        }
        // A document whose file went without a tombstone (purged by gc, or deleted with
        // plain git): a purge commit may still say who deleted it.
        let untold = Set(deletes.filter { puts[$0.key] == nil && $0.value.1.replica == Self.gitReplica }.keys)
        if !untold.isEmpty {
            for (refId, deletion) in purgedDeletions(of: untold, from: from, head: head) {
                deletes[refId]?.1.replica = deletion.replica
                // The version the tombstone said was deleted, not the file this diff saw go
                // (the puller's older version, when it never had the deleted one).
                if !deletion.changesetId.isEmpty, let hash = deletion.hash {
                    deletes[refId]?.1.changesetId = deletion.changesetId
                    deletes[refId]?.1.hash = hash
                }
            }
        }
        for (refId, record) in moved where puts[refId]?.1.path == record.path {
            puts[refId]?.1.movedAt = record.movedAt
            puts[refId]?.1.replica = record.replica
        }
        // In the remote's order, a put winning over a delete of the same refId. Why not a
        // merged copy of `puts`: with any deletion in it, that copied the whole table.
        var ordered = Array(puts.values)
        ordered.reserveCapacity(puts.count + deletes.count)
        for (refId, value) in deletes where puts[refId] == nil { ordered.append(value) }
        puts = [:]
        ordered.sort { $0.0 < $1.0 }
        let entries = ordered.map(\.1)
        let conflicts = conflictMeta.sorted { $0.key < $1.key }.map { stem, record in
            SharedConflict(record: record, bytes: conflictBytes[stem].flatMap { try? repo.blob($0) })
        }
        var changes = RemoteChanges(
            entries: entries, cursor: Self.cursorPrefix + head, warnings: warnings, conflicts: conflicts)
        changes.rewound = rewound
        return changes
    }

    /// The documents at `common` (with docsync's ids; a file plain git left without them
    /// is adopted through the diff like any other).
    private func rewoundHistory(lost: GitOID, common: GitOID?) throws -> RewoundHistory {
        var versions: [String: DocVersion] = [:]
        var contents: [String: [UInt8]] = [:]
        if let common {
            for file in try repo.files(inTree: try repo.commit(common).tree) where Self.isDocumentPath(file.path) {
                let bytes = try repo.blob(file.blob)
                guard let scanned = try? JSONScanner.scanDocument(bytes),
                    let refId = scanned.member(named: "refId")?.stringValue, RefID.isAcceptable(refId),
                    let changesetId = scanned.member(named: "changesetId")?.stringValue, ChangesetID(changesetId) != nil
                else { continue }
                let hash = ContentHash.of(bytes)
                versions[refId] = DocVersion(refId: refId, changesetId: changesetId, hash: hash, path: file.path)
                contents[hash] = bytes
            }
        }
        return RewoundHistory(
            lost: Self.cursorPrefix + lost, commonPosition: common.map { Self.cursorPrefix + $0 },
            common: versions, contents: contents)
    }

    static func isDocumentPath(_ path: String) -> Bool {
        path.hasSuffix(".json") && !path.hasPrefix(".docsync/") && DocumentPath.problem(path) == nil
    }

    func tombstone(_ blob: GitOID) -> RemoteEntry? {
        guard let bytes = try? repo.blob(blob) else { return nil }
        return try? JSONDecoder().decode(RemoteEntry.self, from: Data(bytes))
    }

    /// The remote version in a blob, with ids derived and stamped in if plain git left
    /// them out or left the changesetId unchanged across an edit.
    struct Unreadable: Error { var message: String }

    /// - Parameters:
    ///   - introduction: the commit not made by docsync that put the blob there, if one did.
    ///   - historyRead: whether the history since the cursor was read whole (so no
    ///     `introduction` means docsync made the version, with a fresh changesetId).
    private func entry(
        path: String, blob: GitOID, previous: [UInt8]?, commitTime: Int64,
        introduction: PlainGitIntroduction?, historyRead: Bool
    ) throws -> Result<RemoteEntry, Unreadable> {
        let bytes = try repo.blob(blob)
        let scanned: ScannedDocument
        do { scanned = try JSONScanner.scanDocument(bytes) } catch {
            return .failure(
                Unreadable(
                    message:
                        "\(displayURL): \(path):\(error.line):\(error.column): \(error.reason); not pulled until fixed on the remote"
                ))
        }
        var refId = scanned.member(named: "refId")?.stringValue
        var changesetId = scanned.member(named: "changesetId")?.stringValue
        let previousId = previous.flatMap { try? JSONScanner.scanDocument($0) }?.member(named: "changesetId")?
            .stringValue
        var needsStamp = false
        if refId.map(RefID.isAcceptable) != true {
            // Deterministic: every replica adopting this file derives the same id.
            let digest = ContentHash.of(path + "\n" + blob)
            let h = Array(digest)
            refId =
                "git-" + String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-"
                + String(h[16..<20]) + "-" + String(h[20..<32])
            needsStamp = true
        }
        // Whether the version carries the id of the one it replaced: judged from the commit
        // that made it (the same on every replica), not from this replica's cursor.
        let keepsReplacedId: Bool
        if let introduction {
            keepsReplacedId = changesetId != nil && changesetId == introduction.replacedChangesetId
        } else {
            keepsReplacedId = !historyRead && previous != nil && changesetId == previousId
        }
        if changesetId.flatMap(ChangesetID.init) == nil || keepsReplacedId {
            changesetId = Self.derivedChangesetId(
                blob: blob, commitTime: introduction?.time ?? commitTime,
                replaced: introduction.map(\.replacedChangesetId) ?? previousId)
            needsStamp = true
        }
        var content = bytes
        if needsStamp {
            content = IdentityStamper.stamp(bytes, scanned: scanned, refId: refId, changesetId: changesetId)
            derivedContent[refId!] = content
        } else {
            derivedContent.removeValue(forKey: refId!)
        }
        blobOf[refId!] = blob
        return .success(
            RemoteEntry(
                refId: refId!, changesetId: changesetId!, hash: ContentHash.of(content), path: path, deleted: false,
                replica: Self.gitReplica, time: commitTime * 1000,
                publishedHash: needsStamp ? ContentHash.of(bytes) : nil))
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        if let derived = derivedContent[entry.refId], ContentHash.of(derived) == entry.hash { return derived }
        guard let blob = blobOf[entry.refId] else {
            throw RemoteError.damaged(url: displayURL, reason: "no content known for \(entry.path ?? entry.refId)")
        }
        let bytes = try repo.blob(blob)
        guard ContentHash.of(bytes) == entry.hash else {
            throw RemoteError.damaged(url: displayURL, reason: "\(entry.path ?? entry.refId) changed while reading")
        }
        return bytes
    }

    // MARK: Writing

    public func commit(
        _ writes: [RemoteWrite], conflicts: [SharedConflict], expecting cursor: String?, replica: ReplicaInfo
    ) throws -> String {
        let parent = try commitOf(cursor: cursor)
        let baseTree = try parent.map { try repo.commit($0).tree }
        // Removals first: a document may take over a path another one leaves in the same
        // push (deleted here, or moved away).
        var removals: [GitRepository.TreeChange] = []
        var changes: [GitRepository.TreeChange] = []
        var lines: [String] = []
        var counts: [String: Int] = [:]
        let time = FileSystem.currentTimeNanos / 1_000_000
        for write in writes {
            let tombstonePath = Self.tombstoneFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            let movedPath = Self.movedFolder + DocumentPath.fileName(forRefId: write.refId) + ".json"
            if let previous = write.previous, previous.path != write.new?.path { removals.append((previous.path, nil)) }
            if let movedAt = write.movedAt, let new = write.new {
                let bytes =
                    Array(
                        try DirectoryRemote.json(
                            MovedRecord(
                                refId: write.refId, path: new.path, movedAt: movedAt,
                                replica: replica.replicaId)
                        ).utf8) + [10]
                changes.append((movedPath, { bytes }))
            } else if write.new == nil {
                removals.append((movedPath, nil))
            }
            if let new = write.new {
                guard DocumentPath.isSafe(new.path) else {
                    throw RemoteError.unsafe(url: displayURL, reason: "path \(new.path)")
                }
                changes.append((new.path, { try write.content() ?? [] }))  // never nil: `new` is set
                removals.append((tombstonePath, nil))
                let kind =
                    write.previous == nil
                    ? "create"
                    : (write.previous?.path != new.path
                        ? (write.previous?.hash == new.hash ? "rename" : "move+update") : "update")
                counts[kind, default: 0] += 1
                lines.append(
                    "\(kind) \(new.path)"
                        + (write.previous.map { $0.path != new.path ? " (from \($0.path))" : "" } ?? ""))
            } else {
                let tombstone = RemoteEntry(
                    refId: write.refId, changesetId: write.deletedChangesetId ?? write.previous?.changesetId ?? "",
                    hash: write.previous?.hash, path: write.previous?.path, deleted: true, replica: replica.replicaId,
                    time: time)
                let bytes = Array(try DirectoryRemote.json(tombstone).utf8) + [10]
                changes.append((tombstonePath, { bytes }))
                counts["delete", default: 0] += 1
                lines.append("delete \(write.previous?.path ?? write.refId)")
            }
        }
        for shared in conflicts {
            let paths = Self.conflictPaths(shared.record)
            let meta = Array(try DirectoryRemote.json(shared.record).utf8) + [10]
            changes.append((paths.meta, { meta }))
            if let bytes = shared.bytes { changes.append((paths.bytes, { bytes })) }
            let what = shared.record.isOpen ? "conflict" : "resolve"
            counts[what, default: 0] += 1
            lines.append("\(what) \(shared.record.path) (\(shared.record.changesetId))")
        }
        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let message =
            "docsync: \(summary) from \(replica.name)\n\n" + lines.joined(separator: "\n") + "\n\n"
            + Self.trailers(of: replica)
        let commit = try publish(
            baseTree: baseTree, changes: removals + changes, parent: parent, message: message, replica: replica)
        // One commit lands all of them at once.
        for (written, write) in writes.enumerated() { writeProgress?(write, written + 1, writes.count) }
        try CrashPoint.hit("remote.after-feed")
        try repo.setReference(trackingRef, to: commit, message: "docsync push")
        return Self.cursorPrefix + commit
    }

    /// Makes one commit on `parent` and pushes it to the branch. A rejected
    /// (non-fast-forward) push throws `RemoteError.moved`: the caller fetches and retries.
    func publish(
        baseTree: GitOID?, changes: [GitRepository.TreeChange], parent: GitOID?, message: String,
        replica: ReplicaInfo
    ) throws -> GitOID {
        do {
            let commit = try repo.makeCommit(
                baseTree: baseTree, changes: changes, parent: parent, message: message,
                author: "docsync (\(replica.name))", email: "\(replica.replicaId)@docsync.invalid")
            if url.scheme == .file {
                // Compare-and-swap on the branch (see GitLocalPush): the local transport
                // would overwrite a branch another replica moved meanwhile.
                try GitLocalPush.push(
                    from: repo, commit: commit, toRepositoryAt: FileSystem.absolute(url.path), branch: branch,
                    expected: parent)
                return commit
            }
            let outgoing = "refs/docsync/outgoing"
            try repo.setReference(outgoing, to: commit, message: "docsync push")
            context.trustProblem = nil
            context.credentialAttempts = 0
            try TrustStore.with(context.settings, url: context.url, scratch: repo.path) {
                try GitTransport.push(repo, url: effectiveURL, localRef: outgoing, branch: branch, context: context)
            }
            return commit
        } catch let error as GitError {
            if error.code == GitError.nonFastForward, Self.isLockRejection(error.message) {
                try handleLockedRef(error.message)
            }
            if error.code == GitError.nonFastForward || error.message.contains("rejected")
                || error.message.contains("non-fast-forward")
                || error.message.contains("fetch first")
            {
                throw RemoteError.moved
            }
            throw translate(error, during: "push")
        }
    }

    public func noteReplica(_ replica: ReplicaInfo, seen cursor: String) throws {
        // Recorded in commit messages; a no-op sync must not create commits.
    }

    public func verify() -> [String] {
        var problems: [String] = []
        do {
            guard let head = try fetchHead() else { return [] }
            var seen: [String: String] = [:]
            for file in try repo.files(inTree: try repo.commit(head).tree) where Self.isDocumentPath(file.path) {
                let bytes = try repo.blob(file.blob)
                guard let scanned = try? JSONScanner.scanDocument(bytes) else {
                    problems.append("remote: \(file.path) is not valid JSON")
                    continue
                }
                guard let refId = scanned.member(named: "refId")?.stringValue else { continue }
                if let other = seen[refId] { problems.append("remote: \(file.path) and \(other) share refId \(refId)") }
                seen[refId] = file.path
            }
        } catch {
            problems.append((error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
        return problems
    }

    /// Every version of the document `refId` in the branch's history (first-parent),
    /// newest first: the commits that changed its content or path, or deleted it.
    public func history(of refId: String, path: String?) throws -> [RemoteVersionInfo] {
        _ = try? fetchHead()
        guard var current = try repo.referenceTarget(trackingRef) else { return [] }
        // The document's file in each commit, newest first.
        var states: [(commit: GitRepository.CommitInfo, file: GitRepository.TreeFile?)] = []
        var lastPath = path
        for _ in 0..<1000 {
            let info = try repo.commit(current)
            let files = try repo.files(inTree: info.tree).filter { Self.isDocumentPath($0.path) }
            func holds(_ f: GitRepository.TreeFile) -> Bool {
                (try? JSONScanner.scanDocument(try repo.blob(f.blob)))?.member(named: "refId")?.stringValue == refId
            }
            let file = files.first { $0.path == lastPath && holds($0) } ?? files.first(where: holds)
            if let file { lastPath = file.path }
            states.append((info, file))
            guard let parent = info.parents.first else { break }
            current = parent
        }
        var versions: [RemoteVersionInfo] = []
        for (i, state) in states.enumerated() {
            let older = i + 1 < states.count ? states[i + 1].file : nil
            guard state.file?.blob != older?.blob || state.file?.path != older?.path else { continue }
            if let file = state.file {
                let bytes = try repo.blob(file.blob)
                let cs = (try? JSONScanner.scanDocument(bytes))?.member(named: "changesetId")?.stringValue ?? ""
                versions.append(
                    RemoteVersionInfo(
                        id: state.commit.id, changesetId: cs, time: state.commit.time * 1000,
                        author: state.commit.author,
                        path: file.path, hash: ContentHash.of(bytes), deleted: false))
            } else if older != nil {
                versions.append(
                    RemoteVersionInfo(
                        id: state.commit.id, changesetId: "", time: state.commit.time * 1000,
                        author: state.commit.author,
                        path: older?.path, hash: nil, deleted: true))
            }
        }
        return versions
    }

    public func content(of version: RemoteVersionInfo, refId: String) throws -> [UInt8] {
        guard !version.deleted, let path = version.path else {
            throw RemoteError.damaged(url: displayURL, reason: "version \(version.id) is a deletion")
        }
        let files = try repo.files(inTree: try repo.commit(version.id).tree)
        guard let file = files.first(where: { $0.path == path }) else {
            throw RemoteError.damaged(url: displayURL, reason: "\(path) is not in commit \(version.id)")
        }
        return try repo.blob(file.blob)
    }
}
