import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List documents whose versions collided, and where the losing versions are kept.",
            discussion:
                "Each line: the document, which fields collided (field merge) or the whole document, the version kept and the version stored in .docsync/conflicts/, and when. Settle one with `docsync resolve DOC`."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Include conflicts already resolved.")
        var all = false

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                let records = workspace.conflicts.list(all: all)
                if global.json {
                    try Output.json(
                        ["conflicts": records.map { ConflictJSON(record: $0, replicaId: workspace.config.replicaId) }],
                        command: "conflicts")
                    return
                }
                if records.isEmpty {
                    Output.line(all ? "No conflicts recorded." : "No open conflicts.")
                    return
                }
                let own = workspace.config.replicaId
                let names = workspace.replicas.names(
                    fromRemote: records.contains { r in
                        [r.replica, r.lostBy, ChangesetID(r.winner)?.replica].contains { $0.map { $0 != own } ?? false }
                    })
                for r in records {
                    let what =
                        r.fields.map { $0.isEmpty ? "whole document" : "fields " + $0.joined(separator: ", ") }
                        ?? "whole document"
                    let now = workspace.conflicts.currentPath(of: r.refId)
                    Output.line(
                        "\(now ?? r.path)  (\(r.refId))"
                            + (r.renameLost == true || now == nil || now == r.path ? "" : "  (was \(r.path))"))
                    let view = workspace.conflicts.pointOfView(of: r)
                    let by =
                        r.replica.map {
                            $0 == own ? "" : "; recorded by replica \(ReplicaLabel.text($0, names: names))"
                        }
                        ?? ""
                    let decided =
                        r.renameLost == true
                        ? "renamed on both sides: the name \(r.path) lost"
                        : r.deleted == true
                            ? "a deletion lost to an edit" : "\(what); policy \((r.policy ?? .lww).rawValue)"
                    Output.line(
                        "  \(decided); \(Output.time(r.time))\(by)"
                            + (r.resolved.map {
                                "; resolved \(Output.time($0))" + (r.take.map { " (took \($0))" } ?? "")
                            }
                                ?? ""))
                    Output.line("  " + view.sentence(r) { $0 == own ? "this replica" : names[$0] ?? $0 })
                    Output.line(
                        "  kept    \(r.winner)\(view.keptBy.map { " (by \(ReplicaLabel.text($0, names: names)))" } ?? "")"
                    )
                    let owner =
                        view.storedIsLocal ? "local" : view.storedBy.map { (names[$0] ?? $0) + "'s" } ?? "remote"
                    Output.line(
                        "  stored  \(r.changesetId) (\(owner) \(r.deleted == true ? "deletion" : "version")) in \(r.file ?? "?")"
                    )
                }
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle a document's conflict.",
            discussion:
                "--take local or --take remote gives the colliding fields that side's values, on top of the document as it is now: edits made since the conflict are kept. Local is what this replica has: its own version where it lost, else the document as it is (on a replica that made neither version, --take local changes nothing). --take REPLICA takes the version (or deletion) that replica made. --take ID does the same with the stored version with that changesetId (or prefix). For a deletion that lost to an edit, taking the deleting side deletes the document. --whole brings the whole stored version back instead (and says which later edits that undoes). Without --take, the document is accepted as it is now (after you edited it by hand). The result is journaled and pushed like any edit, and the settlement closes the conflict on every replica at their next sync."
        )
        @OptionGroup var global: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "local (what this replica has), remote, a replica's name or id, or a stored changesetId: whose values the colliding fields get.",
                valueName: "SIDE|REPLICA|ID"))
        var take: String?

        @Flag(
            name: .long,
            help:
                "Replace the whole document with the stored version taken (undoes edits made since the conflict; the output says which)."
        )
        var whole = false

        @Flag(name: .long, help: "Show what would be done; change nothing.")
        var dryRun = false

        @Argument(help: "The document: a path or refId.")
        var document: String

        func run() throws {
            try global.withWorkspace(readOnly: dryRun) { workspace in
                let report = try workspace.conflicts.resolve(
                    document, relativeTo: global.workingDirectory, take: take, whole: whole, dryRun: dryRun)
                try SyncPrinter(global: global).finish(report, verb: "Resolved", command: "resolve")
            }
        }
    }
}
