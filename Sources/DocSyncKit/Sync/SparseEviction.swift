import Foundation

/// Which documents leave a sparse replica: those whose file is outside its selection.
/// A document leaves only when the remote already has what the tree holds (no local
/// change pending, no remote change held aside, a valid file); the others stay, with
/// why, until they are synced, or go with `--force` (their versions kept: see
/// `SparseService.evict`). Pure: the replica's documents in, the plan out.
enum SparseEviction {
    struct Leaving: Equatable {
        var refId: String
        /// What the tree holds now (nil: deleted here, the deletion not sent yet).
        var now: DocVersion?
        var base: DocVersion?
        /// Pending local actions dropped with it (`--force` only).
        var droppedSeqs: [Int] = []
        /// The file is not a valid document (`--force` only): kept aside, then removed.
        var invalid = false

        var path: String { now?.path ?? base?.path ?? refId }
    }

    struct Plan: Equatable {
        var leaving: [Leaving] = []
        /// Documents outside the selection that stay, by path, with why.
        var staying: [(path: String, why: String)] = []

        static func == (a: Plan, b: Plan) -> Bool {
            a.leaving == b.leaving && a.staying.map(\.path) == b.staying.map(\.path)
        }
    }

    static func plan(
        base: [String: DocVersion], pending: [JournalEntry], held: Set<String>, invalidPaths: Set<String>,
        selection: SparseSelection, force: Bool
    ) -> Plan {
        let changed = PullPlanner.PendingVersion.byDocument(pending)
        var plan = Plan()
        for refId in Set(base.keys).union(changed.keys).sorted() {
            // What the last pending action left (nil: deleted here), else the base.
            let current = changed[refId]?.last.map(\.version) ?? base[refId]
            var leaving = Leaving(refId: refId, now: current, base: base[refId])
            guard !selection.contains(leaving.path) else { continue }
            var why: String?
            if let actions = changed[refId] {
                why = "it has changes not sent yet"
                leaving.droppedSeqs = actions.map(\.seq)
            } else if held.contains(refId) {
                why = "a remote change to it is held aside"
            }
            if let path = current?.path, invalidPaths.contains(path) {
                why = "it is not a valid document"
                leaving.invalid = true
            }
            if let why, !force {
                plan.staying.append((leaving.path, why))
                continue
            }
            plan.leaving.append(leaving)
        }
        plan.leaving.sort { $0.path < $1.path }
        return plan
    }
}
