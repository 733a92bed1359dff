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
            Remove.self, Log.self, Restore.self, Conflicts.self, Resolve.self, Verify.self, GC.self, ConfigCommand.self,
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

/// Exit codes with docsync's meanings (documented in the man page).
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

@main
enum Main {
    static func main() {
        let typed = Array(CommandLine.arguments.dropFirst())
        Usage.check(typed)
        ReplicaInfo.softwareVersion = DocSyncVersion.string
        Workspace.keepLastUntilExit = true
        let arguments = hoistGlobalOptions(typed)
        let wantsJSON = arguments.prefix { $0 != "--" }.contains("--json")
        var commandName = "docsync"
        do {
            var command = try DocSync.parseAsRoot(arguments)
            commandName = type(of: command)._commandName
            try command.run()
            StandardOutput.finish()
        } catch {
            if DocSync.exitCode(for: error) == .validationFailure {
                fail(
                    DocSync.fullMessage(for: error), code: ExitStatus.usage, errorCode: "usage", json: wantsJSON,
                    plain: true)
            }
            if let reason = tryAgainLaterReason(error) {
                // Kept for `docsync status`; a quiet (cron) run says nothing: exit 75 is
                // the whole message.
                if let directory = Output.workingDirectory {
                    DeferredAttempt.record(treeContaining: directory, command: commandName, reason: reason)
                }
                if !Output.quietRequested { Output.error(reason) }
                // With --json the object says it, unless the command's report already did.
                if wantsJSON {
                    fail(
                        nil, code: ExitStatus.tempFail, errorCode: ErrorCode.of(error, exitCode: 75), json: true,
                        jsonMessage: reason)
                }
                StandardOutput.finish()
                Foundation.exit(ExitStatus.tempFail.rawValue)
            }
            if let failure = error as? CommandFailure {
                fail(
                    failure.message, code: failure.code,
                    errorCode: ErrorCode.of(error, exitCode: failure.code.rawValue), json: wantsJSON)
            }
            if DocSync.exitCode(for: error) != .success, !(error is ExitCode), !(error is CleanExit),
                !isParserError(error)
            {
                let code = exitCode(for: error)
                fail(
                    describe(error), code: code, errorCode: ErrorCode.of(error, exitCode: code.rawValue),
                    json: wantsJSON)
            }
            if wantsJSON, let code = error as? ExitCode, code != .success, !Output.printedJSON {
                // A failure the command did not describe (e.g. --quiet's bare exit 75).
                fail(nil, code: code, errorCode: code == ExitStatus.tempFail ? "try-again-later" : "error", json: true)
            }
            if DocSync.exitCode(for: error) == .success {
                // Help and --version through StandardOutput, so `docsync --help >/dev/full`
                // fails (exit 1) instead of losing the text with exit 0.
                let text = DocSync.fullMessage(for: error)
                if !text.isEmpty { StandardOutput.write(text + "\n") }
                StandardOutput.finish()
                Foundation.exit(0)
            }
            StandardOutput.finish()
            DocSync.exit(withError: error)
        }
    }

    /// Reports a failure and exits with `code`: on stderr (`plain`: as the parser words it),
    /// and with --json also as the error object on stdout, unless a report was printed.
    static func fail(
        _ message: String?, code: ExitCode, errorCode: String, json: Bool, plain: Bool = false,
        jsonMessage: String? = nil
    ) -> Never {
        if let message {
            if plain { FileHandle.standardError.write(Data((message + "\n").utf8)) } else { Output.error(message) }
        }
        if json && !Output.printedJSON {
            let text =
                jsonMessage ?? message.map { plain ? $0.replacingOccurrences(of: "Error: ", with: "") : $0 }
                ?? "exit \(code.rawValue)"
            try? Output.json(JSONError(error: .init(code: errorCode, message: text.firstLine, exitCode: code.rawValue)))
        }
        StandardOutput.finish()
        Foundation.exit(code.rawValue)
    }

    /// The message of an error that means "try again later" (exit 75), else nil.
    static func tryAgainLaterReason(_ error: Error) -> String? {
        if let failure = error as? CommandFailure { return failure.code == ExitStatus.tempFail ? failure.message : nil }
        if error is ExitCode || error is CleanExit || isParserError(error) { return nil }
        return exitCode(for: error) == ExitStatus.tempFail ? describe(error) : nil
    }

    static func isParserError(_ error: Error) -> Bool {
        String(reflecting: type(of: error)).contains("ArgumentParser")
    }

    /// Moves `-C DIR`, `-q`, `-v`, `--json` written before the command name to after it,
    /// so `docsync -C DIR status` works like git.
    static func hoistGlobalOptions(_ args: [String]) -> [String] {
        var globals: [String] = []
        var i = 0
        while i < args.count {
            let a = args[i]
            if a == "-C", i + 1 < args.count {
                globals += [a, args[i + 1]]
                i += 2
                continue
            }
            if ["-q", "--quiet", "-v", "--verbose", "--json"].contains(a) {
                globals.append(a)
                i += 1
                continue
            }
            break
        }
        guard !globals.isEmpty, i < args.count else { return args }
        let commands = DocSync.configuration.subcommands.map { $0._commandName }
        guard commands.contains(args[i]) || args[i].hasPrefix("-") else {
            fail(
                "Error: unknown command '\(args[i])'\nUsage: docsync <subcommand>\n  See 'docsync --help' for the commands.",
                code: ExitStatus.usage,
                errorCode: "usage", json: globals.contains("--json"), plain: true)
        }
        guard commands.contains(args[i]) else { return args }
        // After a nested command's name too (`docsync --json replicas forget NAME`).
        var end = i + 1
        if let command = DocSync.configuration.subcommands.first(where: { $0._commandName == args[i] }),
            end < args.count,
            command.configuration.subcommands.contains(where: { $0._commandName == args[end] })
        {
            end += 1
        }
        return Array(args[i..<end]) + globals + Array(args[end...])
    }
}
