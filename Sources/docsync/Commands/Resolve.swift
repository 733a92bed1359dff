import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Settle a document's conflict.",
            discussion:
                "--take local or --take remote gives the colliding fields that side's values, on top of the document as it is now: edits made since the conflict are kept. Local is what this replica has: its own version where it lost, else the document as it is (on a replica that made neither version, --take local changes nothing). --take REPLICA takes the version (or deletion) that replica made. --take ID does the same with the stored version with that changesetId (or prefix). For a deletion that lost to an edit, taking the deleting side deletes the document. --whole brings the whole stored version back instead (and says which later edits that undoes). Without --take, the document is accepted as it is now (after you edited it by hand). The result is journaled and pushed like any edit (a result that is exactly the synced version puts that version back, as revert does), and the settlement closes the conflict on every replica at their next sync."
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
            try global.withChange(dryRun: dryRun, verb: "Resolved", command: "resolve") { workspace in
                try workspace.conflicts.resolve(
                    document, relativeTo: global.workingDirectory, take: take.map(ResolveTake.init(argument:)) ?? .asIs,
                    whole: whole, dryRun: dryRun)
            }
        }
    }
}
