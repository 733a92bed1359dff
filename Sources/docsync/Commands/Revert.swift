import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Revert: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revert",
            abstract: "Put the synced version back over local changes, dropping them.",
            discussion:
                "For every document with local changes under the paths given (files or folders; none: the whole tree): an edit goes back to the version last synced, a document created here is removed, a deleted or moved one comes back where it was; its local changes are dropped, never sent. What a receive-only replica (sync.mode) offers for the changes it keeps; it works on any replica. Whatever is on disk is recorded first, so the reverted versions stay in the journal until `docsync gc` (`docsync restore DOC --at ID` brings one back). A synced version is never written over another file: move that file away first. A document whose file is not valid JSON now is left with its changes (fix or remove the file, then revert it). A reverted document's open conflicts are settled as `docsync resolve DOC --take remote` would settle them."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show what would be reverted; change nothing.")
        var dryRun = false

        @Argument(help: "Files or folders (default: every local change in the tree).")
        var paths: [String] = []

        func run() throws {
            try global.withChange(dryRun: dryRun, verb: "Reverted", command: "revert") { workspace in
                try workspace.reverting.revert(paths: paths, relativeTo: global.workingDirectory, dryRun: dryRun)
            }
        }
    }
}
