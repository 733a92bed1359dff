import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Conflicts: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List documents whose versions collided, and where the losing versions are kept.",
            discussion: "Each line: the document, which fields collided (field merge) or the whole document, the version kept and the version stored in .docsync/conflicts/, and when. Settle one with `docsync resolve DOC`."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Include conflicts already resolved.")
        var all = false

        func run() throws {
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: true)
            defer { workspace.close() }
            let records = workspace.conflicts(all: all)
            if global.json { try Output.json(records); return }
            if records.isEmpty { Output.line(all ? "No conflicts recorded." : "No open conflicts."); return }
            for r in records {
                let what = r.fields.map { $0.isEmpty ? "whole document" : "fields " + $0.joined(separator: ", ") } ?? "whole document"
                Output.line("\(r.path)  (\(r.refId))")
                Output.line("  \(what); policy \(r.policy ?? "lww"); \(Output.time(r.time))" + (r.resolved.map { "; resolved \(Output.time($0))" } ?? ""))
                Output.line("  kept    \(r.winner)")
                Output.line("  stored  \(r.changesetId) (\(r.side) version) in \(r.file ?? "?")")
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Settle a document's conflict.",
            discussion: "--take local or --take remote makes that side's version the document (bringing it back from the conflict store if it lost); --take ID brings back the stored version with that changesetId (or prefix). Without --take, the document is accepted as it is now (after you edited it by hand). The result is journaled and pushed like any edit."
        )
        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("local, remote, or a stored changesetId.", valueName: "SIDE|ID"))
        var take: String?

        @Flag(name: .long, help: "Show what would be done; change nothing.")
        var dryRun = false

        @Argument(help: "The document: a path or refId.")
        var document: String

        func run() throws {
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: dryRun)
            defer { workspace.close() }
            let report = try workspace.resolve(document, relativeTo: global.workingDirectory, take: take, dryRun: dryRun)
            try SyncPrinter(global: global).finish(report, verb: "Resolved")
        }
    }
}
