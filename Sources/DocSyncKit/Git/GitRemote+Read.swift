import CLibGit2
import DocSyncJSON
import Foundation

/// Reading a git remote: the changes between two commits, and one version's bytes.
extension GitRemote {
    // MARK: Reading

    public func changes(since cursor: String?) throws -> RemoteChanges {
        var from = try commitOf(cursor: cursor)
        let head = try fetchHead()
        if head == from {
            // Nothing new; documents skipped for their size are still said (or pulled, once they fit).
            var read = DiffReading(capacity: 0)
            revisitSkipped(into: &read, headTree: try head.map { try repo.commit($0).tree })
            return RemoteChanges(
                entries: Self.inRemoteOrder(&read), cursor: Self.cursorPrefix + (head ?? ""), warnings: read.warnings)
        }
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
        var read = try readDiff(from: from, to: head)
        withholdDeletions(in: &read)
        revisitSkipped(into: &read, headTree: try repo.commit(head).tree)
        tellPurgedDeleters(in: &read, from: from, head: head)
        for (refId, record) in read.moved where read.puts[refId]?.1.path == record.path {
            read.puts[refId]?.1.movedAt = record.movedAt
            read.puts[refId]?.1.replica = record.replica
        }
        let conflicts = read.conflictMeta.sorted { $0.key < $1.key }.map { stem, record in
            SharedConflict(record: record, bytes: read.conflictBytes[stem].flatMap { try? smallBlob($0) })
        }
        let warnings = read.warnings
        var changes = RemoteChanges(
            entries: Self.inRemoteOrder(&read), cursor: Self.cursorPrefix + head, warnings: warnings,
            conflicts: conflicts)
        changes.rewound = rewound
        changes.ownVersions = ownVersions(after: from, upTo: head)
        return changes
    }

    /// Reads the diff between the trees of `from` (nil: none) and `head`, change by change.
    private func readDiff(from: GitOID?, to head: GitOID) throws -> DiffReading {
        let headCommit = try repo.commit(head)
        let fromTree: GitOID?
        do { fromTree = try from.map { try repo.commit($0).tree } } catch {
            throw RemoteError.damaged(
                url: displayURL,
                reason:
                    "this tree's last synced commit \(from ?? "") is no longer in the fetched history (history rewritten?)"
            )
        }
        let diff = try repo.diff(from: fromTree, to: headCommit.tree)
        let introductions = try plainGitIntroductions(of: diff, from: from, head: head)
        var read = DiffReading(capacity: diff.count)
        for (index, change) in diff.enumerated() {
            try self.read(
                change, order: index + 1, into: &read, headTime: headCommit.time, introductions: introductions)
        }
        try settlePlainGitAdditions(in: &read, headTree: headCommit.tree)
        return read
    }

    /// A file removed without a tombstone is read as a deletion of the document it held;
    /// but where the same changes bring a document too large to read, that one may be it,
    /// moved (its refId is not known without reading it). Those deletions are not taken
    /// then: the documents stay, and arrive moved once the large one is pulled.
    private func withholdDeletions(in read: inout DiffReading) {
        guard !read.skipped.isEmpty else { return }
        for (refId, (_, entry)) in read.deletes where entry.replica == Self.gitReplica && read.puts[refId] == nil {
            read.deletes[refId] = nil
            read.warnings.append(
                "\(displayURL): \(entry.path ?? refId): removed on the remote without a tombstone, in the same changes "
                    + "as a document too large to read (\(read.skipped.map(\.path).sorted().joined(separator: ", "))); "
                    + "not taken as a deletion")
        }
    }

    /// A document whose file went without a tombstone (purged by gc, or deleted with
    /// plain git): a purge commit may still say who deleted it.
    private func tellPurgedDeleters(in read: inout DiffReading, from: GitOID?, head: GitOID) {
        let untold = Set(read.deletes.filter { read.puts[$0.key] == nil && $0.value.1.replica == Self.gitReplica }.keys)
        guard !untold.isEmpty else { return }
        for (refId, deletion) in purgedDeletions(of: untold, from: from, head: head) {
            read.deletes[refId]?.1.replica = deletion.replica
            // The version the tombstone said was deleted, not the file this diff saw go
            // (the puller's older version, when it never had the deleted one).
            if !deletion.changesetId.isEmpty, let hash = deletion.hash {
                read.deletes[refId]?.1.changesetId = deletion.changesetId
                read.deletes[refId]?.1.hash = hash
            }
        }
    }

