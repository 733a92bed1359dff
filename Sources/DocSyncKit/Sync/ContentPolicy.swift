import Collections
import DocSyncJSON

/// Settles a document whose content changed differently on both sides, by the policy
/// configured for its path (`merge.policy`, `merge.policyFor.<glob>`):
///
/// - `merge` (default): field by field against the base; a field changed differently on
///   both sides goes to the later changesetId, and that side's loser is kept whole;
/// - `lww`: the whole document with the later changesetId;
/// - `local` / `remote`: that side's whole document;
/// - `manual`: the remote version in place, the local one aside, until `docsync resolve`.
///
/// Whatever the policy, the version that did not win is kept in the conflict store.
struct ContentPolicy {
    struct Outcome {
        /// The document's new content: one side's version, or merged bytes.
        var result: DocVersion
        var mergedBytes: [UInt8]?
        var contentFrom: Reconciler.Side?
        var loser: (side: Reconciler.Side, version: DocVersion)?
        var fields: [String] = []
        var notice: DocumentNotice?
    }

    let policy: MergePolicy
    let counters: Set<String>
    var arrays = FieldMerge.ArrayRules()

    /// - Parameters: `path` is where the document ends up (the path decision is separate).
    func settle(
        base: [UInt8]?, local: DocVersion, localBytes: [UInt8], remote: DocVersion, remoteBytes: [UInt8], path: String,
        newChangesetId: () -> String
    ) -> Outcome {
        let localIsLater = changesetOrder(remote.changesetId, local.changesetId)
        func whole(_ side: Reconciler.Side, _ why: DocumentNotice.KeptBecause) -> Outcome {
            var winner = side == .local ? local : remote
            winner.path = path
            let loser = side == .local ? remote : local
            return Outcome(
                result: winner, contentFrom: side, loser: (side.other, loser), notice: .keptWhole(side, because: why))
        }
        // One side's content is the base's again (a restore, an edit undone): only the
        // other side changed the content, and it is taken, no conflict, under every policy
        // (content decides, SPEC; the field merge comes to the same by itself). Why: under
        // a whole-document policy the version that changed nothing won whole when it was
        // later, and the other side's edit went to the conflict store.
        if policy != .merge, let base {
            for (side, bytes) in [(Reconciler.Side.remote, remoteBytes), (.local, localBytes)]
            where JSONValue.sameDocument(bytes, base) {
                var kept = side == .remote ? local : remote
                kept.path = path
                return Outcome(result: kept, contentFrom: side.other)
            }
        }
        switch policy {
        case .local: return whole(.local, .policy(.local))
        case .remote: return whole(.remote, .policy(.remote))
        case .manual: return whole(.remote, .policy(.manual))
        case .lww: return whole(localIsLater ? .local : .remote, .policy(.lww))
        case .merge: break
        }
        guard let l = try? JSONValueParser.parse(localBytes), let r = try? JSONValueParser.parse(remoteBytes) else {
            return whole(localIsLater ? .local : .remote, .tooDeepToMerge)
        }
        return fieldMerge(
            base: base.flatMap { try? JSONValueParser.parse($0) }, local: (local, l, localBytes),
            remote: (remote, r, remoteBytes), localIsLater: localIsLater, path: path, newChangesetId: newChangesetId)
    }

    /// The `merge` policy: field by field against the base, collisions to the later side.
    private func fieldMerge(
        base b: JSONValue?, local: (version: DocVersion, value: JSONValue, bytes: [UInt8]),
        remote: (version: DocVersion, value: JSONValue, bytes: [UInt8]), localIsLater: Bool, path: String,
        newChangesetId: () -> String
    ) -> Outcome {
        let (l, r) = (local.value, remote.value)
        // Merged with the earlier save as the first side and its file's layout, so that
        // every replica merging the same three versions writes the same bytes, whichever
        // side is local; conflicts are then said by side again.
        var merge =
            localIsLater
            ? FieldMerge.merge(base: b, local: r, remote: l, collisions: .remote, counters: counters, arrays: arrays)
            : FieldMerge.merge(base: b, local: l, remote: r, collisions: .remote, counters: counters, arrays: arrays)
        if localIsLater {
            merge.conflicts = merge.conflicts.map { c in
                var c = c
                (c.local, c.remote) = (c.remote, c.local)
                c.taken = c.taken.other
                return c
            }
        }
        let layoutBytes = localIsLater ? remote.bytes : local.bytes
        let fields = merge.conflicts.map(\.path)
        // A side lost if the merge dropped any of its values: a collision it lost, or a
        // removal the other side's edit beat. When both lost something, keep the local
        // version: the remote one stays in the remote's history, the local one may exist
        // nowhere else.
        let lostSides = Set(merge.conflicts.map { $0.taken == .local ? Reconciler.Side.remote : .local })
        let loserSide: Reconciler.Side? = lostSides.contains(.local) ? .local : lostSides.first
        let loser = loserSide.map { ($0, $0 == .local ? local.version : remote.version) }
        let note = Self.mergeNote(merge.conflicts, loser: loserSide)
        // The merge may come out as exactly one side's document: keep that version as is.
        // (Both sides' values alike never get here: `DocumentPlanner.settle` takes the
        // remote's version first.)
        for (side, value, version) in [(Reconciler.Side.local, l, local.version), (.remote, r, remote.version)]
        where merge.merged.isSameDocument(as: value, ignoring: .both) {
            var result = version
            result.path = path
            return Outcome(result: result, contentFrom: side, loser: loser, fields: fields, notice: note)
        }
        let (version, bytes) = Self.stamped(
            merge.merged, refId: local.version.refId, changesetId: newChangesetId(), layout: layoutBytes, path: path)
        return Outcome(
            result: version, mergedBytes: bytes, contentFrom: nil, loser: loser, fields: fields, notice: note)
    }

