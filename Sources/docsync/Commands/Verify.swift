import ArgumentParser
import DocSyncKit

extension DocSync {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check the tree, the journal, the sync state and the remote.",
            discussion:
                "Prints every problem found and exits 1 if there is any; changes nothing. A folder remote is walked whole: a symbolic link anywhere under its root is a problem (docsync never reads or writes through one)."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Do not check the remote.")
        var localOnly = false

        func run() throws {
            try global.withWorkspace(readOnly: true) { workspace in
                let problems = workspace.checks.verify(includeRemote: !localOnly)
                try global.printResult(
                    command: "verify", VerifyJSON(ok: problems.isEmpty, remoteChecked: !localOnly, problems: problems)
                ) {
                    for p in problems { Output.problem(p) }
                    if problems.isEmpty {
                        Output.line("OK: tree, journal, state" + (localOnly ? "" : " and remote") + " verified")
                    }
                }
                if !problems.isEmpty {
                    throw CommandFailure(message: "\(problems.count) problem(s) found", code: .failure)
                }
            }
        }
    }

    struct VerifyJSON: Encodable {
        var ok: Bool
        var remoteChecked: Bool
        var problems: [String]
    }
}
