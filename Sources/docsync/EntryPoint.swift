import ArgumentParser
import DocSyncKit
import Foundation

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
            finish(after: error, command: commandName, json: wantsJSON)
        }
    }

    /// Says what went wrong (on stderr, and with --json as the error object unless the
    /// command's report already went out) and exits with the code the error means.
    static func finish(after error: Error, command: String, json: Bool) -> Never {
        if DocSync.exitCode(for: error) == .validationFailure {
            fail(DocSync.fullMessage(for: error), code: ExitStatus.usage, errorCode: "usage", json: json, plain: true)
        }
        if let reason = tryAgainLaterReason(error) { tryAgainLater(reason, error: error, command: command, json: json) }
        if let failure = error as? CommandFailure {
            fail(
                failure.message, code: failure.code,
                errorCode: ErrorCode.of(error, exitCode: failure.code.rawValue), json: json)
        }
        if DocSync.exitCode(for: error) != .success, !(error is ExitCode), !(error is CleanExit), !isParserError(error)
        {
            let code = exitCode(for: error)
            fail(describe(error), code: code, errorCode: ErrorCode.of(error, exitCode: code.rawValue), json: json)
        }
        if json, let code = error as? ExitCode, code != .success, !Output.printedJSON {
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

    /// Exit 75: the reason is kept for `docsync status`; a quiet (cron) run says nothing,
    /// exit 75 is the whole message.
    static func tryAgainLater(_ reason: String, error: Error, command: String, json: Bool) -> Never {
        if let directory = Output.workingDirectory {
            DeferredAttempt.record(treeContaining: directory, command: command, reason: reason)
        }
        if !Output.quietRequested { Output.error(reason) }
        // With --json the object says it, unless the command's report already did.
        if json {
            fail(
                nil, code: ExitStatus.tempFail, errorCode: ErrorCode.of(error, exitCode: 75), json: true,
                jsonMessage: reason)
        }
        StandardOutput.finish()
        Foundation.exit(ExitStatus.tempFail.rawValue)
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
