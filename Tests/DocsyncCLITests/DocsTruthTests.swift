// README.md, docs/ and man/docsync.1 say what the tool does today: their console sessions
// are replayed and compared, the man page renders, and what they say about exit status 3
// and `pull --force` holds for the built binary.

import Foundation
import Testing

@Suite("Docs say what the tool does")
struct DocsTruthTests {
    @Test("README's quick start: its commands print what the README shows (ids aside)")
    func quickStart() throws {
        let console = try DocTranscript.section("README.md", marker: "quickstart")
        let box = Sandbox()
        let actual = DocTranscript.replay(console, in: box.root, placeholder: "/tmp/qs")
        DocTranscript.expectMatch(actual, console, "README.md's quick start")
        // The session ends with the laptop's resolve pending: its name, the desktop's phone.
        let laptop = box.replica("laptop").json("ada.json")
        #expect(
            laptop?["name"] as? String == "Ada King" && laptop?["phone"] as? String == "555-0199",
            "laptop/ada.json: \(String(describing: laptop))")
    }

    @Test("docs/RECOVERY.md: reset-base and the sync after it print what the page shows")
    func resetBase() throws {
        let console = try DocTranscript.section("docs/RECOVERY.md", marker: "reset-base")
        // The page's story: d1 and d2 synced; another replica deleted d1; this tree deleted
        // d2 without pushing, then lost its state.
        let box = Sandbox()
        let records = box.initReplica(
            "records", files: ["d1.json": "{\"d\": 1}\n", "d2.json": "{\"d\": 2}\n"])
        records.sync()
        let other = box.clone("other")
        other.remove("d1.json")
        other.sync()
        records.remove("d2.json")
        records.remove(".docsync/state")
        let refused = records.run("status")
        #expect(
            refused.exit == 1 && refused.stderr.contains("the sync state is missing"), refused.comment)

        let actual = DocTranscript.replay(console, in: records.root)
        DocTranscript.expectMatch(actual, console, "docs/RECOVERY.md's reset-base session")
        #expect(
            records.exists("d1.json") && records.exists("d2.json"), "nothing deleted, both came back")
    }

    @Test(
        "the man page renders without warnings, MERGING example and SHELL COMPLETION included",
        .enabled(if: Prerequisite.groff.runsHere))
    func manPageRenders() throws {
        try Prerequisite.groff.require()
        let page = CLI.packageRoot + "/man/docsync.1"
        let lint = CLI.runTool(
            "/usr/bin/groff", ["-mandoc", "-Tutf8", "-ww", "-z", page], in: CLI.packageRoot)
        #expect(lint.exit == 0 && lint.stderr.isEmpty, "groff warns about man/docsync.1: \(lint)")

        // Wide lines, no hyphenation, no bold/underline escapes: plain text to search.
        let r = CLI.runTool(
            "/usr/bin/groff", ["-mandoc", "-Tutf8", "-P-cbou", "-rLL=1000n", "-rHY=0", page],
            in: CLI.packageRoot)
        #expect(r.exit == 0, r.comment)
        let text = r.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        func section(_ name: String) -> String {
            guard let start = text.range(of: " \(name) ") else { return "" }
            let rest = text[start.upperBound...]
            let next = rest.firstRange(of: #/ [A-Z][A-Z ]{3,} [A-Z]/#)?.lowerBound ?? rest.endIndex
            return String(rest[..<next])
        }
        let merging = section("MERGING")
        for phrase in [
            "with the base ‘{\"name\": \"Ann\", \"city\": \"Oslo\"}’",
            "local ‘\"name\": \"Anna\"’ and remote ‘\"city\": \"Bergen\"’ merge to ‘{\"name\": \"Anna\", \"city\": \"Bergen\"}’ with no conflict (exit 0)",
            "give ‘\"city\": \"Rome\"’, report the field ‘city’ as a conflict (exit 3)"
        ] {
            #expect(merging.contains(phrase), "MERGING renders «\(phrase)»; it reads: \(merging)")
        }
        let completion = section("SHELL COMPLETION")
        for shell in ["bash", "zsh", "fish"] {
            #expect(
                completion.contains("docsync --generate-completion-script \(shell)"),
                "SHELL COMPLETION: \(completion)")
        }
        #expect(
            section("EXIT STATUS").contains("3 push, pull or sync"),
            "EXIT STATUS names the commands that exit 3: \(section("EXIT STATUS"))")
    }

    @Test("exit status 3 comes from push, pull and sync, as README and the man page say")
    func exitThree() throws {
        let readme = try String(contentsOfFile: CLI.packageRoot + "/README.md", encoding: .utf8)
        #expect(
            readme.contains("| 3 | Only from `push`, `pull` and `sync`"),
            "README's exit code table names the commands that exit 3")

        for command in ["push", "pull", "sync"] {
            let box = Sandbox("exit3-\(command)")
            let a = box.initReplica("a", files: ["x.json": "{\"n\": \"base\"}\n"])
            a.sync()
            let b = box.clone("b")
            let file = b.path("x.json")
            b.write("x.json", b.read("x.json")!.replacing("\"base\"", with: "\"b\""))
            SaveClock.shared.stamp(file)
            a.write("x.json", a.read("x.json")!.replacing("\"base\"", with: "\"a\""))
            SaveClock.shared.stamp(a.path("x.json"))
            b.ok("push")
            // a saved the field later: its run reconciles (a push pulls first), keeps a's
            // value and stores b's.
            let first = a.run(command)
            #expect(first.exit == 3, "\(command) on the replica that won: \(first)")
            #expect(first.stdout.contains("conflict        x.json (fields n)"), first.comment)
            guard command != "push" else { continue }  // a push with nothing to send asks nothing
            if command == "pull" { _ = a.run("push") }  // the conflict record travels with a push
            let heard = b.run(command)
            #expect(heard.exit == 3, "\(command) on the replica whose version lost: \(heard)")
            #expect(heard.stdout.contains("lost to"), heard.comment)
        }
    }

    @Test("--help says what the man page does: push, pull and sync name exit 3; the overview names git remotes too")
    func helpTexts() {
        let box = Sandbox()
        for command in ["push", "pull", "sync"] {
            let help = CLI.run([command, "--help"], in: box.root, env: ["COLUMNS": "1000"])
            #expect(help.exit == 0, help.comment)
            #expect(help.stdout.contains("Exits 3 when conflicts were recorded"), "\(command) --help: \(help.stdout)")
            #expect(help.stdout.contains("75"), "\(command) --help: \(help.stdout)")
        }
        let top = CLI.run(["--help"], in: box.root, env: ["COLUMNS": "1000"])
        #expect(top.stdout.contains("a remote folder or a git repository"), top.comment)
    }

    @Test("docs/RECOVERY.md: a vanished remote folder prints what the page shows (exit 75)")
    func unreachableRemote() throws {
        let console = try DocTranscript.section("docs/RECOVERY.md", marker: "unreachable")
        let box = Sandbox()
        let share = box.path("share/records")
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        let records = box.replica("records")
        records.write("a.json", "{\"a\": 1}\n")
        #expect(CLI.run(["init", "--remote", share, "--name", "laptop", "records"], in: box.root).exit == 0)
        records.sync()
        try FileManager.default.removeItem(atPath: share)
        records.write("b.json", "{\"b\": 1}\n")
        let actual = DocTranscript.replay(console, in: box.root, placeholder: "/mnt")
        DocTranscript.expectMatch(actual, console, "docs/RECOVERY.md's unreachable remote")
    }

    @Test("pull --help speaks of pulls: --force and --dry-run do not talk about pushing")
    func pullHelp() {
        let box = Sandbox()
        let help = CLI.run(["pull", "--help"], in: box.root, env: ["COLUMNS": "1000"])
        #expect(help.exit == 0, help.comment)
        let options = help.stdout.split(separator: "\n").filter {
            $0.hasPrefix("  --force") || $0.hasPrefix("  --dry-run")
        }
        #expect(options.count == 2, help.comment)
        for line in options {
            #expect(!line.contains("a push") && !line.contains("pushed"), "pull --help: \(line)")
        }
        let push = CLI.run(["push", "--help"], in: box.root, env: ["COLUMNS": "1000"])
        #expect(
            push.stdout.contains("Allow a push that deletes more than push.maxDeleteShare"), push.comment)
    }
}

