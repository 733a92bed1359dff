import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "List documents whose versions collided, and where the losing versions are kept.",
            discussion: """
                Each line: the document, which fields collided (field merge) or the whole document, the \
                version kept and the version stored in .docsync/conflicts/, and when. Settle one with \
                `docsync resolve DOC`.
                """
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Include conflicts already resolved.")
        var all = false

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                let records = workspace.conflicts.list(all: all)
                let own = workspace.config.replicaId
                try global.printResult(
                    command: "conflicts", ["conflicts": records.map { ConflictJSON(record: $0, replicaId: own) }]
                ) {
                    guard !records.isEmpty else {
                        return Output.line(all ? "No conflicts recorded." : "No open conflicts.")
                    }
                    let names = workspace.replicas.names(
                        fromRemote: records.contains { r in
                            [r.replica, r.lostBy, ChangesetID(r.winner)?.replica].contains {
                                $0.map { $0 != own } ?? false
                            }
                        })
                    let text = ConflictText(workspace: workspace, own: own, names: names)
                    for r in records { text.print(r) }
                }
            }
        }
    }
}

/// One conflict as `docsync conflicts` shows it: the document, what was decided and
/// when, who saw what, and the versions kept and stored.
struct ConflictText {
    var workspace: Workspace
    /// This replica's id.
    var own: String
    /// Replica names by id.
    var names: [String: String]

    func print(_ r: ConflictStore.Record) {
        let now = workspace.conflicts.currentPath(of: r.refId)
        Output.line(
            "\(now ?? r.path)  (\(r.refId))"
                + (r.isRename || now == nil || now == r.path ? "" : "  (was \(r.path))"))
        let by = r.replica.map { $0 == own ? "" : "; recorded by replica \(ReplicaLabel.text($0, names: names))" } ?? ""
        let resolved = r.resolution.map {
            "; resolved \(Output.time($0.time))" + ($0.take.map { " (took \($0))" } ?? "")
        }
        Output.line("  \(Self.decision(r)); \(Output.time(r.time))\(by)" + (resolved ?? ""))
        let view = workspace.conflicts.pointOfView(of: r)
        Output.line("  " + view.sentence(r) { $0 == own ? "this replica" : names[$0] ?? $0 })
        Output.line("  kept    \(r.winner)\(view.keptBy.map { " (by \(ReplicaLabel.text($0, names: names)))" } ?? "")")
        let owner =
            view.storedIsLocal
            ? "local"
            : view.storedBy == view.replicaId
                ? "the remote's" : view.storedBy.map { (names[$0] ?? $0) + "'s" } ?? "remote"
        Output.line(
            "  stored  \(r.changesetId) (\(owner) \(r.isDeletion ? "deletion" : "version")) in \(r.file ?? "?")")
    }

    /// What the sync decided: a lost name, a lost deletion, or which fields collided under which policy.
    static func decision(_ r: ConflictStore.Record) -> String {
        switch r.kind {
        case .rename: return "renamed on both sides: the name \(r.path) lost"
        case .deletion: return "a deletion lost to an edit"
        case .version(let policy, let fields):
            let what =
                fields.map { $0.isEmpty ? "whole document" : "fields " + $0.joined(separator: ", ") }
                ?? "whole document"
            // A version kept aside for another reason than a policy (`override`) says it.
            if policy == nil, let reason = r.reason { return "\(what); \(reason)" }
            return "\(what); policy \((policy ?? .lww).rawValue)"
        }
    }
}
