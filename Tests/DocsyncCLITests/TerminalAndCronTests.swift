// Progress on a terminal, silence in cron, and usage errors: run the built binary under a
// pseudo-terminal (`script -qec`) and through plain files, and compare.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

enum PTY {
    /// Runs `docsync args…` in `dir` under a pseudo-terminal; returns the terminal's
    /// transcript (stdout and stderr mixed, as a user sees them) and the exit code.
    static func run(
        _ args: [String], in dir: String, env: [String: String] = [:], input: String? = nil
    ) -> RunResult {
        let command = ([CLI.binary] + args).map(quote).joined(separator: " ")
        var shell = "exec script -qec \(quote(command)) /dev/null"
        // script forwards its stdin to the terminal: the answers to any question.
        if let input { shell = "printf %s \(quote(input)) | script -qec \(quote(command)) /dev/null" }
        // The test runner's own environment may disable colour; each test says.
        var r = CLI.runTool(
            "/bin/sh", ["-c", shell], in: dir, env: ["NO_COLOR": ""].merging(env) { $1 })
        r.args = args
        return r
    }

    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension String {
    /// A status line drawn in place: erase-to-end-of-line, as the progress view writes it.
    var hasProgressLine: Bool { contains("\u{1B}[K") }
    /// Any colour (SGR) escape.
    var hasColour: Bool { range(of: "\u{1B}\\[[0-9;]*m", options: .regularExpression) != nil }
    /// The text without colour escapes.
    var withoutColour: String {
        replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }
}

@Suite("Progress, quiet cron and usage", .serialized)
struct TerminalAndCronTests {
    /// A replica with `count` new documents, not yet synced.
    static func replicaWithDocuments(_ box: Sandbox, count: Int) -> Replica {
        var files: [String: String] = [:]
        for i in 1...count { files[String(format: "d%03d.json", i)] = "{\"n\": \(i)}\n" }
        return box.initReplica("A", files: files)
    }

    @Test("on a terminal a push shows a progress line (count, bar) in place and each document once")
    func progressOnTerminal() {
        let box = Sandbox()
        let a = Self.replicaWithDocuments(box, count: 40)
        let r = PTY.run(["sync"], in: a.root)
        #expect(r.exit == 0, r.comment)
        let out = r.stdout.withoutColour
        #expect(out.hasProgressLine, r.comment)
        #expect(out.contains("scan   40/40 ["), r.comment)
        #expect(out.contains("push   40/40 [########################]"), r.comment)
        #expect(r.stdout.hasColour, "the bar is coloured on a terminal: \(r.comment)")
        for i in [1, 20, 40] {
            let line = String(format: "push    create  d%03d.json", i)
            #expect(
                out.components(separatedBy: line).count - 1 == 1,
                "\(line) printed exactly once: \(r.comment)")
        }
        #expect(out.contains("Synced: 40 recorded, 0 pulled, 40 pushed"), r.comment)

