import Foundation
import Testing

@Suite("Output modes, options and usage")
struct OutputAndOptionsTests {
    // MARK: --json

    @Test("--json on status, sync, push, pull and log prints only JSON with the expected fields")
    func jsonOutput() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{\"n\": 1}\n"])

        let status = a.run("status", "--json")
        #expect(status.exit == 0, status.comment)
        let s = JSONHelp.parse(status.stdout) as? [String: Any]
        #expect(s != nil, "status --json is not a JSON object: \(status)")
        #expect(s?["root"] as? String == a.root)
        #expect(s?["remote"] as? String == box.remote)
        #expect((s?["replicaId"] as? String)?.isEmpty == false)
        #expect((s?["pending"] as? [Any])?.isEmpty == true)
        let unrecorded = s?["unrecorded"] as? [[String: Any]] ?? []
        #expect(
            unrecorded.count == 1 && unrecorded.first?["path"] as? String == "one.json", "unrecorded: \(unrecorded)")
        #expect(s?["conflicts"] is [Any])

        let sync = a.run("sync", "--json")
        #expect(sync.exit == 0, sync.comment)
        let r = JSONHelp.parse(sync.stdout) as? [String: Any]
        #expect(r != nil, "sync --json is not a JSON object: \(sync)")
        let recorded = r?["recorded"] as? [[String: Any]] ?? []
        let pushed = r?["pushed"] as? [[String: Any]] ?? []
        #expect(recorded.map { $0["path"] as? String } == ["one.json"])
        #expect(recorded.first?["kind"] as? String == "create")
        #expect(pushed.map { $0["path"] as? String } == ["one.json"])
        #expect(pushed.first?["refId"] as? String == a.refId("one.json"))
        #expect(pushed.first?["changesetId"] as? String == a.changesetId("one.json"))
        #expect((r?["pulled"] as? [Any])?.isEmpty == true)
        #expect((r?["conflicts"] as? [Any])?.isEmpty == true)
        #expect(r?["pendingAfter"] as? Int == 0)
        #expect(r?["dryRun"] as? Bool == false)

        for command in ["push", "pull"] {
            let out = a.run(command, "--json")
            #expect(out.exit == 0, out.comment)
            #expect(JSONHelp.parse(out.stdout) is [String: Any], "\(command) --json: \(out)")
        }

        let log = a.run("log", "--json")
        #expect(log.exit == 0, log.comment)
        let entries = (JSONHelp.parse(log.stdout) as? [String: Any])?["entries"] as? [[String: Any]]
        #expect(entries != nil, "log --json is not an object with entries: \(log)")
        let create = entries?.first { $0["kind"] as? String == "create" }
        let entry = create
        #expect(entry?["path"] as? String == "one.json")
        #expect(entry?["refId"] as? String == a.refId("one.json"))
        #expect(entry?["seq"] is Int)
        #expect(create?["pending"] as? Bool == false)
        let seqs = entries?.compactMap { $0["seq"] as? Int } ?? []
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "log entries in order: \(seqs)")

        let after = JSONHelp.parse(a.run("status", "--json").stdout) as? [String: Any]
        #expect(after?["lastSync"] is String, "status --json names the last sync after a sync")
        #expect((after?["unrecorded"] as? [Any])?.isEmpty == true)
    }

    // MARK: --dry-run

    @Test("sync --dry-run shows what would happen and changes nothing: tree, journal, state, remote")
    func dryRunChangesNothing() {
        let box = Sandbox()
        let a = box.initReplica(
            "A", files: ["edit.json": "{\"v\": 1}\n", "del.json": "{\"d\": 1}\n", "keep.json": "{\"k\": 1}\n"])
        a.sync()
        let b = box.clone("B")
        b.write("fromB.json", "{\"b\": 1}\n")
        b.write("keep.json", b.read("keep.json")!.replacing("\"k\": 1", with: "\"k\": 2"))
        b.sync()

        a.write("edit.json", a.read("edit.json")!.replacing("\"v\": 1", with: "\"v\": 2"))
        a.write("new.json", "{\"fresh\": true}\n")
        a.remove("del.json")

        let docs = a.documents()
        let journal = Files.bytes(a.journal)
        let state = Files.bytes(a.path(".docsync/state"))
        let remoteListing = Files.listing(box.remote)
        let remoteFiles = Files.tree(box.remote, skipMetadata: false)

        for command in ["sync", "push", "pull"] {
            let dry = a.run(command, "--dry-run")
            #expect(dry.exit == 0, dry.comment)
            #expect(a.documents() == docs, "\(command) --dry-run changed the tree")
            #expect(Files.bytes(a.journal) == journal, "\(command) --dry-run wrote the journal")
            #expect(Files.bytes(a.path(".docsync/state")) == state, "\(command) --dry-run wrote the state")
            #expect(Files.listing(box.remote) == remoteListing, "\(command) --dry-run changed the remote's listing")
            #expect(
                Files.tree(box.remote, skipMetadata: false) == remoteFiles, "\(command) --dry-run changed remote files")
        }
        let dry = a.run("sync", "--dry-run")
        for name in ["fromB.json", "keep.json"] {
            #expect(dry.stdout.contains(name), "the dry run should mention the incoming \(name): \(dry)")
        }
        let verbose = a.run("sync", "--dry-run", "--verbose")
        for name in ["edit.json", "new.json", "del.json"] {
            #expect(
                verbose.stdout.contains(name),
                "the verbose dry run should mention the local change to \(name): \(verbose)")
        }
        #expect(a.refId("new.json") == nil, "a dry run must not stamp ids")

        let json = JSONHelp.parse(a.run("sync", "--dry-run", "--json").stdout) as? [String: Any]
        #expect(json?["dryRun"] as? Bool == true)
        #expect(
            Set((json?["pulled"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }) == [
                "fromB.json", "keep.json"
            ])

        // The real thing does what the dry run said.
        a.sync()
        #expect(a.json("fromB.json")?["b"] as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/del.json"))
        #expect(FileManager.default.fileExists(atPath: box.remote + "/new.json"))
    }

    @Test("push --dry-run and sync --dry-run list the local changes they would push")
    func dryRunReportsPushes() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["edit.json": "{\"v\": 1}\n", "del.json": "{\"d\": 1}\n"])
        a.sync()
        a.write("edit.json", a.read("edit.json")!.replacing("\"v\": 1", with: "\"v\": 2"))
        a.write("new.json", "{\"fresh\": true}\n")
        a.remove("del.json")
        for command in ["push", "sync"] {
            let dry = a.run(command, "--dry-run")
            #expect(dry.exit == 0, dry.comment)
            #expect(dry.stdout.contains("3 pushed"), "a real \(command) would push 3 documents: \(dry)")
            for name in ["edit.json", "new.json", "del.json"] {
                #expect(
                    dry.stdout.split(separator: "\n").contains { $0.contains("push") && $0.contains(name) },
                    "\(command) --dry-run should show the push of \(name): \(dry)")
            }
            let json = JSONHelp.parse(a.run(command, "--dry-run", "--json").stdout) as? [String: Any]
            let pushed = Set((json?["pushed"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
            #expect(pushed == ["edit.json", "new.json", "del.json"], "\(command) --dry-run --json pushed: \(pushed)")
        }
        let real = a.run("sync")
        #expect(real.stdout.contains("3 pushed"), real.comment)
    }

    // MARK: --quiet / --verbose

    @Test("--quiet prints nothing on stdout; --verbose prints more than the default")
    func quietAndVerbose() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["q.json": "{\"q\": 1}\n"])
        let quiet = a.run("sync", "--quiet")
        #expect(quiet.exit == 0, quiet.comment)
        #expect(quiet.stdout.isEmpty, quiet.comment)
        #expect(FileManager.default.fileExists(atPath: box.remote + "/q.json"), "--quiet still syncs")

        let b = box.clone("B")
        a.write("q.json", a.read("q.json")!.replacing("\"q\": 1", with: "\"q\": 2"))
        let short = CLI.run(["-q", "sync"], in: a.root)
        #expect(short.exit == 0 && short.stdout.isEmpty, short.comment)
        let pulledQuietly = b.run("pull", "-q")
        #expect(pulledQuietly.exit == 0 && pulledQuietly.stdout.isEmpty, pulledQuietly.comment)
        #expect(b.json("q.json")?["q"] as? Int == 2)
        let statusQuiet = b.run("status", "--quiet")
        #expect(statusQuiet.exit == 0 && statusQuiet.stdout.isEmpty, statusQuiet.comment)

        // Errors still reach stderr with --quiet.
        a.write("broken.json", "{")
        let quietError = a.run("sync", "--quiet")
        #expect(quietError.exit == 1 && quietError.stdout.isEmpty, quietError.comment)
        #expect(quietError.stderr.contains("broken.json:"), quietError.comment)
        a.remove("broken.json")

        a.write("v.json", "{\"v\": 1}\n")
        let verbose = a.run("sync", "--verbose")
        #expect(verbose.exit == 0, verbose.comment)
        #expect(verbose.stdout.contains("record") && verbose.stdout.contains("v.json"), verbose.comment)

        let both = a.run("sync", "--quiet", "--verbose")
        #expect(both.exit == 2, both.comment)
    }

    // MARK: Usage and config

    @Test("usage errors exit 2")
    func usageErrors() {
        let box = Sandbox()
        let a = box.initReplica("A")
        let bogus = a.run("push", "--bogus")
        #expect(bogus.exit == 2, bogus.comment)
        #expect(bogus.stderr.contains("--bogus"), bogus.comment)
        #expect(bogus.stdout.isEmpty)
        let unknown = a.run("frobnicate")
        #expect(unknown.exit == 2, unknown.comment)
        let noKey = a.run("config")
        #expect(noKey.exit == 2, noKey.comment)
        let missingArgs = a.run("clone")
        #expect(missingArgs.exit == 2, missingArgs.comment)
        let noPaths = a.run("rm")
        #expect(noPaths.exit == 2, noPaths.comment)
        let help = a.run("sync", "--help")
        #expect(help.exit == 0 && help.stdout.contains("--dry-run"), help.comment)
        let version = a.run("--version")
        #expect(version.exit == 0 && !version.stdout.isEmpty, version.comment)
    }

    @Test("config: unknown keys exit 1 naming the key; values are set, read back and listed")
    func config() {
        let box = Sandbox()
        let a = box.initReplica("A")
        let unknown = a.run("config", "no.such.key")
        #expect(unknown.exit == 1, unknown.comment)
        #expect(unknown.stderr.contains("no.such.key"), unknown.comment)
        let unknownSet = a.run("config", "no.such.key", "1")
        #expect(unknownSet.exit == 1, unknownSet.comment)
        #expect(unknownSet.stderr.contains("no.such.key"), unknownSet.comment)

        let set = a.run("config", "push.maxDeleteShare", "0.25")
        #expect(set.exit == 0, set.comment)
        let get = a.run("config", "push.maxDeleteShare")
        #expect(get.exit == 0, get.comment)
        #expect(get.stdout == "0.25\n", get.comment)
        let list = a.run("config", "--list")
        #expect(list.exit == 0, list.comment)
        #expect(list.stdout.split(separator: "\n").contains("push.maxDeleteShare=0.25"), list.comment)
        #expect(list.stdout.contains("remote.url=\(box.remote)"), list.comment)

        let invalid = a.run("config", "push.maxDeleteShare", "2")
        #expect(invalid.exit == 1, invalid.comment)
        #expect(invalid.stderr.contains("push.maxDeleteShare"), invalid.comment)
        #expect(a.run("config", "push.maxDeleteShare").stdout == "0.25\n", "an invalid value must not be stored")

        let readOnly = a.run("config", "core.replicaId", "abcdefabcdef")
        #expect(readOnly.exit == 1, readOnly.comment)

        // The setting is in force: 0.25 of 4 documents allows one deletion, not two.
        for i in 1...4 { a.write("d\(i).json", "{\"i\": \(i)}\n") }
        a.sync()
        a.remove("d1.json")
        a.remove("d2.json")
        let push = a.run("push")
        #expect(push.exit == 1 && push.stderr.contains("--force"), push.comment)

        let unset = a.run("config", "--unset", "push.maxDeleteShare")
        #expect(unset.exit == 0, unset.comment)
        #expect(a.run("config", "push.maxDeleteShare").stdout == "0.5\n", "--unset goes back to the default")
    }

    // MARK: -C and finding the tree

    @Test("-C DIR works before and after the command name, and the tree is found from a subfolder")
    func directoryOption() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["top.json": "{\"t\": 1}\n", "sub/deeper/low.json": "{\"l\": 1}\n"])

        let before = CLI.run(["-C", "A", "sync"], in: box.root)
        #expect(before.exit == 0, before.comment)
        #expect(FileManager.default.fileExists(atPath: box.remote + "/sub/deeper/low.json"))

        for args in [
            ["-C", "A", "status", "--json"], ["status", "-C", "A", "--json"], ["status", "--json", "-C", a.root],
            ["--json", "-C", "A", "status"]
        ] {
            let r = CLI.run(args, in: box.root)
            #expect(r.exit == 0, r.comment)
            #expect((JSONHelp.parse(r.stdout) as? [String: Any])?["root"] as? String == a.root, r.comment)
        }

        // From a subfolder, like git.
        let sub = a.path("sub/deeper")
        let fromSub = CLI.run(["status", "--json"], in: sub)
        #expect(fromSub.exit == 0, fromSub.comment)
        #expect((JSONHelp.parse(fromSub.stdout) as? [String: Any])?["root"] as? String == a.root, fromSub.comment)
        let viaC = CLI.run(["-C", "A/sub", "status", "--json"], in: box.root)
        #expect((JSONHelp.parse(viaC.stdout) as? [String: Any])?["root"] as? String == a.root, viaC.comment)

        a.write("sub/deeper/low.json", a.read("sub/deeper/low.json")!.replacing("\"l\": 1", with: "\"l\": 2"))
        let syncSub = CLI.run(["sync"], in: sub)
        #expect(syncSub.exit == 0, syncSub.comment)
        #expect((Files.bytes(box.remote + "/sub/deeper/low.json").flatMap(JSONHelp.object))?["l"] as? Int == 2)
        #expect(!FileManager.default.fileExists(atPath: sub + "/.docsync"), "no second tree is made in the subfolder")

        // Paths given to rm are relative to where the user is.
        let rm = CLI.run(["rm", "low.json"], in: sub)
        #expect(rm.exit == 0, rm.comment)
        #expect(!a.exists("sub/deeper/low.json"))
        #expect(a.exists("top.json"))
        let rmViaC = CLI.run(["-C", "A", "rm", "top.json"], in: box.root)
        #expect(rmViaC.exit == 0, rmViaC.comment)
        #expect(!a.exists("top.json"))

        let missing = CLI.run(["-C", "no-such-dir", "status"], in: box.root)
        #expect(missing.exit == 2, missing.comment)
        #expect(missing.stderr.contains("no-such-dir"), missing.comment)

        let outside = CLI.run(["status"], in: box.root)
        #expect(outside.exit == 1, outside.comment)
        #expect(outside.stderr.contains("not a docsync tree"), outside.comment)
    }
}

