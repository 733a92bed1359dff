// Console sessions written in the docs (README.md, docs/*.md), replayed against the built
// binary: the `$ ` lines are run in one bash, each followed by what it printed, so the
// transcript can be compared with the text the docs show.

import Foundation
import Testing

enum DocTranscript {
    struct MissingMarkers: Error, CustomStringConvertible {
        var description: String
    }

    /// The text of every ```console block between `<!-- marker` and `<!-- /marker -->` in
    /// `file` (relative to the package root), joined.
    static func section(_ file: String, marker: String) throws -> String {
        let text = try String(contentsOfFile: CLI.packageRoot + "/" + file, encoding: .utf8)
        guard let start = text.range(of: "<!-- \(marker)"),
            let end = text.range(of: "<!-- /\(marker) -->", range: start.upperBound..<text.endIndex)
        else {
            throw MissingMarkers(
                description: "\(file) has no <!-- \(marker) --> … <!-- /\(marker) --> section")
        }
        var blocks: [Substring] = []
        var rest = text[start.upperBound..<end.lowerBound]
        while let open = rest.range(of: "```console\n"),
            let close = rest.range(of: "```", range: open.upperBound..<rest.endIndex)
        {
            blocks.append(rest[open.upperBound..<close.lowerBound])
            rest = rest[close.upperBound...]
        }
        guard !blocks.isEmpty else {
            throw MissingMarkers(description: "\(file): no ```console block in the \(marker) section")
        }
        return blocks.joined()
    }

    /// Runs the `$ ` lines of `console` one after another in a single bash started in `dir`,
    /// with the built docsync first on PATH and stderr merged into stdout (as a terminal
    /// shows them). `placeholder` in a command is replaced by `dir`, and `dir` in the output
    /// by `placeholder`, so the docs can show a short path.
    static func replay(_ console: String, in dir: String, placeholder: String? = nil) -> String {
        let bin = dir + "/.bin"
        try? FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try? FileManager.default.createSymbolicLink(
            atPath: bin + "/docsync", withDestinationPath: CLI.binary)
        var script = ["exec 2>&1", "export PATH=\"\(bin):$PATH\""]
        for line in console.split(separator: "\n", omittingEmptySubsequences: false)
        where line.hasPrefix("$ ") {
            var command = String(line.dropFirst(2))
            if let placeholder { command = command.replacingOccurrences(of: placeholder, with: dir) }
            script.append("printf '%s\\n' " + shellQuoted(String(line)))
            script.append(command)
            // Commands run at least 10 ms apart, so each save gets its own millisecond and
            // "saved later" follows the order the docs show.
            script.append("sleep 0.01")
        }
        let bash =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/bash") ? "/usr/bin/bash" : "/bin/bash"
        let r = CLI.runTool(bash, ["-c", script.joined(separator: "\n")], in: dir)
        var out = r.stdout + r.stderr
        if let placeholder { out = out.replacingOccurrences(of: dir, with: placeholder) }
        return out
    }

    static func shellQuoted(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` with every id (refId UUIDs, changesetIds, replica ids) replaced by `<idN>`,
    /// numbered by first appearance: two transcripts match when the same id recurs in the
    /// same places, whatever its value.
    static func normalised(_ text: String) -> String {
        let id =
            #/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{12}\b/#
        var names: [Substring: String] = [:]
        return text.replacing(id) { match in
            if let name = names[match.output] { return name }
            let name = "<id\(names.count + 1)>"
            names[match.output] = name
            return name
        }
    }

    /// Expects `actual` to match `expected` up to ids; on a mismatch, shows the first
    /// differing line and both texts.
    static func expectMatch(
        _ actual: String, _ expected: String, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let a = normalised(actual).split(separator: "\n", omittingEmptySubsequences: false)
        let e = normalised(expected).split(separator: "\n", omittingEmptySubsequences: false)
        guard a != e else { return }
        let i = (0..<min(a.count, e.count)).first { a[$0] != e[$0] } ?? min(a.count, e.count)
        let shown = i < e.count ? String(e[i]) : "(end)"
        let got = i < a.count ? String(a[i]) : "(end)"
        Issue.record(
            "\(what) differs from what the tool prints, at line \(i + 1):\n  docs: \(shown)\n  tool: \(got)\n--- the tool printed:\n\(actual)",
            sourceLocation: sourceLocation)
    }
}
