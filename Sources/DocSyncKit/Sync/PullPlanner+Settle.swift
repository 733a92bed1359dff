import DocSyncJSON

extension PullPlanner {
    /// How a path's policy settled content changed on both sides: the policy, the fields
    /// that collided, whether the result is a merge.
    typealias Settled = (policy: MergePolicy, fields: [String], merged: Bool)

    /// Content changed on both sides (`decision.loser` set): the same edit made on both
    /// sides differs only in the stamped changesetId and is taken as the remote's, no
    /// conflict (but two equal additions to a counter are two additions); otherwise the
    /// policy for the path settles it (field merge by default) and `decision` becomes its
    /// outcome. Nil when nothing was settled by a policy.
    func settleContent(
        of decision: inout Reconciler.Decision, remote remoteVersion: DocVersion, remoteBytes: [UInt8],
        base: DocVersion?, mergeLocal: DocVersion?, counters: Set<String>, arrayRules: FieldMerge.ArrayRules,
        in plan: inout PullPlan
    ) throws -> Settled? {
        guard decision.loser != nil else { return nil }
        let localBytes = try mergeLocal.map { try readObject($0.hash) }
        let baseBytes = try base.map { try readObject($0.hash) }
        if decision.loser != nil, let mergeLocal, let localBytes,
            ContentIdentity.sameApartFromChangesetId(localBytes, remoteBytes),
            !(config.policy(for: decision.result?.path ?? mergeLocal.path) == .merge
                && ContentPolicy.changesCounters(base: baseBytes, edited: localBytes, counters: counters))
        {
            decision.loser = nil
            decision.contentFrom = .remote
            decision.notice = nil
            decision.result = DocVersion(
                refId: remoteVersion.refId, changesetId: remoteVersion.changesetId, hash: remoteVersion.hash,
                path: decision.result?.path ?? remoteVersion.path)
        }
        if decision.loser != nil, let mergeLocal, let localBytes, let target = decision.result?.path {
            let policy = config.policy(for: target)
            let outcome = ContentPolicy(policy: policy, counters: counters, arrays: arrayRules).settle(
                base: baseBytes, local: mergeLocal, localBytes: localBytes,
                remote: remoteVersion, remoteBytes: remoteBytes, path: target,
                newChangesetId: { clock.next().description })
            if let merged = outcome.mergedBytes { plan.objects[outcome.result.hash] = merged }
            decision.result = outcome.result
            decision.contentFrom = outcome.contentFrom ?? .local
            decision.loser = outcome.loser
            decision.notice = outcome.notice
            return (policy, outcome.fields, outcome.mergedBytes != nil)
        }
        return nil
    }
}
