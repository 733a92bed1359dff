import ArgumentParser
import DocSyncKit
import Foundation

/// An error the command has already described, with the exit code it means.
struct CommandFailure: Error {
    var message: String
    var code: ExitCode
    /// The `error.code` of the `--json` error object (nil: derived from the exit code).
    var errorCode: String? = nil
}

func describe(_ error: Error) -> String {
    (error as? LocalizedError)?.errorDescription ?? String(describing: error)
}

/// Maps engine errors to docsync's exit codes: 75 for "try again later", 1 otherwise.
func exitCode(for error: Error) -> ExitCode {
    switch error {
    case RemoteError.unreachable, RemoteError.locked: return ExitStatus.tempFail
    case Workspace.Failure.busy, Workspace.Failure.unreachable, Workspace.Failure.contended: return ExitStatus.tempFail
    // A remote URL that can never work is a usage error: fix the argument.
    case is RemoteAddress.Invalid: return ExitStatus.usage
    default: return .failure
    }
}

/// Everything the commands print goes through here, so --quiet, --verbose and --json
/// behave the same everywhere. Results go to stdout, diagnostics to stderr.
enum Output {
    nonisolated(unsafe) static var quiet = false
    nonisolated(unsafe) static var verbose = false
    /// Set once a `--json` object went to stdout: a later failure must not print a second one.
    nonisolated(unsafe) static var printedJSON = false
    static let isTerminal = isatty(STDERR_FILENO) != 0
    /// Colour only on a terminal, and never when NO_COLOR is set and not empty
    /// (https://no-color.org).
    static let colour = isTerminal && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty

    /// Writes to stderr after what stdout holds so far, so that with both in one file
    /// (`2>&1`, a cron mail) the lines come in the order they happened, as on a terminal.
    static func writeStderr(_ text: String) {
        StandardOutput.flush()
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// `--quiet` as given (not implied by --json): "try again later" is then silent.
    nonisolated(unsafe) static var quietRequested = false
    /// Where the command runs (`-C` applied), once it has parsed its options.
    nonisolated(unsafe) static var workingDirectory: String?

    static func configure(_ options: GlobalOptions) {
        quiet = options.quiet || options.json
        quietRequested = options.quiet
        workingDirectory = options.workingDirectory
        verbose = options.verbose
    }

    static func line(_ text: String) {
        guard !quiet else { return }
        print(text)
    }

    static func detail(_ text: String) {
        guard verbose && !quiet else { return }
        print(text)
    }

    static func error(_ text: String) {
        let prefix = colour ? "\u{1B}[31merror:\u{1B}[0m " : "error: "
        writeStderr("docsync: " + prefix + text + "\n")
    }

    static func warning(_ text: String) {
        guard !quiet || verbose else { return }
        writeStderr("docsync: warning: " + text + "\n")
    }

    /// A document problem in compiler style: `path:line:col: error: reason`.
    static func problem(_ text: String) {
        writeStderr(text.replacingFirstColonGroup() + "\n")
    }

    /// Prints `value` as the command's one `--json` object (see JSONDocument).
    static func json<T: Encodable>(_ value: T, command: String? = nil) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(JSONDocument(command: command, body: value)), as: UTF8.self)
        // `[]` and `{}` on one line (the encoder spreads them over three). Safe: a newline
        // inside a JSON string is always escaped.
        print(text.replacing(#/([\[{])\n\s*\n\s*([\]}])/#) { "\($0.1)\($0.2)" })
        printedJSON = true
    }

    /// The one time format of text and JSON output: RFC 3339 in UTC.
    static func time(_ millis: Int64?) -> String {
        guard let millis else { return "never" }
        return Timestamp.rfc3339(millis)
    }
}

extension String {
    /// "a.json:3:7: reason" → "a.json:3:7: error: reason".
    func replacingFirstColonGroup() -> String {
        guard let range = range(of: ": ") else { return "error: " + self }
        return String(self[..<range.lowerBound]) + ": error: " + String(self[range.upperBound...])
    }
}
