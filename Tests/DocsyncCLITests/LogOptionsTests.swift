// `docsync log`: -n/--max-count, --since (RFC 3339), one short line per entry, a pager on
// a terminal only (run under `script` for a pseudo-terminal), and a failed write to
// stdout is an error.

import Foundation
import Testing

@Suite("log: -n, --since, short lines, pager, write errors")
struct LogOptionsTests {
    static func lines(_ r: RunResult) -> [String] { r.stdout.split(separator: "\n").map(String.init) }

    /// Runs `command` (a shell command line) under a pseudo-terminal, as a user at a terminal.
    static func onTerminal(_ command: String, in dir: String) -> RunResult {
        CLI.runTool("/usr/bin/script", ["-qec", command, "/dev/null"], in: dir)
    }

    @Test(
        "-n N shows the N most recent entries; --since keeps entries from that time on; bad dates are usage errors"
    )
    func maxCountAndSince() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{}", "two.json": "{}"])
        a.sync()
        let all = Self.lines(a.ok("log"))
        #expect(all.count > 3)
        #expect(Self.lines(a.ok("log", "-n", "2")) == Array(all.suffix(2)))
        #expect(Self.lines(a.ok("log", "--max-count", "3")) == Array(all.suffix(3)))
        #expect(a.ok("log", "-n", "0").stdout.isEmpty)
        let json = try #require(
            JSONHelp.parse(a.ok("log", "--json", "-n", "1").stdout) as? [String: Any])
        #expect((json["entries"] as? [Any])?.count == 1)

        #expect(a.ok("log", "--since", "2999-01-01").stdout.isEmpty, "nothing is that recent")
        #expect(Self.lines(a.ok("log", "--since", "2000-01-01T00:00:00Z")) == all)
        // From the time of the last entry: it and everything at or after that second, nothing earlier.
        let entries =
            (JSONHelp.parse(a.ok("log", "--json").stdout) as? [String: Any])?["entries"]
            as? [[String: Any]] ?? []
        let times = entries.compactMap { $0["time"] as? String }
        let last = try #require(times.last)
        let since = Self.lines(a.ok("log", "--since", last))
        #expect(
            since.count == times.filter { $0 >= last }.count && since.allSatisfy { $0.contains(last) },
            "\(since)")
        let offset = a.ok("log", "--since", last.replacingOccurrences(of: "Z", with: "+00:00"))
        #expect(Self.lines(offset) == since)

        for bad in ["yesterday", "2026-13-01", "2026-11-23T25:00:00Z"] {
            let r = a.run("log", "--since", bad)
            #expect(r.exit == 2 && r.stderr.contains("--since"), r.comment)
        }
        #expect(a.run("log", "-n", "-1").exit == 2)
    }

    @Test("a push of many documents is one short done line, not a list of every action")
    func doneLineIsSummarised() throws {
        let box = Sandbox()
        var files: [String: String] = [:]
        for i in 0..<120 { files["doc\(i).json"] = "{\"i\": \(i)}" }
        let a = box.initReplica("A", files: files)
        a.sync()
        let lines = Self.lines(a.ok("log"))
        let done = try #require(lines.first { $0.contains("done     pushed") })
        #expect(done.hasSuffix("pushed 120 actions (#1-#120)"), "\(done)")
        #expect(lines.allSatisfy { $0.count < 200 }, "every line is short")
        #expect(lines.filter { $0.contains(" create ") }.count == 120, "one line per action")
    }

    @Test(
        "on a terminal the log goes through $PAGER; not with --no-pager, --json, or when stdout is not a terminal"
    )
    func pagerOnlyOnATerminal() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{}"])
        a.sync()
        let bin = CLI.binary
        let pager = "PAGER='sed s/^/PAGED:/'"
        let paged = Self.onTerminal("env \(pager) \(bin) log", in: a.root)
        #expect(paged.exit == 0, paged.comment)
        let pagedLines = paged.stdout.split(whereSeparator: \.isNewline).filter { !$0.isEmpty }
        #expect(!pagedLines.isEmpty && pagedLines.allSatisfy { $0.hasPrefix("PAGED:") }, paged.comment)
        let docPaged = Self.onTerminal(
            "env DOCSYNC_PAGER='sed s/^/DOC:/' \(pager) \(bin) log one.json", in: a.root)
        #expect(docPaged.stdout.contains("DOC:Document "), "DOCSYNC_PAGER wins over PAGER: \(docPaged)")

        let noPager = Self.onTerminal("env \(pager) \(bin) log --no-pager", in: a.root)
        #expect(
            noPager.exit == 0 && !noPager.stdout.contains("PAGED:") && noPager.stdout.contains("create"),
            noPager.comment)
        let json = Self.onTerminal("env \(pager) \(bin) log --json", in: a.root)
        #expect(!json.stdout.contains("PAGED:") && json.stdout.contains("\"entries\""), json.comment)
        let cat = Self.onTerminal("env PAGER=cat \(bin) log", in: a.root)
        #expect(cat.exit == 0 && cat.stdout.contains("create"), cat.comment)
        let notATerminal = a.run(["log"], env: ["PAGER": "sed s/^/PAGED:/"])
        #expect(
            notATerminal.exit == 0 && !notATerminal.stdout.contains("PAGED:")
                && notATerminal.stdout.contains("create"), notATerminal.comment)
    }

    @Test(
        "a failed write to stdout (>/dev/full) is an error: exit 1 with a message",
        arguments: [
            ["log"], ["status"], ["status", "--json"], ["conflicts"], ["verify", "--local-only"], ["--help"],
            ["sync", "--help"],
            ["--version"]
        ])
    func writeErrorsAreErrors(_ args: [String]) {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{}"])
        a.sync()
        let r = CLI.runTool(
            "/bin/sh", ["-c", "\"$0\" \"$@\" > /dev/full", CLI.binary] + args, in: a.root)
        #expect(r.exit == 1, r.comment)
        #expect(
            r.stderr.contains("cannot write to standard output: No space left on device"), r.comment)
    }

    @Test(
        "without $PAGER the log goes through less -FRX, which quits by itself when the log fits on the screen",
        .enabled(if: Prerequisite.less.runsHere))
    func defaultPagerIsLess() throws {
        try Prerequisite.less.require()
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{}"])
        a.sync()
        // timeout only guards against a pager that never returns (a failure, not slack).
        let command =
            "stty rows 40 cols 200; env -u PAGER -u DOCSYNC_PAGER -u LESS TERM=xterm \(CLI.binary) log; echo done-$?"
        let r = CLI.runTool(
            "/usr/bin/timeout", ["60", "/usr/bin/script", "-qec", command, "/dev/null"], in: a.root)
        #expect(r.exit == 0 && r.stdout.contains("done-0"), r.comment)
        #expect(r.stdout.contains("create   one.json"), r.comment)
        #expect(
            r.stdout.contains("\u{1B}[?1h"), "less set up the terminal: \(r.stdout.debugDescription)")
    }
}
