import ArgumentParser
import DocSyncKit
import Foundation

struct DocSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "docsync",
        abstract: "Keep a folder of JSON documents in sync across machines.",
        discussion: """
            Each document is a *.json file whose top level is an object. docsync gives it a \
            "refId" (identity) and a "changesetId" (version), records every local change in an \
            append-only journal, and reconciles the tree three-way against a remote folder or a git \
            repository (a bare repository by path, file://, git://, ssh://, user@host:path, https://).

            Exit codes: 0 success; 1 error (including files that are not valid JSON); \
            2 usage (also: no command, or an unknown one); 3 (push, pull and sync only) conflicts were recorded; 75 the remote is unreachable or another run \
            holds the tree or the remote (try again later).
            """,
        version: DocSyncVersion.string,
        subcommands: [
            Init.self, Clone.self, Status.self, Push.self, Pull.self, SyncCommand.self,
            Remove.self, Log.self, Restore.self, Revert.self, Override.self, Sparse.self, Conflicts.self, Resolve.self,
            Verify.self,
            GC.self,
            ConfigCommand.self,
            ResetBase.self,
            Edit.self, New.self, Replicas.self, Watch.self, Check.self, Diff.self, Blame.self, MergeDriverCommand.self,
            GitSetupCommand.self
        ]
    )
}

enum DocSyncVersion {
    static let string = "0.1.0"
}

/// Options every command takes. They may also be written before the command name
/// (`docsync -C DIR status`), like git's.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customShort("C"), help: ArgumentHelp("Run as if started in DIR.", valueName: "DIR"))
    var directory: String?

    @Flag(
        name: [.short, .long],
        help: "Print only errors; nothing at all when the run must be tried again later (exit 75).")
    var quiet = false

    @Flag(name: [.short, .long], help: "Print every document touched and every warning.")
    var verbose = false

    @Flag(name: .long, help: "Print one JSON object on stdout (schemaVersion 1, see docs/JSON.md); errors too.")
    var json = false

    var workingDirectory: String {
        guard let directory else { return FileManager.default.currentDirectoryPath }
        return FileSystem.absolute(directory)
    }

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together.") }
        if let directory, !FileSystem.isDirectory(FileSystem.absolute(directory)) {
            throw ValidationError("-C \(directory): no such folder.")
        }
    }
}

/// Every exit code docsync gives, and what each means (README, "Exit codes").
enum ExitStatus {
    static let ok = ExitCode(0)
    static let failure = ExitCode(1)
    static let usage = ExitCode(2)
    static let conflicts = ExitCode(3)
    static let tempFail = ExitCode(75)

    /// The meaning `watch` prints beside a sync's code.
    static func meaning(_ code: ExitCode) -> String {
        switch code {
        case ok: return "ok"
        case conflicts: return "conflicts recorded, see `docsync conflicts`"
        case tempFail: return "try again later"
        default: return "error"
        }
    }
}
