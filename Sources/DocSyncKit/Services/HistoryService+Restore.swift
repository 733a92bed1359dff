import DocSyncJSON
import Foundation

/// `docsync restore`: brings back earlier versions of documents as new local changes,
/// journaled like any edit (with a new changesetId) and pushed by the next push. Which
/// version:
/// - `--at ID`: the version whose changesetId (or commit/history id) starts with ID, in
///   this replica's journal or the remote's history; a prefix matching two versions is
///   refused with the candidates listed.
/// - otherwise, for a document in the tree: the last synced version (undoing local edits);
///   for a deleted one: its last live version (the synced one while the deletion is not
///   on the remote yet, else the newest this replica kept, else the remote's).
/// Unrecorded edits are recorded first, so they stay in the journal.
extension HistoryService {
    /// A version found to restore.
    struct Found {
        var bytes: [UInt8]
        var path: String?
        var changesetId: String
        var source: String
    }

    /// Documents deleted here whose deletion has not reached the remote: the base has
    /// them, the recorded tree does not. Exactly what a push would delete.
    func unpushedDeletions(after actions: [JournalEntry]) -> [DocVersion] {
        var tracked = state.tracked
        for action in actions { SyncState.applyLocal(action, to: &tracked) }
        return state.base.values.filter { tracked[$0.refId] == nil }.sorted { $0.path < $1.path }
    }

    public func restore(_ doc: String, relativeTo cwd: String, at: String?, dryRun: Bool) throws
        -> SyncReport
    {
        try restore([doc], relativeTo: cwd, at: at, deleted: false, dryRun: dryRun)
    }

    /// A sparse replica restores only what it keeps: a path outside its selection that no
    /// document here has is refused, saying how to keep that part.
    private func refuseOutsideSelection(
        _ docs: [String], relativeTo cwd: String, tracked: [String: DocVersion]
    ) throws {
        guard let selection = try workspace.sparseSelection() else { return }
        let trackedPaths = Set(tracked.values.map(\.path))
        // A document named by its refId is one this replica keeps, or was: not a path.
        for doc in docs where tracked[doc] == nil && state.baseVersions[doc] == nil {
            guard let path = layout.relative(TreeLayout.userPath(doc, from: cwd)), !selection.contains(path),
                !trackedPaths.contains(path)
            else { continue }
            let folder = path.split(separator: "/").dropLast().first.map { "\($0)/" } ?? path
            throw Workspace.Failure.gaveUp(
                "\(path) is outside this replica's selection (`docsync sparse list`); `docsync sparse add \(folder)` keeps that part here, then restore it"
            )
        }
    }

    /// A document to restore: as the user named it, and where it is or was.
    struct RestoreTarget {
        var name: String
        var refId: String
        var path: String?
    }

    /// - Parameters:
    ///   - docs: paths (relative to `cwd`) or refIds.
    ///   - deleted: also every document deleted here and not yet on the remote.
    public func restore(
        _ docs: [String], relativeTo cwd: String, at: String?, deleted: Bool, dryRun: Bool
    ) throws -> SyncReport {
        var report = SyncReport()
        report.dryRun = dryRun
        let local = try recordLocalChanges(write: !dryRun, report: &report)
        var tracked = state.tracked
        try refuseOutsideSelection(docs, relativeTo: cwd, tracked: tracked)
        let targets = try restoreTargets(
            docs, relativeTo: cwd, deleted: deleted, unrecorded: dryRun ? local.actions : [])
        if dryRun { for action in local.actions { SyncState.applyLocal(action, to: &tracked) } }
        var restored: [RestoredVersion] = []
        var written: [(target: String, bytes: [UInt8])] = []
        for t in targets {
            let found = try version(
                of: t.refId, named: t.name, path: t.path, at: at, exists: tracked[t.refId] != nil)
            let target = try restorePath(for: t, found: found, tracked: tracked)
            let scanned: ScannedDocument
            do { scanned = try JSONScanner.scanDocument(found.bytes) } catch {
                throw Workspace.Failure.gaveUp("that version of \(t.name) is not valid JSON (\(error.description))")
            }
            report.recorded.append(
                ChangeSummary(kind: .restore, path: target, refId: t.refId, changesetId: found.changesetId))
            restored.append(
                RestoredVersion(
                    refId: t.refId, path: target, version: found.changesetId, source: found.source,
                    changesetId: nil))
            // A fresh changesetId: restoring is a new edit, later than everything before it.
            let stamped = IdentityStamper.stamp(
                found.bytes, scanned: scanned, refId: t.refId, changesetId: clock.next().description)
            written.append((target, stamped))
        }
        if dryRun {
            report.restored = restored
            return report
        }
        try writeRestored(written, restored, into: &report)
        return report
    }

    /// The documents named (each once), plus the unpushed deletions when `deleted` is set.
    /// - Parameter unrecorded: local actions not yet in the state (a dry run's).
    private func restoreTargets(
        _ docs: [String], relativeTo cwd: String, deleted: Bool, unrecorded: [JournalEntry]
    ) throws -> [RestoreTarget] {
        var targets: [RestoreTarget] = []
        for doc in docs {
            let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
            targets.append(RestoreTarget(name: doc, refId: refId, path: path))
        }
        if deleted {
            for v in unpushedDeletions(after: unrecorded) {
                targets.append(RestoreTarget(name: v.path, refId: v.refId, path: v.path))
            }
        }
        var seen = Set<String>()
        targets = targets.filter { seen.insert($0.refId).inserted }
        if targets.isEmpty {
            throw Workspace.Failure.gaveUp("nothing to restore: no document was deleted here since the last sync")
        }
        return targets
    }

