import DocSyncJSON
import Foundation

/// Reading one diff between the tree's last commit and the head, change by change.
extension GitRemote {
    /// What the changes of a diff say, gathered as they are read.
    struct DiffReading {
        /// By refId, with the change's position in the diff: the remote's order.
        var puts: [String: (Int, RemoteEntry)] = [:]
        var deletes: [String: (Int, RemoteEntry)] = [:]
        var conflictMeta: [String: ConflictStore.Record] = [:]
        var conflictBytes: [String: GitOID] = [:]
        var moved: [String: MovedRecord] = [:]
        var warnings: [String] = []
        /// Documents larger than `remote.maxDocumentBytes`, never read.
        var skipped: [RemoteDocumentCeiling.Skipped] = []
        /// Document files plain git added with a refId, settled once the diff is read
        /// (see `settlePlainGitAdditions`), and what `puts` registered for each refId.
        var additions: [PlainGitAddition] = []
        var registrations: [String: Registration] = [:]

        // Sized once: grown by doubling, a clone's table of 100,000 documents held its old
        // and new storage at once, at the peak of the clone.
        init(capacity: Int) { puts.reserveCapacity(capacity) }
    }

    /// Reads one change: a rename record, a shared conflict record, a tombstone, a
    /// document (its new version, and the one it replaced or removed), or a file that is
    /// not pulled (said as a warning).
    func read(
        _ change: GitRepository.FileChange, order: Int, into reading: inout DiffReading, headTime: Int64,
        introductions: (found: [String: PlainGitIntroduction], complete: Bool)
    ) throws {
        if let path = change.newPath, let blob = change.newBlob, path.hasPrefix(Self.movedFolder) {
            if let bytes = try? smallBlob(blob),
                let record = try? JSONDecoder().decode(MovedRecord.self, from: Data(bytes))
            {
                reading.moved[record.refId] = record
            }
            return
        }
        if let path = change.newPath, let blob = change.newBlob, path.hasPrefix(Self.conflictFolder) {
            readConflictFile(path, blob: blob, into: &reading)
            return
        }
        if let name = change.undecodableName, name.hasSuffix(".json") {
            reading.warnings.append(
                "\(displayURL): \(name): the file name is not valid UTF-8; not pulled (rename it on the remote)")
        }
        let refIdNowAtOldPath = try readNewFile(
            of: change, order: order, into: &reading, headTime: headTime, introductions: introductions)
        // Removed here (deleted, or reading.moved: the put of the same refId wins), or replaced
        // by another document at the same path: once gc purged its tombstone, nothing
        // else says that one went.
        if let path = change.oldPath, let blob = change.oldBlob, Self.isDocumentPath(path),
            change.newPath != path || refIdNowAtOldPath != nil
        {
            try readRemovedDocument(
                path, blob: blob, order: order, into: &reading, headTime: headTime,
                unless: refIdNowAtOldPath)
        }
    }

    /// A shared conflict's record (`….meta.json`) or the losing version's bytes.
    private func readConflictFile(_ path: String, blob: GitOID, into reading: inout DiffReading) {
        if path.hasSuffix(".meta.json") {
            if let bytes = try? smallBlob(blob),
                let record = try? JSONDecoder().decode(ConflictStore.Record.self, from: Data(bytes)),
                RefID.isAcceptable(record.refId), RefID.isAcceptable(record.changesetId),
                Self.conflictPaths(record).meta == path
            {
                reading.conflictMeta[String(path.dropLast(".meta.json".count))] = record
            }
        } else if path.hasSuffix(".json") {
            reading.conflictBytes[String(path.dropLast(".json".count))] = blob
        }
    }

    /// The file a change leaves (a tombstone, a document, or a `.json` file that cannot be
    /// one); returns the refId of the document now at the change's old path, if one is.
    private func readNewFile(
        of change: GitRepository.FileChange, order: Int, into reading: inout DiffReading, headTime: Int64,
        introductions: (found: [String: PlainGitIntroduction], complete: Bool)
    ) throws -> String? {
        guard let path = change.newPath, let blob = change.newBlob else { return nil }
        if path.hasPrefix(Self.tombstoneFolder) {
            if let entry = tombstone(blob) { reading.deletes[entry.refId] = (order, entry) }
        } else if Self.isDocumentPath(path) {
            let introduction = introductions.found[path + "\u{0}" + blob]
            if let size = oversize(blob) {
                // Never read (see RemoteDocumentCeiling): said, remembered, looked at again.
                reading.skipped.append(
                    RemoteDocumentCeiling.Skipped(
                        path: path, size: size, key: blob, previousBlob: change.oldBlob, commitTime: headTime,
                        introducedAt: introduction?.time, replacedChangesetId: introduction?.replacedChangesetId,
                        replacedRefId: introduction?.replacedRefId, historyRead: introductions.complete))
                return nil
            }
            // A previous version too large to read is as good as none.
            let oldBytes = try change.oldBlob.flatMap { try smallBlob($0) }
            switch try entry(
                path: path, blob: blob, previous: oldBytes, commitTime: headTime,
                introduction: introduction, historyRead: introductions.complete)
            {
            case .success(let entry):
                // Added by plain git, carrying an id it did not derive: a move, a new
                // document or a copy, which only the whole diff and the head can tell.
                let key = path + "\u{0}" + blob
                if change.oldPath != path, let introduction = introductions.found[key],
                    entry.refId != Self.derivedRefId(path: path, blob: blob)
                {
                    reading.additions.append(
                        PlainGitAddition(
                            entry: entry, blob: blob, order: order, introduced: introduction.time,
                            registration: registration(of: entry.refId)))
                    return nil
                }
                reading.puts[entry.refId] = (order, entry)
                reading.registrations[entry.refId] = registration(of: entry.refId)
                if change.oldPath == path { return entry.refId }
            case .failure(let problem): reading.warnings.append(problem.message)
            }
        } else if path.hasSuffix(".json"), !path.hasPrefix(".docsync/"), let problem = DocumentPath.problem(path) {
            // Why: such a file (a name over 255 bytes, say) was skipped silently,
            // so nobody learned it was not pulled.
            reading.warnings.append("\(displayURL): \(path): \(problem); not pulled")
        }
        return nil
    }

    /// The document a change removed from `path` (or replaced there), as a deletion,
    /// unless a tombstone already said so or it is the document now there.
    private func readRemovedDocument(
        _ path: String, blob: GitOID, order: Int, into reading: inout DiffReading, headTime: Int64,
        unless refIdNowAtOldPath: String?
    ) throws {
        // Too large to read: which document it was is not known, so it is no deletion.
        guard let bytes = try smallBlob(blob), let scanned = try? JSONScanner.scanDocument(bytes),
            let refId = scanned.member(named: "refId")?.stringValue, reading.deletes[refId] == nil,
            refId != refIdNowAtOldPath
        else { return }
        let cs = scanned.member(named: "changesetId")?.stringValue ?? ""
        reading.deletes[refId] = (
            order,
            RemoteEntry(
                refId: refId, changesetId: cs, hash: ContentHash.of(bytes), path: path, deleted: true,
                replica: Self.gitReplica, time: headTime * 1000)
        )
    }
}
