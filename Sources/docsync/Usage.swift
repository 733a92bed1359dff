import ArgumentParser
import Foundation

/// What the command line does before parsing: a missing or unknown command name is a
/// usage error (exit 2, usage on stderr), with the nearest command suggested, like git's
/// "did you mean".
enum Usage {
    static var commandNames: [String] { DocSync.configuration.subcommands.map { $0._commandName } }

    /// Exits 2 if `args` (as typed, global options possibly first) name no command,
    /// an unknown one, or `help` of an unknown one.
    static func check(_ args: [String]) {
        var i = 0
        while i < args.count {
            if args[i] == "-C" {
                i += 2
                continue
            }
            if ["-q", "--quiet", "-v", "--verbose", "--json"].contains(args[i]) {
                i += 1
                continue
            }
            break
        }
        guard i < args.count else { fail(nil) }
        let word = args[i]
        // Options (--help, --version, --generate-completion-script…) are the parser's.
        if word.hasPrefix("-") { return }
        if word == "help" {
            if i + 1 < args.count, !args[i + 1].hasPrefix("-"), !commandNames.contains(args[i + 1]) {
                fail("unknown command '\(args[i + 1])'" + suggestion(for: args[i + 1]))
            }
            return
        }
        if !commandNames.contains(word) {
            fail("'\(word)' is not a docsync command" + suggestion(for: word))
        }
    }

    private static func fail(_ message: String?) -> Never {
        let prefix = Output.colour ? "\u{1B}[31merror:\u{1B}[0m " : "error: "
        var text = message.map { "docsync: " + prefix + $0 + "\n\n" } ?? ""
        text += DocSync.helpMessage(columns: 100) + "\n"
        FileHandle.standardError.write(Data(text.utf8))
        if CommandLine.arguments.dropFirst().prefix(while: { $0 != "--" }).contains("--json") {
            let detail = JSONError.Detail(
                code: "usage", message: message ?? "no command given; see 'docsync --help'",
                exitCode: ExitStatus.usage.rawValue)
            try? Output.json(JSONError(error: detail))
            StandardOutput.finish()
        }
        exit(ExitStatus.usage.rawValue)
    }

    /// "; did you mean 'status'?" for a word at most two edits from a command (or a
    /// prefix of exactly one), else "".
    static func suggestion(for word: String) -> String {
        let names = commandNames + ["help"]
        let prefixed = names.filter { $0.hasPrefix(word) }
        if prefixed.count == 1 { return "; did you mean '\(prefixed[0])'?" }
        let scored = names.map { ($0, distance($0, word)) }.filter { $0.1 <= 2 }.sorted { $0.1 < $1.1 }
        guard let best = scored.first else { return ". See 'docsync --help'" }
        return "; did you mean '\(best.0)'?"
    }

    /// Edit distance counting a swap of two neighbours as one edit (so "stauts" is one
    /// away from "status").
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a)
        let y = Array(b)
        if x.isEmpty || y.isEmpty { return max(x.count, y.count) }
        var d = Array(repeating: Array(repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                let cost = x[i - 1] == y[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[x.count][y.count]
    }
}
