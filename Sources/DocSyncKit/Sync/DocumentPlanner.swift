import DocSyncJSON

/// A pull's decisions for one document, as pure functions: no I/O, no clock, no text for
/// people (notices are `DocumentNotice` values). `PullPlanner` reads what they ask for
/// and carries their results into the `PullPlan`. In order:
/// 1. `decide`: which base and local version the document is decided from, and the
///    three-way decision (or holding the remote version aside while the file is invalid);
/// 2. `settle`: content changed on both sides is settled by the path's policy;
/// 3. `losses`: the versions the outcome lost, each with its conflict record;
/// 4. `PullPlanner.bookkeeping`: the journal entries that follow.
enum DocumentPlanner {
    /// What the planner reads from the configuration, once per pull.
    struct Settings {
        var config: Config
        var counters: Set<String>
        var arrayRules: FieldMerge.ArrayRules
        var replicaId: String

        init(config: Config, replicaId: String) {
            self.config = config
            self.counters = config.counters
            self.arrayRules = config.arrayRules
            self.replicaId = replicaId
        }
    }

    /// How a path's policy settled content changed on both sides: the policy, the fields
    /// that collided, whether the result is a merge.
    typealias Settled = (policy: MergePolicy, fields: [String], merged: Bool)

    static func decide(_ inputs: DocumentInputs) -> DocumentPlan {
        let remote = inputs.entry.version
        let start = PullPlanner.decisionStart(
            base: inputs.base, local: inputs.local, remote: remote, pending: inputs.pending,
            ownVersions: inputs.ownVersions, user: inputs.user, mergeBase: inputs.mergeBase)
        let decision = Reconciler.decide(
            base: start.base, local: start.local, remote: remote, localMovedAt: inputs.localMovedAt,
            remoteMovedAt: inputs.entry.movedAt ?? inputs.entry.time)
        // Asked of deletions only. A held deletion carries only its changesetId.
        let deletesAnother =
            remote == nil
            && (inputs.entry.hash.map { $0 != start.base?.hash }
                ?? (inputs.entry.changesetId != start.base?.changesetId))
        let holds = decision.map {
            inputs.localIsUnreadable || (inputs.holdsRemoteChanges && changesTree($0, inputs.local))
        }
        return DocumentPlan(
            start: start, decision: decision, holdsAside: holds ?? false,
            remoteIsDeletion: remote == nil, deletesAnotherVersion: deletesAnother)
    }

    /// Whether carrying out `decision` changes what the tree holds for the document, or
    /// records a loss: anything but taking a remote version that is the local one (the
    /// tree's own push coming back, or a deletion both sides made).
    static func changesTree(_ decision: Reconciler.Decision, _ local: DocVersion?) -> Bool {
        decision.result != local || decision.loser != nil || decision.lostDeletion != nil
            || decision.renameLoser != nil
    }

    /// Content changed on both sides (`decision.loser` set): the same edit made on both
    /// sides differs only in the stamped changesetId and is taken as the remote's, no
    /// conflict (but two equal additions to a counter are two additions); otherwise the
    /// policy for the path settles it (field merge by default) and the decision becomes
    /// its outcome. `newChangesetId` names a merge's new version.
    static func settle(
        _ decision: Reconciler.Decision, remote: DocVersion, start: PullPlanner.DecisionStart,
        content: DocumentContent, settings: Settings, newChangesetId: String
    ) -> SettledContent {
        var out = SettledContent(decision: decision)
        guard decision.loser != nil, let mergeLocal = start.local, let localBytes = content.local,
            let remoteBytes = content.remote
        else { return out }
        let path = decision.result?.path ?? mergeLocal.path
        // The same values in another layout are the same edit too, under every policy. Why:
        // under a whole-document policy they were a conflict with no field in it.
        if ContentIdentity.sameApartFromChangesetId(localBytes, remoteBytes)
            || JSONValue.sameDocument(localBytes, remoteBytes),
            !(settings.config.policy(for: path) == .merge
                && ContentPolicy.changesCounters(base: content.base, edited: localBytes, counters: settings.counters))
        {
            out.decision.loser = nil
            out.decision.contentFrom = .remote
            out.decision.notice = nil
            out.decision.result = DocVersion(
                refId: remote.refId, changesetId: remote.changesetId, hash: remote.hash, path: path)
            return out
        }
        guard let target = decision.result?.path else { return out }
        let policy = settings.config.policy(for: target)
        let outcome = ContentPolicy(policy: policy, counters: settings.counters, arrays: settings.arrayRules).settle(
            base: content.base, local: mergeLocal, localBytes: localBytes, remote: remote, remoteBytes: remoteBytes,
            path: target, newChangesetId: { newChangesetId })
        out.mergedBytes = outcome.mergedBytes
        out.decision.result = outcome.result
        out.decision.contentFrom = outcome.contentFrom ?? .local
        out.decision.loser = outcome.loser
        out.decision.notice = outcome.notice
        out.settled = (policy, outcome.fields, outcome.mergedBytes != nil)
        return out
    }
}
