/// The second half of `detect`: the journal action each scanned file, and each tracked
/// document no file keeps, stands for.
extension ChangeRecorder {
    /// Which files kept a refId (one per refId), and how many of those are tracked
    /// documents: fewer than `tracked` means some were deleted.
    struct Recorded {
        var isKeeper: [Bool] = []
        var claimedCount = 0
    }

    func recordFiles(
        _ files: [FileInfo], keepers: RefIdKeepers, write: Bool, into result: inout Result
    ) throws -> Recorded {
        var recorded = Recorded()
        if !joining.isEmpty { carriedRefIds = Set(files.compactMap(\.refId)) }
        recorded.isKeeper.reserveCapacity(files.count)
        for i in files.indices {
            progress?(.step(.record, done: i, total: files.count))
            if !rejoining.isEmpty, let own = files[i].refId, rejoining[own] != nil,
                let joined = joinedRefId(own: own, path: files[i].path)
            {
                recorded.isKeeper.append(false)
                if let action = try record(
                    files[i], refId: joined, newRefId: true, kind: .create, fromPath: nil, write: write,
                    problems: &result.problems)
                {
                    result.actions.append(action)
                    rejoined[own] = rejoining[own]
                }
                continue
            }
            // A file at its tracked path keeps its refId (the keeper rule's first choice),
            // and the same content there is nothing to record.
            if files[i].unchanged {
                recorded.isKeeper.append(true)
                recorded.claimedCount += 1
                continue
            }
            let f = files[i]
            if let ref = f.refId, keepers.waits(ref, carrier: i) {
                recorded.isKeeper.append(false)
                waiting[ref, default: []].append(f.path)
                continue
            }
            let isKeeper = f.refId.map { keepers.keeper(of: $0, carrier: i) == i } ?? false
            recorded.isKeeper.append(isKeeper)
            if isKeeper, let ref = f.refId, let t = tracked[ref] {
                recorded.claimedCount += 1
                if let action = try recordChange(of: t, in: f, write: write, problems: &result.problems) {
                    result.actions.append(action)
                }
            } else if f.refId == nil, let ref = regenerated[f.path], let t = tracked[ref] {
                recorded.claimedCount += 1
                if let action = try recordChange(of: t, in: f, write: write, problems: &result.problems) {
                    result.actions.append(action)
                }
            } else if let action = try recordNew(f, isKeeper: isKeeper, write: write, problems: &result.problems) {
                result.actions.append(action)
            }
        }
        return recorded
    }

    /// A tracked document's file: a rename when only its path changed, else an update.
    private func recordChange(
        of t: DocVersion, in f: FileInfo, write: Bool, problems: inout [DocumentProblem]
    ) throws -> JournalEntry? {
        if f.hash == t.hash {
            guard f.path != t.path else { return nil }
            let moved = DocVersion(refId: t.refId, changesetId: t.changesetId, hash: t.hash, path: f.path)
            var rename = JournalEntry(.local(.rename, version: moved, fromPath: t.path))
            rename.movedAt = Self.movedAt(f.stat)
            return rename
        }
        let fromPath = t.path == f.path ? nil : t.path
        guard
            var action = try record(
                f, refId: t.refId, newRefId: false, kind: .update, fromPath: fromPath, write: write,
                problems: &problems)
        else { return nil }
        if t.path != f.path { action.movedAt = Self.movedAt(f.stat) }
        return action
    }

    /// A file of no tracked document: a new document under its own refId when it keeps
    /// one, else under the remote document it joins, else under a new refId (a copy, or
    /// a file without ids).
    private func recordNew(
        _ f: FileInfo, isKeeper: Bool, write: Bool, problems: inout [DocumentProblem]
    ) throws -> JournalEntry? {
        if isKeeper, let ref = f.refId {
            return try record(
                f, refId: ref, newRefId: false, kind: .create, fromPath: nil, write: write, problems: &problems)
        }
        // Without `write` a placeholder, one per file (plans key documents by refId).
        let joined = f.refId == nil ? joinedRefId(own: nil, path: f.path) : nil
        let ref = joined ?? (write ? RefID.generate() : "(new) " + f.path)
        guard
            var action = try record(
                f, refId: ref, newRefId: true, kind: .create, fromPath: nil, write: write, problems: &problems)
        else { return nil }
        if f.refId == nil && joined == nil { action.mintedId = true }
        return action
    }

    /// Tracked documents no file keeps: deleted, unless their file is unreadable or
    /// ignored now, or they joined the remote's document.
    func recordDeletions(
        of unclaimed: [(key: String, value: DocVersion)], walk: TreeWalker.Walk, ignore: IgnoreRules,
        into result: inout Result
    ) {
        for (ref, t) in unclaimed {
            if result.unreadablePaths.contains(t.path) { continue }
            // Not seen because not looked at: unknown. Its path joins the unreadable ones,
            // so a remote change to it waits aside instead of being applied over it.
            if let reason = UnknownDocument.reason(for: t.path, walk: walk, ignore: ignore) {
                result.unknown.append(UnknownDocument(path: t.path, refId: ref, reason: reason, waiting: waiting[ref]))
                result.unreadablePaths.insert(t.path)
                continue
            }
            // It joined the remote's document: what it recorded under its own refId is
            // superseded, not deleted (it never reached any remote).
            if let seqs = rejoined[ref] {
                result.actions.append(JournalEntry(.done(refId: ref, seqs: seqs, reason: .superseded)))
                continue
            }
            result.actions.append(JournalEntry(.local(.delete, version: t, fromPath: nil)))
        }
    }
}