extension DocsTruthTests {
    @Test("docs/ARCHITECTURE.md names every engine folder and every service there is, and none that is gone")
    func architectureMapMatchesTheCode() throws {
        let root = CLI.packageRoot
        let map = try String(contentsOfFile: root + "/docs/ARCHITECTURE.md", encoding: .utf8)
        let fm = FileManager.default
        let engine = root + "/Sources/DocSyncKit"
        let folders = try fm.contentsOfDirectory(atPath: engine).filter { name in
            var isDir: ObjCBool = false
            return fm.fileExists(atPath: engine + "/" + name, isDirectory: &isDir) && isDir.boolValue
        }
        #expect(!folders.isEmpty)
        for folder in folders {
            let named = map.contains("`\(folder)/`")
            #expect(named, "ARCHITECTURE.md does not name Sources/DocSyncKit/\(folder)/")
        }
        // Folders the map names as `Name/` in its list of DocSyncKit's parts.
        let named = Set(
            map.split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("- `"), let end = trimmed.dropFirst(3).firstIndex(of: "`") else { return nil }
                let name = trimmed[trimmed.index(trimmed.startIndex, offsetBy: 3)..<end]
                return name.hasSuffix("/") ? String(name.dropLast()) : nil
            })
        #expect(named == Set(folders), "the map's folders \(named.sorted()), the code's \(folders.sorted())")
        // Every service type (a `struct …Service: WorkspaceService`) is named, and the
        // map names no service the code no longer has.
        let services = try fm.contentsOfDirectory(atPath: engine + "/Services").compactMap { file -> String? in
            let text = try String(contentsOfFile: engine + "/Services/" + file, encoding: .utf8)
            guard let range = text.range(of: #"struct (\w+Service): WorkspaceService"#, options: .regularExpression)
            else { return nil }
            return String(text[range].dropFirst("struct ".count).prefix { $0 != ":" })
        }
        #expect(services.count >= 11, "\(services)")
        for service in services {
            let named = map.contains("`\(service)`")
            #expect(named, "ARCHITECTURE.md does not name \(service)")
        }
        let mentioned = Set(
            map.matches(of: /`(\w+Service)`/).map { String($0.output.1) }.filter { $0 != "WorkspaceService" })
        #expect(
            mentioned.subtracting(services).isEmpty, "named but not in the code: \(mentioned.subtracting(services))")
    }
}