@Suite("Start-up")
struct StartUpTests {
    /// Every command names itself (`commandName:`). Why: without it swift-argument-parser
    /// derives each name with `String(describing:)` of the command's type while it builds
    /// the command tree, a dynamic cast that scans the binary's protocol conformances once
    /// per type. `perf record` of `docsync --version` (static build): those scans were 23%
    /// of the samples, 10% after; CPU per run (`perf stat -r 50`, a loaded machine):
    /// `--version` 14.4 → 12.0 ms, a no-op `sync` 34.9 → 29.3 ms.
    @Test("every command's configuration names it")
    func everyCommandNamesItself() throws {
        let folder = CLI.packageRoot + "/Sources/docsync"
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        var unnamed: [String] = []
        var seen = 0
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            var rest = text[...]
            while let found = rest.range(of: "CommandConfiguration(") {
                seen += 1
                // The arguments, up to the parenthesis that closes them.
                var depth = 1
                var end = found.upperBound
                while depth > 0, end < rest.endIndex {
                    if rest[end] == "(" { depth += 1 } else if rest[end] == ")" { depth -= 1 }
                    end = rest.index(after: end)
                }
                if !rest[found.upperBound..<end].contains("commandName:") {
                    unnamed.append("\(file): \(rest[found.lowerBound..<end].prefix(80))")
                }
                rest = rest[end...]
            }
        }
        #expect(seen >= 30, "found the commands' configurations (\(seen))")
        #expect(unnamed.isEmpty, "commands without commandName: \(unnamed)")
    }

    @Test("command names and help are what users type")
    func helpListsTheCommands() {
        let help = CLI.run(["--help"], in: "/")
        #expect(help.exit == 0)
        for name in [
            "init", "clone", "reset-base", "sync", "push", "pull", "status", "log", "conflicts", "resolve",
            "gc", "merge-driver", "sparse", "replicas", "verify", "watch", "config", "edit", "new", "diff", "blame",
            "check", "override", "revert", "restore"
        ] {
            #expect(help.stdout.contains("  \(name) "), "docsync --help lists \(name)")
        }
        #expect(CLI.run(["sparse", "disable", "--help"], in: "/").exit == 0)
        #expect(CLI.run(["replicas", "forget", "--help"], in: "/").exit == 0)
    }
}
