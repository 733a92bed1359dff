/// The second pass of a pull's plan: each decided document carried into the plan. Here
/// are the reads and stores the pure `DocumentPlanner` steps leave out.
extension PullPlanner {
    func carryOut(
        _ document: DocumentPlan, change: Incoming, decided: Decided, claimedPaths: inout Set<String>,
        settings: DocumentPlanner.Settings, time: Int64, into plan: inout PullPlan
    ) throws {
        let entry = change.entry
        let local = tracked[entry.refId]
        func bytes() throws -> [UInt8] {
            change.held ? try readObject(entry.hash ?? "") : try readRemote(entry)
        }
        // The local file is not a valid document right now (never overwrite it), or the
        // replica is send-only.
        if document.holdsAside {
            try holdAside(entry, local: local, bytes: bytes, in: &plan)
            return
        }
        guard var decision = document.decision else { return }
        place(&decision, local: local, decided: decided, claimedPaths: &claimedPaths, into: &plan)
        var placed = document
        placed.decision = decision
        let content = try read(placed, entry: entry, remoteBytes: bytes)
        if let remoteVersion = entry.version, let fetched = content.remote,
            decision.contentFrom == .remote || decision.loser != nil
        {
            try keepFetched(remoteVersion.hash, fetched, in: &plan)
        }
        var settled = SettledContent(decision: decision)
        if let remoteVersion = entry.version, decision.loser != nil {
            settled = DocumentPlanner.settle(
                decision, remote: remoteVersion, start: document.start, content: content, settings: settings,
                newChangesetId: clock.next().description)
            if let merged = settled.mergedBytes, let result = settled.decision.result {
                plan.objects[result.hash] = merged
            }
        }
        for notice in [settled.decision.pathNotice, settled.decision.notice].compactMap({ $0 }) {
            plan.notices.append("\(settled.decision.result?.path ?? local?.path ?? entry.refId): \(notice)")
        }
        let losses = DocumentPlanner.losses(
            of: settled, plan: placed, entry: entry, content: content,
            winnerBytes: winnerBytes(settled, content: content, plan: plan), replicaId: replicaId, time: time)
        for loss in losses { keep(loss, in: &plan) }
        record(settled.decision.result, of: entry, local: local, decided: decided, into: &plan)
    }

    /// Never write over a file that is not this document's own: an incoming version
    /// whose path is taken goes beside it.
    private func place(
        _ decision: inout Reconciler.Decision, local: DocVersion?, decided: Decided, claimedPaths: inout Set<String>,
        into plan: inout PullPlan
    ) {
        if let result = decision.result, result.path != local?.path {
            let placed = Self.placed(result) { path in
                !claimedPaths.contains(path)
                    && (decided.vacated.contains(path) || (decided.trackedByPath[path] == nil && !isOccupied(path)))
            }
            decision.result = placed.version
            if let notice = placed.notice { plan.notices.append(notice.description) }
        }
        if let result = decision.result { claimedPaths.insert(result.path) }
    }

    /// The contents the document's outcome reads (`DocumentPlan.reads`).
    private func read(
        _ document: DocumentPlan, entry: RemoteEntry, remoteBytes: () throws -> [UInt8]
    ) throws -> DocumentContent {
        let reads = document.reads
        var content = DocumentContent()
        if reads.contains(.remote) { content.remote = try remoteBytes() }
        if reads.contains(.local) { content.local = try document.start.local.map { try readObject($0.hash) } }
        if reads.contains(.base) { content.base = try document.start.base.map { try readObject($0.hash) } }
        if reads.contains(.deleted) { content.deleted = readDeleted(entry) }
        return content
    }

    /// The kept version's bytes, where the fields the lost version differs in must be
    /// found by comparing the two (no merge named them).
    private func winnerBytes(_ settled: SettledContent, content: DocumentContent, plan: PullPlan) -> [UInt8]? {
        guard settled.decision.loser != nil, settled.settled?.fields.isEmpty ?? true,
            let result = settled.decision.result
        else { return nil }
        return plan.objects[result.hash] ?? (try? readObject(result.hash))
    }

    /// The journal entries that follow the document's outcome (`bookkeeping`).
    private func record(
        _ result: DocVersion?, of entry: RemoteEntry, local: DocVersion?, decided: Decided, into plan: inout PullPlan
    ) {
        let published =
            entry.publishedHash.map { hash in
                entry.version.map { DocVersion(refId: $0.refId, changesetId: "", hash: hash, path: $0.path) }
            } ?? entry.version
        let refId = entry.refId
        let bookkeeping = Self.bookkeeping(
            refId: refId, local: local, result: result, published: published,
            remoteChangesetId: entry.changesetId, remotePath: entry.path,
            pending: decided.pendingVersions[refId] ?? [], remerged: plan.remerged.contains(refId),
            userMadeFrom: userVersions[refId]?.madeFrom ?? [], landedPending: landedPending[refId] ?? [])
        plan.batch += bookkeeping.entries
        if let pulled = bookkeeping.pulled { plan.pulled.append(pulled) }
    }
}