    /// What a field merge says: which fields collided and which side each kept, and which
    /// version went to the conflict store.
    static func mergeNote(_ conflicts: [FieldMerge.FieldConflict], loser: Reconciler.Side?) -> DocumentNotice {
        .merged(
            collisions: conflicts.map { .init(path: $0.path, taken: $0.taken == .local ? .local : .remote) },
            loser: loser)
    }

    /// A merged document as a new version: its changesetId (and refId, if the merge lost
    /// it) set, written in the layout of `layout`'s file (indent, line ends, BOM).
    static func stamped(_ merged: JSONValue, refId: String, changesetId: String, layout: [UInt8], path: String)
        -> (DocVersion, [UInt8])
    {
        var merged = merged
        if case .object(var members) = merged {
            members["changesetId"] = .string(changesetId)
            if members["refId"] == nil {
                members.updateValue(.string(refId), forKey: "refId", insertingAt: 0)
            }
            merged = .object(members)
        }
        let bytes = keepingLineEndsAndBOM(
            of: layout, JSONValueWriter.write(merged, indent: JSONValueWriter.detectIndent(of: layout)))
        return (DocVersion(refId: refId, changesetId: changesetId, hash: ContentHash.of(bytes), path: path), bytes)
    }

    /// The merged text with the local file's CRLF line ends and byte order mark, if it
    /// had them. Why: the writer's layout is LF without a BOM, so a merge silently turned
    /// a Windows-style file into a Unix one. JSON strings hold no raw line breaks, so every
    /// LF in the writer's output is a line end.
    static func keepingLineEndsAndBOM(of original: [UInt8], _ written: [UInt8]) -> [UInt8] {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        var out: [UInt8] = original.starts(with: bom) ? bom : []
        let firstLF = original.firstIndex(of: 0x0A)
        let crlf = firstLF.map { $0 > 0 && original[$0 - 1] == 0x0D } ?? false
        guard crlf else { return out + written }
        out.reserveCapacity(out.count + written.count + written.count / 16)
        for byte in written {
            if byte == 0x0A { out.append(0x0D) }
            out.append(byte)
        }
        return out
    }

    /// Whether `edited` changed a counter field of `base`. Why it matters: two replicas
    /// that each added the same amount to a counter save identical documents, and taking
    /// that for "the same edit on both sides" dropped one of the two additions (found by
    /// the convergence fuzzer's tally). Such edits go through the counter merge instead.
    static func changesCounters(base: [UInt8]?, edited: [UInt8], counters: Set<String>) -> Bool {
        guard !counters.isEmpty, let base, let old = try? JSONValueParser.parse(base),
            let new = try? JSONValueParser.parse(edited)
        else { return false }
        func value(_ root: JSONValue, _ keys: [String]) -> JSONValue? {
            var current = root
            for key in keys {
                guard case .object(let members) = current, let next = members[key] else { return nil }
                current = next
            }
            return current
        }
        return counters.contains { path in
            let keys = FieldMerge.keys(inPath: path)
            return value(old, keys) != value(new, keys)
        }
    }
}

extension ContentPolicy {
    /// Two versions merged as a pull would merge them under `config`, for a merge base a
    /// remote must build (see ForkMergeBase): the merged bytes, or the winning side's.
    static func versionMerge(config: Config) -> VersionMerge {
        { path, base, earlier, later in
            let policy = ContentPolicy(
                policy: config.policy(for: path), counters: config.counters, arrays: config.arrayRules)
            let first = DocVersion(
                refId: "", changesetId: earlier.changesetId, hash: ContentHash.of(earlier.bytes), path: path)
            let second = DocVersion(
                refId: "", changesetId: later.changesetId, hash: ContentHash.of(later.bytes), path: path)
            let outcome = policy.settle(
                base: base, local: first, localBytes: earlier.bytes, remote: second, remoteBytes: later.bytes,
                path: path, newChangesetId: { later.changesetId })
            if let merged = outcome.mergedBytes { return merged }
            return outcome.result.changesetId == first.changesetId && outcome.result.hash == first.hash
                ? earlier.bytes : later.bytes
        }
    }
}
