import DocSyncJSON
import Foundation

/// The first half of `detect`: what each file of the walk holds, from the stat cache
/// where it vouches for the file, else by reading and scanning it.
extension ChangeRecorder {
    /// What the scan made of one file.
    enum FileScan {
        case file(FileInfo)
        /// Not a valid document: reported, its path unreadable (not a deletion);
        /// `forget` drops its stat-cache entry so the next run reads it again.
        case invalid([DocumentProblem], forget: Bool)
        /// Gone between the walk and the read (renamed or deleted while the run scanned), or
        /// read while it was being written: the walk is out of date, and `detect` walks again.
        case vanished(DocumentProblem)
    }

    /// Every file of the walk that holds a document, in walk order; the others go to
    /// `result` as problems. Leaves the stat cache holding only files that are here.
    func scanFiles(_ entries: [TreeWalker.Entry], into result: inout Result) -> [FileInfo] {
        var files: [FileInfo] = []
        files.reserveCapacity(entries.count)
        // The walk is in the index's order: each lookup goes on from where the last one
        // stopped (a merge, no hashing of paths).
        var cursor = StatCache.Cursor()
        // Flags set against the state as read (nothing pending, nothing folded in since)
        // say which files hold their document's tracked version, with no lookup.
        let stamp = unchangedTree?.stamp ?? 0
        for (fileNumber, entry) in entries.enumerated() {
            progress?(.step(.scan, done: fileNumber, total: entries.count))
            if let refId = index.syncedRefId(entry.path, stat: entry.stat, cursor: &cursor, stamp: stamp) {
                files.append(FileInfo(path: entry.path, stat: entry.stat, synced: refId))
                continue
            }
            let found = index.entry(entry.path, cursor: &cursor, syncedUnder: stamp)
            switch scanFile(entry, cached: found?.entry, isSynced: found?.isSynced ?? false) {
            case .file(let info):
                files.append(info)
            case .invalid(let problems, let forget):
                result.problems += problems
                result.unreadablePaths.insert(entry.path)
                if forget { index.remove(path: entry.path) }
            case .vanished(let problem):
                // Unknown, never a deletion, should the walks never catch up with the edits.
                result.problems.append(problem)
                result.unreadablePaths.insert(entry.path)
                result.vanishedWhileScanning += 1
            }
        }
        // Entries of files that are gone. Why the count first: a no-op run then builds no
        // list of every path only to find nothing.
        if index.count > files.count {
            vanishedPaths = index.retain(walkOrder: entries.map(\.path))
        }
        progress?(.step(.scan, done: entries.count, total: entries.count))
        progress?(.finished(.scan))
        return files
    }

    func scanFile(_ entry: TreeWalker.Entry, cached: StatCache.Entry?, isSynced: Bool = false) -> FileScan {
        if let cached, cached.matches(entry.stat) {
            return scanCached(entry, cached, isSynced: isSynced)
        }
        // A name no remote can hold (a newline or control character in it) is this
        // file's problem alone: reported like invalid JSON, everything else syncs.
        if let problem = DocumentPath.problem(entry.path) {
            let reason = "this file name cannot be synced (\(problem)); rename the file"
            return .invalid([DocumentProblem(path: DocumentPath.printable(entry.path), reason: reason)], forget: false)
        }
        return readAndScan(entry)
    }

