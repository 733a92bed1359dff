import DocSyncJSON
import Foundation

/// What `detect` asks of each file: whose document it is, whether it is valid, its recorded action.
extension ChangeRecorder {
    /// The remote document a file at `path` joins (see `joining`): only a file with no
    /// refId of its own (`own` nil) or one docsync gave it (`rejoining`), and only a
    /// document nothing in the tree already is.
    func joinedRefId(own: String?, path: String) -> String? {
        guard let refId = joining[path], refId != own, tracked[refId] == nil, !carriedRefIds.contains(refId) else {
            return nil
        }
        return refId
    }

    /// When a file was moved: its change time (a rename sets it), never later than now.
    static func movedAt(_ stat: FileStat) -> Int64 {
        min(stat.ctimeNanos, FileSystem.currentTimeNanos) / 1_000_000
    }

    /// Where `path` is among `files` (sorted by path in byte order, as the walk leaves them).
    static func fileIndex(of path: String, in files: [FileInfo]) -> Int? {
        var low = 0, high = files.count
        while low < high {
            let mid = (low + high) / 2
            if UTF8Order.precedes(files[mid].path, path) { low = mid + 1 } else { high = mid }
        }
        return low < files.count && files[low].path == path ? low : nil
    }

    /// Every way a file breaks its schema, or nil when it has none or satisfies it. Files
    /// are parsed only when a schema can apply (a `schema.<glob>` key or a `$schema` member).
    func schemaProblems(_ path: String, _ bytes: [UInt8], _ scanned: ScannedDocument) -> [DocumentProblem]? {
        guard let schemas, schemas.hasRules || scanned.member(named: "$schema") != nil else { return nil }
        let problems = schemas.verdict(path: path, bytes: bytes).problems
        return problems.isEmpty ? nil : problems
    }

    /// Stamps ids into one file and stores the stamped version. Returns nil (and leaves
    /// the file alone) if the file changed under us: the caller records the tree again
    /// (see `Result.changedWhileStamping`).
    func record(
        _ f: FileInfo, refId: String, newRefId: Bool, kind: JournalEntry.LocalAction, fromPath: String?, write: Bool,
        problems: inout [DocumentProblem]
    ) throws -> JournalEntry? {
        // A file that carries a well-formed changesetId keeps it only where this tree
        // knows that id names exactly these bytes (a deleted file put back as it was, a
        // version docsync itself wrote): one changesetId names one content, everywhere.
        // Anything else (a file written back edited, a copy from another replica edited
        // since) is a new version with a new id.
        let tracked = self.tracked[refId]
        let carriesItsOwnVersion =
            kind == .create || (tracked.map { changesetOrder($0.changesetId, f.changesetId ?? "") } ?? false)
        if carriesItsOwnVersion, !newRefId, let existing = f.changesetId, ChangesetID(existing) != nil,
            objects.contains(f.hash)
        {
            // Its bytes are in the object store already (the condition above).
            clock.observe(existing)
            return JournalEntry(
                .local(
                    kind, version: DocVersion(refId: refId, changesetId: existing, hash: f.hash, path: f.path),
                    fromPath: fromPath))
        }
        // "Later" means saved later: the id's time is the file's mtime, after the
        // version it was edited from (the tracked one, or the id a re-created file carries).
        // Without `write` too (on an unsaved clock): a dry run decides what the run would.
        let savedAt = UInt64(max(f.stat.mtimeNanos, 0) / 1_000_000)
        let changesetId = clock.next(savedAt: savedAt, after: newRefId ? nil : (tracked?.changesetId ?? f.changesetId))
            .description
        guard write else {
            unstoredContents[f.hash] = try f.bytes ?? FileSystem.readFile(layout.absolute(f.path))
            return JournalEntry(
                .local(
                    kind, version: DocVersion(refId: refId, changesetId: changesetId, hash: f.hash, path: f.path),
                    fromPath: fromPath))
        }
        guard let hash = try stamp(f, refId: refId, newRefId: newRefId, changesetId: changesetId) else { return nil }
        return JournalEntry(
            .local(
                kind, version: DocVersion(refId: refId, changesetId: changesetId, hash: hash, path: f.path),
                fromPath: fromPath))
    }

    /// Writes the ids into the file (without reformatting it) and stores the stamped
    /// version; its hash, or nil (the file left alone) if the file changed under us.
    private func stamp(_ f: FileInfo, refId: String, newRefId: Bool, changesetId: String) throws -> String? {
        let absolute = layout.absolute(f.path)
        let bytes = try f.bytes ?? FileSystem.readFile(absolute)
        // Read again (not held since the scan): only the content the scan decided on.
        guard f.bytes != nil || ContentHash.of(bytes) == f.hash else { return nil }
        guard let scanned = try? JSONScanner.scanDocument(bytes) else { return nil }
        let stamped = IdentityStamper.stamp(
            bytes, scanned: scanned,
            refId: newRefId || scanned.member(named: "refId")?.stringValue != refId ? refId : nil,
            changesetId: changesetId)
        try CrashPoint.hit("record.before-stamp")
        // Stored first: whatever the replacement finds, the object is harmless.
        let hash = try objects.put(stamped)
        // Compare-and-swap against the user's editor: the file is replaced only if it is
        // still exactly what we read, checked on the file the swap took out (see
        // `FileSystem.replaceIfUnchanged`). Not fsynced one by one: the caller flushes the
        // filesystem before journaling.
        let replacement = try FileSystem.replaceIfUnchanged(
            absolute, with: stamped, mode: mode_t(f.stat.mode & 0o7777), expected: f.stat,
            expectedBytes: f.bytes == nil ? bytes : nil, durable: false,
            beforeSwap: { try CrashPoint.hit("record.before-swap") })
        guard replacement == .replaced else {
            changedWhileStamping += 1
            if case .keptAside(let kept) = replacement { keptAside.append(kept) }
            return nil
        }
        try CrashPoint.hit("record.after-stamp")
        if let after = try? FileSystem.linkStatus(absolute) {
            index.record(
                path: f.path, stat: after, hash: hash, refId: refId, changesetId: changesetId,
                readAtNanos: FileSystem.currentTimeNanos)
        }
        return hash
    }
}
