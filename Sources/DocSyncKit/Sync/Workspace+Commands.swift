import DocSyncJSON
import Foundation

extension Workspace {
    // MARK: clone

    /// Makes `directory` a working tree of the remote at `url` and pulls every document.
    /// A folder that already holds files keeps them: a file without ids at a path where
    /// the remote has a document joins it (the same content is that document, different
    /// content is merged), and the others are recorded, to be sent by the next push.
    public static func clone(
        url: String, into directory: String, kind: RemoteKind? = nil, branch: String? = nil,
        replicaName: String? = nil, progress: ProgressHandler? = nil
    ) throws -> (Workspace, SyncReport) {
        let root = FileSystem.absolute(directory)
        let existed = FileSystem.exists(root)
        // Checked here, not only by `initialize`: a failed clone removes the `.docsync/`
        // it made, and must never remove one that was there.
        if FileSystem.exists(TreeLayout(root: root).metadata) { throw Failure.alreadyATree(root) }
        let address = try RemoteAddress.parse(url, kind: kind, relativeTo: FileManager.default.currentDirectoryPath)
        try address.checkSeparate(fromTree: root)
        // A missing folder must not become a new remote here, and is not "try again
        // later" either: clone is run by hand, and the path is most likely mistyped.
        if RemoteIdentity.exists(kind: address.kind, url: address.url) == false {
            throw Failure.noRemoteAt(address.url)
        }
        try FileSystem.createDirectories(root)
        do {
            let (workspace, _) = try initialize(
                at: root, remoteURL: address.url, kind: address.kind, branch: branch, replicaName: replicaName)
            workspace.progress = progress
            let report = try workspace.run(.pull)
            if let unreachable = report.remoteUnreachable { throw Failure.unreachable(unreachable) }
            return (workspace, report)
        } catch {
            // Leave nothing half-made behind.
            if existed {
                try? FileManager.default.removeItem(atPath: root + "/.docsync")
            } else {
                try? FileManager.default.removeItem(atPath: root)
            }
            throw error
        }
    }

    // MARK: status

    public func status() throws -> StatusReport {
        var scratch = SyncReport()
        let local = try recordLocalChanges(write: false, report: &scratch, refreshingIndex: true)
        let synced = lastSync ?? state.lastSync
        // An attempt is news only until a run gets through.
        let attempt = DeferredAttempt.load(layout).flatMap { $0.time > (synced ?? 0) ? $0 : nil }
        return StatusReport(
            root: layout.root, replicaId: config.replicaId, remote: config["remote.url"], lastSync: synced,
            pending: state.pending.map(ChangeSummary.init), unrecorded: local.actions.map(ChangeSummary.init),
            conflicts: conflictStore.list().filter(\.isOpen), waiting: waitingVersions, problems: scratch.problems,
            warnings: warnings + scratch.warnings, lastAttempt: attempt)
    }

    // MARK: log

    /// Every journal entry, oldest first, with whether local actions are still pending.
    public func log() throws -> [LogEntry] {
        let entries = try Journal(path: layout.journal).read(from: 0, repair: false)
        let pendingSeqs = Set(state.pending.map(\.seq))
        return entries.map { LogEntry(entry: $0, pending: pendingSeqs.contains($0.seq)) }
    }

    // MARK: rm