    /// A file the stat cache vouches for: its ids and hash come from the cache. Flagged
    /// synced (`isSynced`), it is its document's tracked version, at its path.
    private func scanCached(_ entry: TreeWalker.Entry, _ cached: StatCache.Entry, isSynced: Bool) -> FileScan {
        var info = FileInfo(
            path: entry.path, stat: entry.stat, hash: cached.hash,
            refId: cached.refId.isEmpty ? nil : cached.refId,
            changesetId: cached.changesetId.isEmpty ? nil : cached.changesetId)
        if isSynced {
            info.unchanged = true
            return .file(info)
        }
        // The one lookup of its document for most files on a no-op run, which the
        // record reuses instead of asking `tracked` again.
        if let known = info.refId.flatMap({ tracked[$0] }), known.hash == info.hash {
            info.unchanged = known.path == info.path
            return .file(info)
        }
        // Read by `status` or a dry run and not recorded since: checked now.
        if let bytes = try? FileSystem.readFile(layout.absolute(entry.path)),
            let scanned = try? JSONScanner.scanDocument(bytes),
            let problems = schemaProblems(entry.path, bytes, scanned)
        {
            return .invalid(problems, forget: true)
        }
        return .file(info)
    }

    /// A file the stat cache does not vouch for: read, scanned, checked, and cached.
    private func readAndScan(_ entry: TreeWalker.Entry) -> FileScan {
        let readAt = FileSystem.currentTimeNanos
        let bytes: [UInt8]
        do { bytes = try FileSystem.readFile(layout.absolute(entry.path)) } catch {
            if error.isNotFound {
                let reason = "renamed or deleted while docsync read the tree; left for the next run"
                return .vanished(DocumentProblem(path: entry.path, reason: reason))
            }
            let reason = "cannot read: \(error.localizedDescription)"
            return .invalid([DocumentProblem(path: entry.path, reason: reason)], forget: false)
        }
        let scanned: ScannedDocument
        do { scanned = try JSONScanner.scanDocument(bytes) } catch {
            let problem = DocumentProblem(
                path: entry.path, line: error.line, column: error.column, reason: error.reason)
            // Being written as it was read (an editor that saves in place truncates, then
            // writes): not the user's invalid save. `detect` walks again and reads it anew.
            if let now = try? FileSystem.linkStatus(layout.absolute(entry.path)),
                now.size != entry.stat.size || now.mtimeNanos != entry.stat.mtimeNanos || now.size != bytes.count
            {
                return .vanished(
                    DocumentProblem(
                        path: entry.path,
                        reason: "changed while docsync read it (\(problem.reason)); left for the next run"
                    ))
            }
            return .invalid([problem], forget: true)
        }
        // The scan is not kept: stamping scans the file again. Why: kept for every new
        // file until the record, the scans were a third of a first push's memory.
        var info = FileInfo(path: entry.path, stat: entry.stat, hash: ContentHash.of(bytes), bytes: bytes)
        if let member = scanned.member(named: "refId") {
            if let value = member.stringValue, RefID.isAcceptable(value) {
                info.refId = value
            } else if member.kind != .string {
                let problem = DocumentProblem(path: entry.path, reason: "\"refId\" must be a string")
                return .invalid([problem], forget: false)
            }
        }
        if let member = scanned.member(named: "changesetId"), member.kind == .string {
            info.changesetId = member.stringValue
        }
        // Content this tree has not recorded for its document: only such versions are
        // checked against a schema (one pulled or recorded before a schema changed is
        // not this replica's new edit, and holding it would hold the remote's next one).
        let known = info.refId.flatMap { tracked[$0] }
        let isNewVersion = known?.hash != info.hash
        // A new version that fails its schema is held like invalid JSON: reported,
        // never recorded or pushed, and what the remote sends for it waits aside.
        if isNewVersion, let problems = schemaProblems(entry.path, bytes, scanned) {
            return .invalid(problems, forget: true)
        }
        index.record(
            path: entry.path, stat: entry.stat, hash: info.hash, refId: info.refId ?? "",
            changesetId: info.changesetId ?? "", readAtNanos: readAt)
        // Bytes the tree already recorded are not held: after a clone (every entry
        // racy) or a lost index, every file is read again, and few need recording
        // (a copy that does is read again then).
        if !isNewVersion || heldBytes + bytes.count > Self.heldBytesBudget {
            info.bytes = nil
        } else {
            heldBytes += bytes.count
        }
        info.unchanged = !isNewVersion && known?.path == info.path
        return .file(info)
    }
}
