import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct Sparse: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sparse",
            abstract: "Keep only some parts of the remote here: a sparse replica.",
            discussion:
                "The selection is a list of folders, files and gitignore-style patterns (`contacts/`, `tasks/2026/`, `*.json`, `!contacts/old/` to leave a part out), kept in .docsync/sparse: per replica, never synced. A folder or file path names that place at the tree's root. The remote keeps everything: a sparse replica pulls only what its selection names, and sends only what it holds; a document outside the selection is never deleted, moved or changed on the remote because this replica does not hold it. A document moved out of the selection (here or by another replica) is a rename on the remote and leaves this tree once the remote has it; one moved in arrives. Widening pulls the new part (with progress); narrowing removes the files that are synced and unchanged, and keeps any with changes not sent yet, a remote change held aside, or that is not valid, until they are synced (or --force: changes not sent are dropped, their versions kept for `docsync restore`; an invalid file is kept under .docsync/rejected/). `docsync status` shows the selection and the files outside it that are not synced. Without a selection a replica keeps everything.",
            subcommands: [List.self, Set.self, Add.self, Remove.self, Reapply.self, Disable.self],
            defaultSubcommand: List.self
        )

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list",
                abstract: "Print the selection, one pattern per line (the default).",
                discussion: "Prints nothing but a note when the replica keeps everything.")
            @OptionGroup var global: GlobalOptions

            func run() throws {
                try global.withWorkspace(readOnly: true) { workspace in
                    let selection = try workspace.sparse.selection()
                    try global.printResult(
                        command: "sparse list", SelectionJSON(patterns: selection?.patterns)
                    ) {
                        guard let selection else {
                            Output.line("this replica keeps everything (no selection)")
                            return
                        }
                        for pattern in selection.patterns { Output.line(pattern) }
                    }
                }
            }
        }

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set",
                abstract: "Keep only these parts of the remote (replaces the selection).")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var flags: SparseFlags
            @Argument(help: "Folders, files or gitignore-style patterns.")
            var patterns: [String]

            func run() throws { try flags.change(.set(patterns), global: global) }
        }

        struct Add: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add",
                abstract: "Keep these parts of the remote too, and pull them.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var flags: SparseFlags
            @Argument(help: "Folders, files or gitignore-style patterns.")
            var patterns: [String]

            func run() throws { try flags.change(.add(patterns), global: global) }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "remove",
                abstract: "Stop keeping these parts of the remote here (their synced files are removed).")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var flags: SparseFlags
            @Argument(help: "Patterns as `docsync sparse list` prints them (or as they were given).")
            var patterns: [String]

            func run() throws { try flags.change(.remove(patterns), global: global) }
        }

        struct Reapply: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "reapply",
                abstract: "Apply the selection again: remove files outside it that have been synced since.",
                discussion: "With --force, also the files kept because of changes not sent or problems.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var flags: SparseFlags

            func run() throws { try flags.change(.reapply, global: global) }
        }

        struct Disable: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "disable",
                abstract: "Keep everything again: drop the selection and pull the rest of the remote.")
            @OptionGroup var global: GlobalOptions
            @OptionGroup var flags: SparseFlags

            func run() throws { try flags.change(.disable, global: global) }
        }
    }
}

/// The flag every change of the selection takes.
struct SparseFlags: ParsableArguments {
    @Flag(
        name: .long,
        help:
            "Remove files outside the selection even if they have changes not sent (dropped; their versions stay restorable with `docsync restore`) or are not valid (kept under .docsync/rejected/)."
    )
    var force = false

    @Flag(name: .long, help: "Show what would be removed and pulled; change nothing, locally or on the remote.")
    var dryRun = false

    func change(_ change: SparseService.Change, global: GlobalOptions) throws {
        try global.withWorkspace(readOnly: dryRun) { workspace in
            let view = ProgressView(global: global)
            workspace.progress = view.handler
            let report: SyncReport
            do {
                report = try workspace.sparse.change(change, force: force, dryRun: dryRun)
                view.clear()
            } catch {
                view.clear()
                throw error
            }
            let selection = dryRun ? try workspace.sparse.proposed(change) : try workspace.sparse.selection()
            let line =
                selection.map { "(selection: " + $0.patterns.joined(separator: " ") + ")" }
                ?? "(no selection: keeps everything)"
            try SyncPrinter(global: global, streamed: view.streamed).finish(
                report, verb: "Selection changed", command: "sparse", extraLine: line,
                extra: SelectionJSON(patterns: selection?.patterns))
        }
    }
}

/// `sparse` in `--json`: the selection (null: the replica keeps everything).
struct SelectionJSON: Encodable {
    var patterns: [String]?

    private enum Key: String, CodingKey { case selection }
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        if let patterns {
            try container.encode(patterns, forKey: .selection)
        } else {
            try container.encodeNil(forKey: .selection)
        }
    }
}