    /// The entries in the remote's order, a put winning over a delete of the same refId;
    /// empties the reading's tables as it goes. Why not a merged copy of `puts`: with any
    /// deletion in it, that copied the whole table.
    static func inRemoteOrder(_ read: inout DiffReading) -> [RemoteEntry] {
        var ordered = Array(read.puts.values)
        ordered.reserveCapacity(read.puts.count + read.deletes.count)
        for (refId, value) in read.deletes where read.puts[refId] == nil { ordered.append(value) }
        read.puts = [:]
        read.deletes = [:]
        ordered.sort { $0.0 < $1.0 }
        return ordered.map(\.1)
    }

    /// How far back `ownVersions` looks.
    static let ownVersionsWalk = 1_000

    /// The versions this tree's own commits after `from` up to `head` hold, by refId (see
    /// `RemoteChanges.ownVersions`), along the first parents. Usually there are none: a
    /// push moves the cursor past its own commit unless it was killed first. At most
    /// `ownVersionsWalk` commits are read: a cursor reached only through a plain-git
    /// merge's second parent would otherwise cost a walk of the whole history per pull.
    func ownVersions(after from: GitOID?, upTo head: GitOID) -> [String: Set<String>] {
        guard let me = localReplica, let from else { return [:] }
        var out: [String: Set<String>] = [:]
        var current: GitOID? = head
        var walked = 0
        while let id = current, id != from, walked < Self.ownVersionsWalk, let info = try? repo.commit(id) {
            if Self.replicaId(inMessage: info.message) == me {
                let parentTree = try? info.parents.first.map { try repo.commit($0).tree }
                for change in (try? repo.diff(from: parentTree ?? nil, to: info.tree)) ?? [] {
                    guard let path = change.newPath, Self.isDocumentPath(path), let blob = change.newBlob,
                        let bytes = try? smallBlob(blob), let scanned = try? JSONScanner.scanDocument(bytes),
                        let refId = scanned.member(named: "refId")?.stringValue,
                        let changesetId = scanned.member(named: "changesetId")?.stringValue
                    else { continue }
                    out[refId, default: []].insert(changesetId)
                }
            }
            current = info.parents.first
            walked += 1
        }
        return out
    }

    /// The documents at `common` (with docsync's ids; a file plain git left without them
    /// is adopted through the diff like any other).
    func rewoundHistory(lost: GitOID, common: GitOID?) throws -> RewoundHistory {
        var versions: [String: DocVersion] = [:]
        var contents: [String: [UInt8]] = [:]
        if let common {
            for file in try repo.files(inTree: try repo.commit(common).tree) where Self.isDocumentPath(file.path) {
                guard let bytes = try smallBlob(file.blob), let scanned = try? JSONScanner.scanDocument(bytes),
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
        guard let bytes = try? smallBlob(blob) else { return nil }
        return try? JSONDecoder().decode(RemoteEntry.self, from: Data(bytes))
    }

    /// The remote version in a blob, with ids derived and stamped in if plain git left
    /// them out or left the changesetId unchanged across an edit.
    struct Unreadable: Error { var message: String }

    /// - Parameters:
    ///   - introduction: the commit not made by docsync that put the blob there, if one did.
    ///   - historyRead: whether the history since the cursor was read whole (so no
    ///     `introduction` means docsync made the version, with a fresh changesetId).
    func entry(
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
            // Rewritten there without ids: the document the commit replaced at this path,
            // else a new one (its id derived, so every replica agrees).
            refId =
                introduction?.replacedRefId.flatMap { RefID.isAcceptable($0) ? $0 : nil }
                ?? Self.derivedRefId(path: path, blob: blob)
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

    /// The refId of a file plain git left without one. Deterministic: every replica
    /// adopting this file derives the same id.
    static func derivedRefId(path: String, blob: GitOID) -> String {
        let h = Array(ContentHash.of(path + "\n" + blob))
        return "git-" + String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-"
            + String(h[16..<20]) + "-" + String(h[20..<32])
    }

    public func read(_ entry: RemoteEntry) throws -> [UInt8] {
        if let derived = derivedContent[entry.refId], ContentHash.of(derived) == entry.hash { return derived }
        guard let blob = blobOf[entry.refId] else {
            throw RemoteError.damaged(url: displayURL, reason: "no content known for \(entry.path ?? entry.refId)")
        }
        let bytes = try boundedBlob(blob, path: entry.path ?? entry.refId)
        guard ContentHash.of(bytes) == entry.hash else {
            throw RemoteError.damaged(url: displayURL, reason: "\(entry.path ?? entry.refId) changed while reading")
        }
        return bytes
    }
}