    /// Deletes tracked documents (paths relative to `cwd`) and records the deletions.
    public func remove(paths: [String], relativeTo cwd: String, dryRun: Bool) throws -> SyncReport {
        let byPath = Dictionary(state.tracked.values.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        var targets: [String] = []
        for path in paths {
            let absolute = FileSystem.absolute(path.hasPrefix("/") ? path : FileSystem.join(cwd, path))
            guard absolute.hasPrefix(layout.root + "/") else { throw Failure.notTracked(path) }
            let relative = String(absolute.dropFirst(layout.root.count + 1))
            guard byPath[relative] != nil else { throw Failure.notTracked(path) }
            targets.append(relative)
        }
        var report = SyncReport()
        report.dryRun = dryRun
        if dryRun {
            report.recorded = targets.map {
                ChangeSummary(kind: .delete, path: $0, refId: byPath[$0]!.refId, changesetId: byPath[$0]!.changesetId)
            }
            return report
        }
        // Record first, so any unrecorded edit to these files is journaled (and its
        // content kept) before the file goes.
        _ = try recordLocalChanges(write: true, report: &report)
        for path in targets { try FileSystem.removeFile(layout.absolute(path)) }
        var second = SyncReport()
        _ = try recordLocalChanges(write: true, report: &second)
        report.recorded += second.recorded
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    // MARK: reset-base

    /// Recovery for a lost or damaged state: starts from an empty base, moves the old
    /// state aside and records every document as it is now, keeping existing
    /// changesetIds. The next sync then adds what is only on one side, takes identical
    /// versions as synced, and keeps both versions where they differ. Nothing is deleted.
    public static func resetBase(at directory: String) throws -> (Workspace, SyncReport) {
        guard let layout = TreeLayout.find(from: directory) else {
            throw Failure.notATree(FileSystem.absolute(directory))
        }
        let config = try Config.load(from: layout.config)
        let lock: TreeLock
        do { lock = try TreeLock(path: layout.lock, waitSeconds: config.number("lock.waitSeconds")) } catch let busy
            as TreeLock.Busy
        {
            throw Failure.busy(busy.holder)
        }
        // Read the journal first: if it is damaged too, stop before changing anything.
        let journal = Journal(path: layout.journal)
        let entries = try journal.read(from: 0, repair: true)
        if FileSystem.exists(layout.state) {
            try FileSystem.rename(
                layout.state, layout.state + ".damaged-\(FileSystem.currentTimeNanos / 1_000_000_000)")
        }
        try FileSystem.removeFile(layout.index)
        var fresh = SyncState()
        fresh.journalSeq = entries.map(\.seq).max() ?? 0
        fresh.journalOffset = journal.length
        if !FileSystem.exists(layout.journal) { try FileSystem.writeAtomically(layout.journal, []) }
        try fresh.save(to: layout.state)
        let store = ReplicaStore(layout: layout, config: config, state: fresh, readOnly: false, lock: lock)
        try store.recover()
        let workspace = Workspace(store: store)
        var report = SyncReport()
        _ = try workspace.recordLocalChanges(write: true, report: &report)
        return (workspace, report)
    }

    // MARK: verify

    /// Checks the tree, the journal, the state and the remote. Returns every problem
    /// found (empty: all good).
    public func verify(includeRemote: Bool = true) -> [String] {
        var problems: [String] = []
        var scratch = SyncReport()
        if let local = try? recordLocalChanges(write: false, report: &scratch) {
            problems += local.problems.map { "tree: \($0)" }
            _ = local
        }
        do {
            let entries = try Journal(path: layout.journal).read(from: 0, repair: false)
            var last = 0
            for e in entries {
                if e.seq <= last { problems.append("journal: entry \(e.seq) is out of order (after \(last))") }
                last = e.seq
            }
        } catch {
            problems.append("journal: \(error.localizedDescription)")
        }
        for version in state.base.values.sorted(by: { $0.path < $1.path }) where (try? objects.get(version.hash)) == nil
        {
            problems.append(
                "state: base version of \(version.path) (\(version.changesetId)) is missing from .docsync/objects")
        }
        for action in state.pending {
            if let v = action.resultingVersion, !objects.contains(v.hash) {
                problems.append(
                    "journal: pending \(action.kind.rawValue) of \(v.path) refers to missing object \(v.hash)")
            }
        }
        var paths: [String: String] = [:]
        for v in state.tracked.values {
            if let other = paths[v.path] {
                problems.append("state: \(v.path) is claimed by both \(other) and \(v.refId)")
            }
            paths[v.path] = v.refId
        }
        if includeRemote, config["remote.url"] != nil, let remote = try? makeRemote() {
            problems += remote.verify()
        }
        return problems
    }

    // MARK: config

    /// Sets or unsets a key. A remote key (url, kind or branch) must name a remote that
    /// exists (`create`: make a new one there), and, once this tree has synced, the same
    /// remote it synced with: then nothing is reset. Another remote needs `resetBase`,
    /// which starts from an empty base as `reset-base` does: the next sync merges the tree
    /// with whatever that remote holds and deletes nothing. Returns whether the base was reset.
    @discardableResult
    public func setConfig(
        _ key: String, _ value: String?, relativeTo cwd: String? = nil, create: Bool = false,
        resetBase: Bool = false
    ) throws -> Bool {
        var updated = config
        if let value { try updated.set(key, value) } else { try updated.unset(key) }
        // The URL (and the kind it is read as) is checked when it is given, never first
        // on the next cron run; relative folder paths are taken from `cwd`.
        // A new URL picks its kind again (set remote.kind after it to force one).
        if ["remote.url", "remote.kind"].contains(key), let url = updated["remote.url"] {
            let kind = key == "remote.url" ? nil : updated["remote.kind"].flatMap(RemoteKind.init(rawValue:))
            let address = try RemoteAddress.parse(
                url, kind: kind, relativeTo: cwd ?? FileManager.default.currentDirectoryPath)
            try address.checkSeparate(fromTree: layout.root)
            try updated.set("remote.url", address.url)
            if config["remote.kind"] != nil || key == "remote.kind" {
                try updated.set("remote.kind", address.kind.rawValue)
            }
        }
        // A schema that cannot be read or compiled would hold every record it names.
        if key.hasPrefix("schema."), let value {
            let file = FileSystem.absolute(value, relativeTo: layout.root)
            if let problem = RecordSchemas(root: layout.root, config: updated).checkSchemaFile(file) {
                throw Config.Problem(message: "\(key): \(problem)")
            }
        }
        let remoteKeys: Set = ["remote.url", "remote.kind", "remote.branch"]
        var resets = false
        var missing: (kind: RemoteKind, url: String)? = nil
        if remoteKeys.contains(key), updated[key] != config[key], let url = updated["remote.url"] {
            let kind = updated["remote.kind"].flatMap(RemoteKind.init(rawValue:)) ?? RemoteKind.detect(url)
            if RemoteIdentity.exists(kind: kind, url: url) == false {
                guard create else { throw Failure.noRemoteAt(url) }
                missing = (kind, url)
            }
            if let cursor = state.cursor {
                let verdict =
                    missing != nil
                    ? .different("there is no remote there yet")
                    : RemoteIdentity.compare(
                        cursor: cursor, kind: kind, url: url, branch: updated["remote.branch"] ?? "main")
                if case let .different(reason) = verdict {
                    guard resetBase else { throw Failure.differentRemote(url: url, reason: reason) }
                    resets = true
                }
            }
        }
        if let missing { try RemoteIdentity.create(kind: missing.kind, url: missing.url) }
        try updated.save(to: layout.config)
        config = updated
        if resets {
            var fresh = SyncState()
            fresh.journalSeq = state.journalSeq
            fresh.journalOffset = journal.length
            fresh.pending = []
            state = fresh
            try checkpoint()
            try? FileSystem.removeFile(layout.metadata + "/last-sync")
            var report = SyncReport()
            index = StatCache()
            _ = try recordLocalChanges(write: true, report: &report)
        }
        return resets
    }
}

// MARK: - History and restore

public struct DocumentHistory: Codable, Sendable {
    public var refId: String
    public var path: String?
    /// This replica's journal entries about the document, oldest first.
    public var local: [LogEntry]
    /// The remote's versions, newest first.
    public var remote: [RemoteVersionInfo]
    /// Why the remote's history could not be read, if it could not.
    public var remoteError: String?
}

extension Workspace {
    /// Finds a document by path (relative to `cwd`), refId, or a path it had before.
    func resolveDocument(_ doc: String, relativeTo cwd: String) throws -> (refId: String, path: String?) {
        let tracked = state.tracked
        let absolute = FileSystem.absolute(doc.hasPrefix("/") ? doc : FileSystem.join(cwd, doc))
        if absolute.hasPrefix(layout.root + "/") {
            let relative = String(absolute.dropFirst(layout.root.count + 1))
            if let v = tracked.values.first(where: { $0.path == relative }) { return (v.refId, v.path) }
            if let bytes = try? FileSystem.readFile(absolute),
                let ref = (try? JSONScanner.scanDocument(bytes))?.member(named: "refId")?.stringValue
            {
                return (ref, relative)
            }
            if let entry = try log().last(where: { $0.entry.path == relative && $0.entry.refId != nil }) {
                return (entry.entry.refId!, relative)
            }
        }
        if let v = tracked[doc] { return (v.refId, v.path) }
        if let entry = try log().last(where: { $0.entry.refId == doc }) { return (doc, entry.entry.path) }
        throw Failure.notTracked(doc)
    }

    public func history(of doc: String, relativeTo cwd: String) throws -> DocumentHistory {
        let (refId, path) = try resolveDocument(doc, relativeTo: cwd)
        let local = try log().filter { $0.entry.refId == refId }
        var remoteVersions: [RemoteVersionInfo] = []
        var remoteError: String? = nil
        do {
            remoteVersions = try makeRemote().history(of: refId, path: path)
        } catch {
            remoteError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return DocumentHistory(refId: refId, path: path, local: local, remote: remoteVersions, remoteError: remoteError)
    }
}
