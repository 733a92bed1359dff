import DocSyncJSON
import Foundation

extension ReplicaStore {
    /// Folds journal entries written after the last checkpoint into the state and redoes
    /// file operations a crash may have cut short.
    func recover() throws {
        let entries = try journal.read(from: state.journalOffset, lastKnownSeq: state.journalSeq, repair: !readOnly)
        warnings += journal.warnings
        let unfolded = entries.filter { $0.seq > state.journalSeq }
        // Folding may change the base: read it here, where a damaged one is an error.
        if !unfolded.isEmpty { try state.readBase() }
        var baseBefore: [String: DocVersion?] = [:]
        // The user's pending actions a pull finished (superseded): they go back if its file
        // operation is not redone. Looked up by seq, those of the checkpoint gathered once.
        var superseded: [String: [JournalEntry]] = [:]
        var localBySeq: [Int: JournalEntry]?
        var notRedone: [String] = []
        for entry in unfolded {
            if case .seen(let refId, _, _) = entry.event, baseBefore[refId] == nil {
                baseBefore[refId] = .some(state.baseVersions[refId])
            }
            if case .local = entry.event { localBySeq?[entry.seq] = entry }
            if case .done(.some(let refId), let seqs, .superseded) = entry.event {
                if localBySeq == nil { localBySeq = Dictionary(state.pending.map { ($0.seq, $0) }) { a, _ in a } }
                superseded[refId, default: []] += seqs.compactMap { localBySeq?[$0] }
            }
            state.fold(entry)
            if case .apply(let op) = entry.event, !readOnly, !redo(op) { notRedone.append(op.refId) }
            // A resolve journaled but killed before it closed its records: close them now.
            if case let .resolve(refId, _, _, take) = entry.event, !readOnly,
                conflictStore.list().contains(where: { $0.refId == refId && $0.isOpen })
            {
                _ = try? conflictStore.markResolved(refId, take: take, by: config.replicaId)
                warnings.append("finished an interrupted resolve of \(entry.path ?? refId)")
            }
        }
        // Documents whose interrupted pull could not be finished (the user edited them
        // since) keep their old base and pending actions, so the edit meets the remote
        // version as a conflict (see `JournalEntry.notApplied`).
        let reverts = notRedone.flatMap { refId in
            JournalEntry.notApplied(
                refId: refId, base: baseBefore[refId] ?? nil, superseded: superseded[refId] ?? [],
                pendingNow: state.pending.filter { $0.refId == refId })
        }
        if !reverts.isEmpty { try append(reverts) }
        if !unfolded.isEmpty || journal.length != state.journalOffset {
            state.journalOffset = journal.length
            if !readOnly { try checkpoint() }
        }
    }

    /// Does one logged file operation if it did not happen yet, and only if the file is
    /// still what it was before (never over a newer user edit). `interrupted`: it is the
    /// redo of a run that died (a pull's or a resolve's), said in the run's warnings.
    /// Returns false when the file was left alone because it changed since.
    func redo(_ entry: JournalEntry.FileOperation, interrupted: Bool = true) -> Bool {
        let io = SafeTreeIO(root: layout.root)
        let target = entry.result
        // Written already (as it was, or edited by the user since: the ids are still the
        // ones the run wrote, and the edit is recorded on top of it; written again, the
        // edit of a document the run had created was lost). A move may still have its
        // old file to remove.
        if let target, let current = try? io.readIfPresent(target.path),
            ContentHash.of(current) == target.hash || Self.carriesIds(current, of: target)
        {
            if let fromPath = entry.fromPath, fromPath != target.path, let old = try? io.readIfPresent(fromPath),
                ContentHash.of(old) == entry.fromHash
            {
                try? io.remove(fromPath)
            }
            return true
        }
        // Gone where the version was to be written in place: the user moved or deleted the
        // file since. Why: written back, the document was in two files (the moved one then
        // became a new document) or a deletion was undone.
        if let fromPath = entry.fromPath, entry.fromHash != nil, target?.path == fromPath,
            case .some(.none) = try? io.readIfPresent(fromPath)
        {
            if interrupted {
                warnings.append(
                    "\(fromPath): moved or deleted after an interrupted run; left so (it will be recorded as a local change)"
                )
            }
            return false
        }
        if let fromPath = entry.fromPath, let current = try? io.readIfPresent(fromPath),
            ContentHash.of(current) != entry.fromHash
        {
            if interrupted {
                warnings.append(
                    "\(fromPath): changed after an interrupted run; left as it is (it will be recorded as a local edit)"
                )
            }
            return false
        }
        do {
            if let target {
                try io.write(target.path, try objects.get(target.hash))
                if let fromPath = entry.fromPath, fromPath != target.path { try io.remove(fromPath) }
            } else if let fromPath = entry.fromPath {
                try io.remove(fromPath)
            }
            if interrupted {
                warnings.append(
                    "finished an interrupted run's change of \(target?.path ?? entry.fromPath ?? entry.refId)")
            }
            return true
        } catch {
            warnings.append(
                "could not \(interrupted ? "finish an interrupted run's" : "make the") change of \(entry.fromPath ?? entry.refId): \(error.localizedDescription)"
            )
            return false
        }
    }

    /// Whether `bytes` are a document with `version`'s refId and changesetId: that version,
    /// as a user's text edit leaves it until it is recorded.
    static func carriesIds(_ bytes: [UInt8], of version: DocVersion) -> Bool {
        guard case .object(let members)? = try? JSONValueParser.parse(bytes) else { return false }
        return members["refId"] == .string(version.refId) && members["changesetId"] == .string(version.changesetId)
    }
}