        // A clone pulls with progress too.
        let clone = PTY.run(["clone", box.remote, "B"], in: box.root)
        #expect(clone.exit == 0, clone.comment)
        #expect(clone.stdout.withoutColour.contains("pull   40/40 ["), clone.comment)
        #expect(
            clone.stdout.components(separatedBy: "pull    create  d007.json").count - 1 == 1,
            clone.comment)
    }

    @Test(
        "no progress when stderr is not a terminal, with --quiet, or with --json; no colour with NO_COLOR"
    )
    func noProgressWhenNotWanted() {
        let box = Sandbox()
        let a = Self.replicaWithDocuments(box, count: 12)
        let piped = a.run("sync")
        #expect(piped.exit == 0, piped.comment)
        #expect(piped.stderr.isEmpty, piped.comment)
        #expect(!piped.stdout.hasProgressLine && !piped.stdout.hasColour, piped.comment)
        #expect(piped.stdout.contains("push    create  d012.json"), piped.comment)

        for i in 1...12 { a.write(String(format: "e%03d.json", i), "{\"e\": \(i)}\n") }
        let quiet = PTY.run(["sync", "--quiet"], in: a.root)
        #expect(quiet.exit == 0, quiet.comment)
        #expect(quiet.stdout.isEmpty, "a quiet run on a terminal prints nothing: \(quiet.comment)")

        for i in 1...12 { a.write(String(format: "f%03d.json", i), "{\"f\": \(i)}\n") }
        let json = PTY.run(["sync", "--json"], in: a.root)
        #expect(json.exit == 0, json.comment)
        #expect(!json.stdout.hasProgressLine && !json.stdout.hasColour, json.comment)
        #expect(
            JSONHelp.parse(json.stdout.replacingOccurrences(of: "\r\n", with: "\n")) != nil,
            "only the JSON report: \(json.comment)")

        for i in 1...12 { a.write(String(format: "g%03d.json", i), "{\"g\": \(i)}\n") }
        let plain = PTY.run(["sync"], in: a.root, env: ["NO_COLOR": "1"])
        #expect(plain.exit == 0, plain.comment)
        #expect(plain.stdout.hasProgressLine, "progress still shows, without colour: \(plain.comment)")
        #expect(!plain.stdout.hasColour, plain.comment)
        // NO_COLOR set but empty does not count.
        let bad = PTY.run(["stauts"], in: a.root, env: ["NO_COLOR": ""])
        #expect(bad.stdout.hasColour, bad.comment)
        let badPlain = PTY.run(["stauts"], in: a.root, env: ["NO_COLOR": "yes"])
        #expect(!badPlain.stdout.hasColour, badPlain.comment)
    }

    // MARK: --quiet and "try again later"

    static func expectQuietTempFail(
        _ a: Replica, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let r = a.run("sync", "--quiet")
        #expect(r.exit == 75, r.comment, sourceLocation: sourceLocation)
        #expect(
            r.stderr.isEmpty && r.stdout.isEmpty, "cron must not mail anything: \(r.comment)",
            sourceLocation: sourceLocation)
        let status = a.run("status")
        #expect(
            status.stdout.contains("Last sync attempt"), status.comment, sourceLocation: sourceLocation)
        #expect(status.stdout.contains(reason), status.comment, sourceLocation: sourceLocation)
        let json = JSONHelp.parse(a.run("status", "--json").stdout) as? [String: Any]
        let attempt = json?["lastAttempt"] as? [String: Any]
        #expect(attempt?["command"] as? String == "sync", sourceLocation: sourceLocation)
        #expect(
            (attempt?["reason"] as? String)?.contains(reason) == true, sourceLocation: sourceLocation)
    }

    @Test("--quiet: a tree held by another run exits 75 silently; status says why")
    func quietTreeBusy() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        a.sync()
        a.ok("config", "lock.waitSeconds", "0")
        guard let holder = OfflineAndLockTests.LockHolder(a.path(".docsync/lock")) else { return }
        Self.expectQuietTempFail(a, reason: "another docsync run is working on this tree")
        // Without --quiet the reason is printed.
        let loud = a.run("sync")
        #expect(loud.exit == 75 && loud.stderr.contains("another docsync run"), loud.comment)
        holder.release()
        a.sync()
        #expect(!a.run("status").stdout.contains("Last sync attempt"), "a successful sync clears it")
    }

    @Test("--quiet: another machine's remote lock exits 75 silently; status says why")
    func quietRemoteLocked() {
        let box = Sandbox()
        box.remoteFormat1 = true  // about format 1's own files
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        a.sync()
        a.ok("config", "remote.lockWaitSeconds", "0")
        let lock = box.remote + "/.docsync/lock"
        try! Data(#"{"host":"elsewhere.example","pid":4242,"replica":"0123456789ab","time":0}"#.utf8)
            .write(to: URL(fileURLWithPath: lock))
        a.write("a.json", a.read("a.json")!.replacing("\"a\": 1", with: "\"a\": 2"))
        Self.expectQuietTempFail(a, reason: "locked by another push (host elsewhere.example")
        try! FileManager.default.removeItem(atPath: lock)
        a.sync()
        #expect(Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)?["a"] as? Int == 2)
    }

    @Test("--quiet: an unreachable remote exits 75 silently; status says why")
    func quietRemoteUnreachable() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        a.sync()
        #expect(rename(box.remote, box.path("remote-away")) == 0)
        Self.expectQuietTempFail(a, reason: "unreachable")
    }

    // MARK: Usage

    @Test(
        "bare docsync, help of an unknown command and a misspelt command exit 2 with usage on stderr")
    func usageErrors() {
        let box = Sandbox()
        let bare = CLI.run([], in: box.root)
        #expect(bare.exit == 2 && bare.stdout.isEmpty && bare.stderr.contains("USAGE"), bare.comment)
        let helpFrob = CLI.run(["help", "frob"], in: box.root)
        #expect(
            helpFrob.exit == 2 && helpFrob.stderr.contains("unknown command 'frob'"), helpFrob.comment)
        let misspelt = CLI.run(["stauts"], in: box.root)
        #expect(misspelt.exit == 2, misspelt.comment)
        #expect(misspelt.stderr.contains("did you mean 'status'?"), misspelt.comment)
        let afterGlobal = CLI.run(["-C", box.root, "pusj"], in: box.root)
        #expect(
            afterGlobal.exit == 2 && afterGlobal.stderr.contains("did you mean 'push'?"),
            afterGlobal.comment)
        let helpStatus = CLI.run(["help", "status"], in: box.root)
        #expect(
            helpStatus.exit == 0 && helpStatus.stdout.contains("docsync status"), helpStatus.comment)
        let help = CLI.run(["--help"], in: box.root)
        #expect(help.exit == 0 && help.stdout.contains("SUBCOMMANDS"), help.comment)
    }
}
