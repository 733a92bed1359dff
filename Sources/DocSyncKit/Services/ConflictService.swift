import DocSyncJSON
import Foundation

// MARK: - Conflicts and resolve

/// `docsync conflicts` and `docsync resolve`.
public struct ConflictService: WorkspaceService {
    public let workspace: Workspace

    public init(workspace: Workspace) { self.workspace = workspace }
    /// Conflict records, newest last; open ones only unless `all`.
    public func list(all: Bool = false) -> [ConflictStore.Record] {
        conflictStore.list().filter { all || $0.isOpen }
    }

    /// Which side of this replica a record's stored version is: local only where that
    /// version (or deletion) was made (see `ConflictPointOfView`).
    public func sideHere(of record: ConflictStore.Record) -> Reconciler.Side {
        pointOfView(of: record).storedSide
    }

    /// What `resolve` will write: nil when the document stays as it is.
    enum ResolveWrite {
        case fields(JSONValue, replaced: [String])
        case whole([UInt8], undone: [String])
        case delete
        /// The name that lost a rename against rename: the document moves there.
        case move(to: String)
    }

    /// Settles the open conflicts of a document.
    /// - `take` nil: the document is accepted as it is now (edited by hand).
    /// - `local` / `remote`: that side's values of the colliding fields, on top of the
    ///   document as it is now: edits made since the conflict stay. A side whose deletion
    ///   lost to an edit: taking it deletes the document. "Local" is what this replica has
    ///   (see `ConflictPointOfView`): on a replica whose version did not lose, the document
    ///   stays as it is.
    /// - a replica (name or id): the version or deletion that replica made.
    /// - a changesetId (or prefix): that stored version's values of its colliding fields.
    /// - `whole`: the chosen stored version replaces the whole document; the report says
    ///   which later edits that undoes.
    /// The result is journaled and pushed like any edit; the settlement travels through
    /// the remote and closes the conflict on every replica.
    public func resolve(_ doc: String, relativeTo cwd: String, take: String?, whole: Bool = false, dryRun: Bool) throws
        -> SyncReport
    {
        var report = SyncReport()
        report.dryRun = dryRun
        if !dryRun { _ = try recordLocalChanges(write: true, report: &report) }
        let (refId, currentPath) = try resolveDocument(doc, relativeTo: cwd)
        let open = conflictStore.list().filter { $0.refId == refId && $0.isOpen }
        guard !open.isEmpty else {
            throw Workspace.Failure.gaveUp("\(doc) has no open conflict (see `docsync conflicts`)")
        }
        let path = currentPath ?? open.last!.path

        // The stored version whose values are wanted (nil: the kept side, already there).
        var chosen: ConflictStore.Record? = nil
        switch take {
        case nil:
            if whole {
                throw Workspace.Failure.gaveUp(
                    "--whole needs --take local|remote|ID: which stored version to bring back")
            }
        case "local", "remote":
            chosen = open.last { sideHere(of: $0).rawValue == take }
        case let replica? where replicaId(named: replica, among: open) != nil:
            let id = replicaId(named: replica, among: open)!
            chosen = open.last { $0.lostBy == id }
        case let id?:
            let matches = open.filter { $0.changesetId.hasPrefix(id) }
            guard let match = matches.last else {
                throw Workspace.Failure.gaveUp(
                    "no stored version '\(id)' in the open conflicts of \(doc); see `docsync conflicts`")
            }
            if Set(matches.map(\.changesetId)).count > 1 {
                throw Workspace.Failure.gaveUp(
                    "'\(id)' matches several stored versions of \(doc): \(matches.map(\.changesetId).joined(separator: ", "))"
                )
            }
            chosen = match
        }

        let write = try chosen.map { try plannedWrite(for: $0, documentPath: path, whole: whole) } ?? nil
        switch write {
        case let .fields(_, replaced):
            report.notices.append(
                "\(path): took the \(describeSide(chosen!)) values of \(replaced.joined(separator: ", ")); every other field stays as it is now"
            )
        case let .whole(_, undone):
            report.notices.append(
                "\(path): brought back the whole stored version \(chosen!.changesetId)"
                    + (undone.isEmpty ? "" : "; this undoes later edits of \(undone.joined(separator: ", "))"))
        case .delete:
            report.notices.append("\(path): the deletion wins; the document is deleted")
        case let .move(target):
            report.notices.append("\(path): takes the name \(target) after all; the document moves there")
        case nil:
            report.notices.append("\(path): kept as it is now")
        }
        report.recorded.append(
            ChangeSummary(kind: .resolve, path: path, refId: refId, changesetId: chosen?.changesetId))
        if dryRun { return report }

        // Journal first, then the file, then the conflict store: the file operation, the
        // local action it makes and the resolve go in one batch, so a run killed after it
        // is finished by the next one (`recover`), and one killed before it did nothing.
        // Why: a resolve killed between writing the file and journaling pushed the taken
        // values as an ordinary edit and left the conflict open.
        let io = SafeTreeIO(root: layout.root)
        let tracked = state.tracked[refId]
        let fileBytes = try io.readIfPresent(path)
        var entries: [JournalEntry] = []
        func operation(
            _ result: DocVersion?, _ action: JournalEntry.LocalAction, _ version: DocVersion, fromPath: String? = nil
        ) {
            entries.append(
                JournalEntry(
                    .apply(
                        .init(
                            refId: refId, changesetId: result?.changesetId ?? version.changesetId, result: result,
                            fromPath: path, fromHash: fileBytes.map(ContentHash.of)))))
            entries.append(JournalEntry(.local(action, version: version, fromPath: fromPath)))
        }
        switch write {
        case let .fields(value, _):
            let current = fileBytes ?? []
            var stamped = value
            let changesetId = clock.next().description
            if case .object(var members) = stamped {
                members["changesetId"] = .string(changesetId)
                stamped = .object(members)
            }
            let bytes = ContentPolicy.keepingLineEndsAndBOM(
                of: current, JSONValueWriter.write(stamped, indent: JSONValueWriter.detectIndent(of: current)))
            let version = DocVersion(refId: refId, changesetId: changesetId, hash: try objects.put(bytes), path: path)
            operation(version, .update, version)
        case let .whole(bytes, _):
            let scanned = try JSONScanner.scanDocument(bytes)
            let changesetId = clock.next().description
            let stamped = IdentityStamper.stamp(bytes, scanned: scanned, refId: refId, changesetId: changesetId)
            let version = DocVersion(refId: refId, changesetId: changesetId, hash: try objects.put(stamped), path: path)
            operation(version, .update, version)
        case .delete:
            if let tracked { operation(nil, .delete, tracked) }
        case let .move(target):
            guard target != path, let tracked else { break }
            guard try io.readIfPresent(target) == nil else {
                throw Workspace.Failure.gaveUp("\(target) holds another file; move it away, then resolve \(path) again")
            }
            var moved = tracked
            moved.path = target
            operation(moved, .rename, moved, fromPath: path)
        case nil:
            break
        }
        if !entries.isEmpty {
            try objects.flush()
            try clock.persist()
        }
        entries.append(
            JournalEntry(
                .resolve(refId: refId, changesetId: chosen?.changesetId, path: currentPath, take: take ?? "as is")))
        try append(entries)
        try CrashPoint.hit("resolve.after-journal")
        for entry in entries {
            // A file edited while resolving is left as the user saved it: the next run
            // records that edit over the resolved version (kept in the journal).
            if case let .apply(op) = entry.event, !redo(op, interrupted: false) {
                report.warnings.append(
                    "\(path) changed while resolving; your edit is kept and will be recorded over the resolved version")
            }
        }
        report.recorded += entries.filter(\.isLocalAction).map(ChangeSummary.init)
        // Settled before the checkpoint: until then `recover` finds the resolve unfolded
        // and settles it again if this run dies here.
        _ = try conflictStore.markResolved(refId, take: take ?? "as is", by: config.replicaId)
        try checkpoint()
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    private func describeSide(_ record: ConflictStore.Record) -> String {
        let view = pointOfView(of: record)
        let owner =
            view.storedIsLocal
            ? "local" : view.storedBy.map { "\(workspace.replicas.names(fromRemote: false)[$0] ?? $0)'s" } ?? "remote"
        return "\(owner) version \(record.changesetId)'s"
    }

    /// The id of the replica `text` names (its name or id) if it made one of the versions
    /// of these records.
    private func replicaId(named text: String, among records: [ConflictStore.Record]) -> String? {
        let authors = Set(records.flatMap { [$0.lostBy, ChangesetID($0.winner)?.replica].compactMap { $0 } })
        if authors.contains(text) { return text }
        let names = workspace.replicas.names()
        return authors.first { names[$0] == text }
    }

    /// The document after taking `record`'s side, from the file as it is now.
    private func plannedWrite(for record: ConflictStore.Record, documentPath: String, whole: Bool) throws
        -> ResolveWrite?
    {
        if record.deleted == true { return .delete }
        if record.renameLost == true { return record.path == documentPath ? nil : .move(to: record.path) }
        let stored = try conflictStore.bytes(of: record)
        guard let storedValue = try? JSONValueParser.parse(stored) else {
            throw Workspace.Failure.gaveUp("the stored version \(record.changesetId) is not valid JSON")
        }
        let currentBytes = try SafeTreeIO(root: layout.root).readIfPresent(documentPath)
        guard let currentBytes else {
            if whole { return .whole(stored, undone: []) }
            throw Workspace.Failure.gaveUp(
                "\(documentPath) is not in the tree; bring the whole stored version back with --whole")
        }
        let current: JSONValue
        do { current = try JSONValueParser.parseDocument(currentBytes) } catch {
            throw Workspace.Failure.gaveUp(
                "\(documentPath):\(error.line):\(error.column): \(error.reason); fix it first (or take the whole stored version with --whole)"
            )
        }
        if whole {
            let fields = Set(record.fields ?? [])
            return .whole(stored, undone: FieldPaths.differing(current, storedValue).filter { !fields.contains($0) })
        }
        guard let fields = record.fields, !fields.isEmpty else {
            throw Workspace.Failure.gaveUp(
                "this conflict record names no fields (an older docsync recorded it); take the whole stored version with --whole"
            )
        }
        var result = current
        // A field inside a merged array is settled at the array (see FieldPaths.settledField).
        var settled: [String] = []
        for field in fields.map({ FieldPaths.settledField($0, in: [current, storedValue]) })
        where !settled.contains(field) { settled.append(field) }
        for field in settled {
            result = FieldPaths.setting(FieldPaths.value(at: field, in: storedValue), at: field, in: result)
        }
        if result == current { return nil }
        return .fields(result, replaced: fields)
    }
}
