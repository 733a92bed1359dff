extension PullPlanner {
    /// One pending local action of a document, as the planner needs it: its journal
    /// number, the version it leaves, and the published versions its content carried.
    struct PendingVersion: Equatable {
        var seq: Int
        var version: DocVersion?
        var madeFrom: [String] = []
    }

    /// What a document's three-way decision starts from. A pure function of the
    /// document's own inputs (see `decisionStart`).
    struct DecisionStart: Equatable {
        /// The version both sides are measured from.
        var base: DocVersion?
        /// The version decided as "local": the file's, or the user's where an earlier pull
        /// of this run already merged the document.
        var local: DocVersion?
        /// Pending actions a push that landed already finished (journaled as pushed).
        var landedSeqs: [Int] = []
        /// Decided again from what the user had (see `userVersions`).
        var remerged = false
    }

    /// Which base and which local version a document is decided from, in this order:
    /// 1. the remote holds a version of this tree's pending actions (a push that landed
    ///    but was never journaled as pushed: a crash between the remote's commit and
    ///    `done`): that version is the base, and the actions up to it are finished;
    /// 2. the same, where the tree's own commits hold that version and another replica
    ///    built on it before this pull (`ownVersions`);
    /// 3. an earlier pull of this run merged the document (`user`) and the base or the
    ///    file moved since: decide again from what the user had;
    /// 4. otherwise the tree's base and file, measured from `mergeBase` when the pending
    ///    content carries versions beyond the base.
    static func decisionStart(
        base: DocVersion?, local: DocVersion?, remote: DocVersion?, pending: [PendingVersion],
        ownVersions: Set<String>?, user: UserVersion?, mergeBase: DocVersion?
    ) -> DecisionStart {
        func landed(through index: Int) -> [Int] { pending[...index].map(\.seq) }
        if let remote, remote != base, let index = pending.lastIndex(where: { $0.version == remote }) {
            return DecisionStart(base: remote, local: local, landedSeqs: landed(through: index))
        }
        if let ownVersions,
            let index = pending.lastIndex(where: { $0.version.map { ownVersions.contains($0.changesetId) } ?? false }),
            let version = pending[index].version, version != base
        {
            return DecisionStart(base: version, local: local, landedSeqs: landed(through: index))
        }
        if let user, user.base != base || user.local != local {
            return DecisionStart(base: mergeBase ?? user.base, local: user.local, remerged: true)
        }
        return DecisionStart(base: mergeBase ?? base, local: local)
    }
}