    /// Where `t` is restored to: its path, or the found version's; never over another
    /// document that took the path meanwhile.
    private func restorePath(for t: RestoreTarget, found: Found, tracked: [String: DocVersion]) throws -> String {
        guard let target = t.path ?? found.path else {
            throw Workspace.Failure.gaveUp("\(t.name): no path to restore it to")
        }
        if let other = tracked.values.first(where: { $0.path == target && $0.refId != t.refId }) {
            throw Workspace.Failure.gaveUp(
                "\(target) now holds another document (\(other.refId)); move it away, then restore \(t.name)"
            )
        }
        return target
    }

    /// Writes the restored versions into the tree and records them as local changes.
    private func writeRestored(
        _ written: [(target: String, bytes: [UInt8])], _ restored: [RestoredVersion], into report: inout SyncReport
    ) throws {
        try clock.persist()
        for w in written {
            // Stored first: the recorder keeps an id only where it knows the id names this content.
            try objects.put(w.bytes)
            try SafeTreeIO(root: layout.root).write(w.target, w.bytes)
        }
        var recorded = SyncReport()
        _ = try recordLocalChanges(write: true, report: &recorded)
        report.recorded += recorded.recorded
        let now = state.tracked
        report.restored = restored.map { r in
            var r = r
            r.changesetId = now[r.refId]?.changesetId
            return r
        }
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
    }

    /// The version of `refId` to bring back (see the type's comment).
    func version(
        of refId: String, named name: String, path: String?, at: String?, exists: Bool
    ) throws -> Found {
        // Journal entries with content this replica stored, newest last.
        let kept = try log().map(\.entry).filter {
            $0.refId == refId && $0.hash != nil && $0.changesetId != nil
        }
        guard let at else {
            return try lastLiveVersion(of: refId, named: name, path: path, exists: exists, kept: kept)
        }
        let candidates = try versions(of: refId, named: name, path: path, prefix: at, kept: kept)
        if candidates.count > 1 {
            let list = candidates.keys.sorted().map { "  " + candidates[$0]!.described }.joined(
                separator: "\n")
            throw Workspace.Failure.gaveUp(
                "--at \(at) is ambiguous for \(name): it matches \(candidates.count) versions; give more of the id, or a commit id:\n\(list)"
            )
        }
        guard let only = candidates.values.first else {
            throw Workspace.Failure.gaveUp(
                "no version '\(at)' of \(name) in this replica's journal or the remote's history; see `docsync log \(name)`"
            )
        }
        return try only.found()
    }

    /// Without `--at`: the synced version, else (for a deleted document) the newest one
    /// this replica kept, else the remote's newest live one.
    private func lastLiveVersion(
        of refId: String, named name: String, path: String?, exists: Bool, kept: [JournalEntry]
    ) throws -> Found {
        if let base = state.baseVersions[refId], let bytes = try? objects.get(base.hash) {
            return Found(bytes: bytes, path: base.path, changesetId: base.changesetId, source: "journal")
        }
        if !exists {
            if let found = kept.reversed().lazy.compactMap(keptVersion).first { return found }
            let remote = try makeRemote()
            if let v = try remote.history(of: refId, path: path).first(where: { !$0.deleted }) {
                return try remoteVersion(v, of: refId, in: remote)
            }
        }
        throw Workspace.Failure.gaveUp(
            "\(name) has no synced version to restore; give one with --at (see `docsync log \(name)`)")
    }

    /// Every version the prefix names, by changesetId and content: one version may be in
    /// both places, and one changesetId may name several contents (edits made with plain
    /// git keep the id they came from), which is ambiguous too.
    private func versions(
        of refId: String, named name: String, path: String?, prefix at: String, kept: [JournalEntry]
    ) throws -> [String: (found: () throws -> Found, described: String)] {
        var candidates: [String: (found: () throws -> Found, described: String)] = [:]
        for e in kept where e.changesetId!.hasPrefix(at) {
            candidates[e.changesetId! + " " + e.hash!] = (
                {
                    try keptVersion(e).orThrow(
                        Workspace.Failure.gaveUp("version \(e.changesetId!) of \(name) is no longer kept here"))
                },
                "\(e.changesetId!)  \(Timestamp.rfc3339(e.time))  \(e.path ?? "")  (this replica's journal)"
            )
        }
        do {
            let remote = try makeRemote()
            for v in try remote.history(of: refId, path: path)
            where !v.deleted && (v.changesetId.hasPrefix(at) || v.id.hasPrefix(at)) {
                let key = v.changesetId + " " + (v.hash ?? v.id)
                if candidates[key] != nil { continue }
                let id = v.id.count == 40 ? " commit " + v.id.prefix(12) : ""
                candidates[key] = (
                    { try remoteVersion(v, of: refId, in: remote) },
                    "\(v.changesetId)  \(Timestamp.rfc3339(v.time))  \(v.path ?? "")  (the remote\(id))"
                )
            }
        } catch {
            // The journal alone can still answer; without a match there, the remote's error says why.
            if candidates.isEmpty { throw error }
        }
        return candidates
    }

    /// A version this replica's journal names, if its content is still stored here.
    private func keptVersion(_ e: JournalEntry) -> Found? {
        guard let hash = e.hash, let id = e.changesetId, let bytes = try? objects.get(hash) else {
            return nil
        }
        return Found(bytes: bytes, path: e.path, changesetId: id, source: "journal")
    }

    private func remoteVersion(_ v: RemoteVersionInfo, of refId: String, in remote: Remote) throws -> Found {
        Found(
            bytes: try remote.content(of: v, refId: refId), path: v.path, changesetId: v.changesetId,
            source: "remote")
    }
}

extension Optional {
    func orThrow(_ error: Error) throws -> Wrapped {
        guard let value = self else { throw error }
        return value
    }
}
