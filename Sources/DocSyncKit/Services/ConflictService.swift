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
    public func resolve(
        _ doc: String, relativeTo cwd: String, take: ResolveTake = .asIs, whole: Bool = false, dryRun: Bool
    ) throws
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

        let chosen = try chosenRecord(take: take, whole: whole, among: open, doc: doc)
        let write = try chosen.map { try plannedWrite(for: $0, documentPath: path, whole: whole) } ?? nil
        report.notices.append(Self.notice(for: write, chosen: chosen, path: path, side: chosen.map(describeSide)))
        report.recorded.append(
            ChangeSummary(kind: .resolve, path: path, refId: refId, changesetId: chosen?.changesetId))
        if dryRun { return report }
        if case let .fields(result, _)? = write, let back = try syncedVersionBack(refId, result: result, path: path) {
            return try putBack(back, resolve: chosen, take: take, path: path, report: report)
        }

        let entries = try journalResolve(
            write,
            resolve: .resolve(refId: refId, changesetId: chosen?.changesetId, path: currentPath, take: take),
            refId: refId, path: path)
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
        _ = try conflictStore.markResolved(refId, take: take, by: config.replicaId)
        try checkpoint()
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    /// Journals the resolve with the file operation and the local action it makes, and
    /// returns them. Journal first, then the file, then the conflict store: they go in one
    /// batch, so a run killed after it is finished by the next one (`recover`), and one
    /// killed before it did nothing. Why: a resolve killed between writing the file and
    /// journaling pushed the taken values as an ordinary edit and left the conflict open.
    private func journalResolve(
        _ write: ResolveWrite?, resolve: JournalEntry.Event, refId: String, path: String
    ) throws -> [JournalEntry] {
        let io = SafeTreeIO(root: layout.root)
        var entries = try fileEntries(for: write, refId: refId, path: path, io: io)
        if !entries.isEmpty {
            try objects.flush()
            try clock.persist()
        }
        entries.append(JournalEntry(resolve))
        try append(entries)
        try CrashPoint.hit("resolve.after-journal")
        return entries
    }

    private func describeSide(_ record: ConflictStore.Record) -> String {
        let view = pointOfView(of: record)
        let owner =
            view.storedIsLocal
            ? "the local"
            : view.storedBy.map { "\(workspace.replicas.names(fromRemote: false)[$0] ?? $0)'s" }
                ?? "the remote"
        return "\(owner) version \(record.changesetId)"
    }

    /// The id of the replica `text` names (its name or id) if it made one of the versions
    /// of these records.
    func replicaId(named text: String, among records: [ConflictStore.Record]) -> String? {
        let authors = Set(records.flatMap { [$0.lostBy, ChangesetID($0.winner)?.replica].compactMap { $0 } })
        if authors.contains(text) { return text }
        let names = workspace.replicas.names()
        return authors.first { names[$0] == text }
    }

    /// The document after taking `record`'s side, from the file as it is now.
    private func plannedWrite(for record: ConflictStore.Record, documentPath: String, whole: Bool) throws
        -> ResolveWrite?
    {
        switch record.kind {
        case .deletion: return .delete
        case .rename: return record.path == documentPath ? nil : .move(to: record.path)
        case .version: break
        }
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
        // A field inside a merged array names its element by its index in the version the
        // conflict kept: read that version only then (see FieldPaths.taking).
        let inArrays = fields.contains { FieldPaths.settledField($0, in: [current, storedValue]) != $0 }
        let kept = inArrays ? keptVersion(of: record) : nil
        var result = current
        for field in fields {
            result = FieldPaths.taking(field, from: storedValue, into: result, recordedAgainst: kept)
        }
        if result == current { return nil }
        return .fields(result, replaced: fields)
    }

    /// The synced version, when a take ends exactly on its values at its path (ids aside),
    /// as `revert` would put it back: the local changes it leaves nothing of. Why: written
    /// under a new changesetId it was an edit nobody made, which then beat the remote's
    /// later deletion and brought the document back (model check, daemon seed 30327).
    private func syncedVersionBack(_ refId: String, result: JSONValue, path: String) throws
        -> RevertService.Target?
    {
        guard let base = state.baseVersions[refId], base.path == path,
            let baseValue = try? JSONValueParser.parse(try objects.get(base.hash))
        else { return nil }
        // `differing` leaves out the ids (reserved members), so this compares values only.
        guard FieldPaths.differing(result, baseValue).isEmpty else { return nil }
        return try RevertService.targets(pending: state.pending, base: { state.baseVersions[$0] }, selecting: [])
            .first { $0.refId == refId }
    }

    /// The resolve as a revert of the document's local changes (see `syncedVersionBack`):
    /// journaled first, then the file, then the conflict store, as a resolve is.
    private func putBack(
        _ back: RevertService.Target, resolve chosen: ConflictStore.Record?, take: ResolveTake, path: String,
        report: SyncReport
    ) throws -> SyncReport {
        var report = report
        try append(
            back.journalEntries(
                settling: .resolve(
                    refId: back.refId, changesetId: chosen?.changesetId, path: path, take: take)))
        try CrashPoint.hit("resolve.after-journal")
        if back.changesFile, !redo(back.operation, interrupted: false) {
            report.warnings.append(
                "\(path) changed while resolving; your edit is kept and will be recorded over the resolved version")
        }
        report.notices.append("\(path): that is the synced version: put back, the local changes dropped")
        _ = try conflictStore.markResolved(back.refId, take: take, by: config.replicaId)
        try checkpoint()
        report.pendingAfter = Set(state.pending.compactMap(\.refId)).count
        return report
    }

    /// The version a conflict kept (`record.winner`), from the journal entry that stored it
    /// here; nil once the journal no longer has it (a gc compacted it).
    private func keptVersion(of record: ConflictStore.Record) -> JSONValue? {
        guard let entries = try? Journal(path: layout.journal).read(from: 0, repair: false),
            let hash = entries.last(where: {
                $0.refId == record.refId && $0.changesetId == record.winner && $0.hash != nil
            })?.hash,
            let bytes = try? objects.get(hash)
        else { return nil }
        return try? JSONValueParser.parse(bytes)
    }
}
