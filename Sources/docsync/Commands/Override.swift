import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Override: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "override",
            abstract: "On a send-only replica, push local versions over the remote changes held aside.",
            discussion:
                "A send-only replica (sync.mode send-only) never applies the remote's changes: they are held aside and listed by `docsync status`, and a local change to a document the remote changed too waits with them. For every such document under the paths given (files or folders; none: all of them), override sends the local version as a new version made from the remote's, then pushes: the remote's history is kept, its version goes to the conflict store (`docsync conflicts` lists it, its maker is told on its next sync, `docsync resolve DOC --take remote` brings its values back). A document deleted here is deleted over the remote's version; one the remote deleted is sent again. A document only the remote has is left alone. Whatever is on disk is recorded first; a document whose file is not valid JSON now is left as it is."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show what would be overridden; change and send nothing.")
        var dryRun = false

        @Argument(help: "Files or folders (default: every remote change held aside).")
        var paths: [String] = []

        func run() throws {
            try global.withChange(dryRun: dryRun, verb: "Overridden", command: "override") { workspace in
                try workspace.overriding.override(paths: paths, relativeTo: global.workingDirectory, dryRun: dryRun)
            }
        }
    }
}
