// `--json` on every command: one object with "schemaVersion": 1, valid against its schema
// in docs/schemas/ as checked by an independent validator (Python's jsonschema, through
// scripts/validate-json.py), times in RFC 3339; failures are JSON error objects with the
// same exit code.

import Foundation
import Testing

enum SchemaValidator {
    static let script = CLI.packageRoot + "/scripts/validate-json.py"

    static let available: Bool =
        CLI.runTool("/usr/bin/env", ["python3", "-c", "import jsonschema"], in: "/").exit == 0

    /// On CI a missing validator is a failure, not a reason to skip.
    static let required = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Why `text` is not valid against docs/schemas/`schema`.schema.json (nil: valid).
    static func problems(_ text: String, schema: String) -> String? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "docsync-json-\(UUID().uuidString).json"
        ).path
        FileManager.default.createFile(atPath: file, contents: Data(text.utf8))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let r = CLI.runTool(
            "/usr/bin/env",
            ["python3", script, CLI.packageRoot + "/docs/schemas/\(schema).schema.json", file], in: "/")
        return r.exit == 0 ? nil : "exit \(r.exit): \(r.stderr)"
    }
}

@Suite(
    "--json output: versioned objects valid against docs/schemas",
    .enabled(if: SchemaValidator.available || SchemaValidator.required))
struct JSONOutputTests {
    /// Checks one run: the exit code, one JSON object on stdout, schemaVersion 1, the
    /// command's name, and validity against `schema`. Returns the object.
    @discardableResult
    static func check(
        _ r: RunResult, _ schema: String, command: String?, exit: Int32 = 0,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String: Any] {
        #expect(
            SchemaValidator.available,
            "python3 with the jsonschema package is needed (apt-get install python3-jsonschema)",
            sourceLocation: sourceLocation)
        #expect(r.exit == exit, r.comment, sourceLocation: sourceLocation)
        let object = JSONHelp.parse(r.stdout) as? [String: Any]
        #expect(object != nil, "stdout is not one JSON object: \(r)", sourceLocation: sourceLocation)
        #expect(object?["schemaVersion"] as? Int == 1, r.comment, sourceLocation: sourceLocation)
        #expect(object?["command"] as? String == command, r.comment, sourceLocation: sourceLocation)
        if let problems = SchemaValidator.problems(r.stdout, schema: schema) {
            Issue.record(
                "\(schema).schema.json rejects the output of docsync \(r.args.joined(separator: " ")): \(problems)\n\(r.stdout)",
                sourceLocation: sourceLocation)
        }
        return object ?? [:]
    }

    static func isRFC3339(_ value: Any?) -> Bool {
        (value as? String)?.wholeMatch(of: #/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/#) != nil
    }

    @Test("every command on a folder remote prints one object valid against its schema")
    func everyCommandOnAFolderRemote() throws {
        let box = Sandbox()
        let a = box.replica("A")
        a.write("one.json", "{\"title\": \"one\", \"n\": 1}\n")
        a.write("two.json", "{\"title\": \"two\"}\n")
        let made = Self.check(
            CLI.run(["init", "--json", "--remote", box.remote, "--name", "A", "A"], in: box.root), "init",
            command: "init")
        let remote = made["remote"] as? [String: Any]
        #expect(made["root"] as? String == a.root && made["replicaName"] as? String == "A")
        #expect(
            remote?["url"] as? String == box.remote && remote?["kind"] as? String == "dir"
                && remote?["created"] as? Bool == true)

        let synced = Self.check(a.run("sync", "--json"), "sync-report", command: "sync")
        #expect((synced["pushed"] as? [Any])?.count == 2)

        let cloned = Self.check(
            CLI.run(["clone", "--json", "--name", "B", box.remote, "B"], in: box.root), "clone",
            command: "clone")
        let b = box.replica("B")
        #expect(cloned["documents"] as? Int == 2 && (cloned["pulled"] as? [Any])?.count == 2)
        #expect(
            (cloned["remote"] as? [String: Any])?["url"] as? String == box.remote
                && cloned["replicaName"] as? String == "B")
        let joined = Self.check(
            CLI.run(["init", "--json", "--remote", box.remote, "--name", "C", "C"], in: box.root), "init",
            command: "init")
        #expect(
            (joined["remote"] as? [String: Any])?["created"] as? Bool == false,
            "an existing remote is joined, not created")

        a.write("one.json", a.read("one.json")!.replacing("\"n\": 1", with: "\"n\": 2"))
        Self.check(a.run("push", "--json"), "sync-report", command: "push")
        Self.check(b.run("pull", "--json"), "sync-report", command: "pull")

        // The same field changed on both sides: a conflict (exit 3) with a report.
        a.write(
            "one.json", a.read("one.json")!.replacing("\"title\": \"one\"", with: "\"title\": \"from A\"")
        )
        b.write(
            "one.json", b.read("one.json")!.replacing("\"title\": \"one\"", with: "\"title\": \"from B\"")
        )
        a.sync()
        let clash = Self.check(b.run("sync", "--json"), "sync-report", command: "sync", exit: 3)
        #expect((clash["conflicts"] as? [Any])?.count == 1)
        let listed = Self.check(b.run("conflicts", "--json"), "conflicts", command: "conflicts")
        let record = (listed["conflicts"] as? [[String: Any]])?.first
        #expect(Self.isRFC3339(record?["time"]), "conflict time in RFC 3339: \(listed)")
        Self.check(
            b.run("resolve", "--json", "--take", "local", "one.json"), "sync-report", command: "resolve")
        Self.check(b.run("conflicts", "--all", "--json"), "conflicts", command: "conflicts")

        Self.check(b.run("rm", "--json", "two.json"), "sync-report", command: "rm")
        Self.check(b.run("restore", "--json", "two.json"), "sync-report", command: "restore")
        b.write("bad.json", "{\"x\": 1,,}")
        let status = Self.check(b.run("status", "--json"), "status", command: "status", exit: 1)
        #expect((status["problems"] as? [String])?.first?.hasPrefix("bad.json:1:") == true, "\(status)")
        b.remove("bad.json")
        b.sync()
        let clean = Self.check(b.run("status", "--json"), "status", command: "status")
        #expect(Self.isRFC3339(clean["lastSync"]), "\(clean)")

        let log = Self.check(b.run("log", "--json"), "log", command: "log")
        let entries = log["entries"] as? [[String: Any]] ?? []
        #expect(!entries.isEmpty && entries.allSatisfy { Self.isRFC3339($0["time"]) })
        let history = Self.check(b.run("log", "--json", "one.json"), "log-document", command: "log")
        #expect(
            history["refId"] as? String == b.refId("one.json")
                && !((history["remote"] as? [Any]) ?? []).isEmpty, "\(history)")

        Self.check(b.run("verify", "--json"), "verify", command: "verify")
        Self.check(b.run("gc", "--dry-run", "--json"), "gc", command: "gc")
        let gc = Self.check(b.run("gc", "--json"), "gc", command: "gc")
        #expect(gc["remote"] is [String: Any], "\(gc)")

        let url = Self.check(b.run("config", "--json", "remote.url"), "config", command: "config")
        #expect(url["key"] as? String == "remote.url" && url["value"] as? String == box.remote)
        let share = Self.check(
            b.run("config", "--json", "push.maxDeleteShare"), "config", command: "config")
        #expect(share["value"] as? String == "0.5" && share["default"] as? String == "0.5", "\(share)")
        // Like `git config KEY`: no value is exit 1, and null in JSON.
        let unset = Self.check(
            b.run("config", "--json", "remote.sshKey"), "config", command: "config", exit: 1)
        #expect(unset["value"] is NSNull && unset["default"] is NSNull, "\(unset)")
        let set = Self.check(
            b.run("config", "--json", "core.replicaName", "Bee"), "config", command: "config")
        #expect(set["value"] as? String == "Bee" && set["remoteChanged"] as? Bool == false, "\(set)")
        let all = Self.check(b.run("config", "--json", "--list"), "config-list", command: "config")
        #expect((all["values"] as? [String: String])?["core.replicaName"] == "Bee", "\(all)")

        let created = Self.check(b.run("new", "--json", "notes/n.json"), "new", command: "new")
        #expect(created["refId"] as? String == b.refId("notes/n.json"), "\(created)")
        Self.check(b.run(["edit", "--json", "notes/n.json"], env: ["VISUAL": "true"]), "edit", command: "edit")
        let rejected = Self.check(
            b.run(["edit", "--json", "notes/n.json"], env: ["VISUAL": "sed -i s/{/[/"]), "edit", command: "edit",
            exit: 1)
        #expect(rejected["outcome"] as? String == "rejected", "\(rejected)")

        let known = Self.check(b.run("replicas", "--json"), "replicas", command: "replicas")
        #expect(
            Set((known["replicas"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }).isSuperset(of: [
                "A", "B"
            ]), "\(known)")
        Self.check(
            b.run("replicas", "forget", "--json", "--dry-run", "A"), "replicas-forget", command: "replicas forget")
        b.write("draft.json", "{\"d\": 1}\n")
        let reverted = Self.check(b.run("revert", "--json", "draft.json"), "sync-report", command: "revert")
        #expect((reverted["reverted"] as? [[String: Any]])?.first?["path"] as? String == "draft.json", "\(reverted)")
        Self.check(b.run("reset-base", "--json"), "sync-report", command: "reset-base")
    }

    @Test("init and clone on a bare git repository report the kind and branch; log DOC lists commits")
    func gitRemote() {
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("doc.json", "{\"v\": 1}\n")
        let made = Self.check(
            CLI.run(["init", "--json", "--remote", repo, "--name", "A", "A"], in: box.root), "init",
            command: "init")
        let remote = made["remote"] as? [String: Any]
        #expect(
            remote?["kind"] as? String == "git" && remote?["branch"] as? String == "main", "\(made)")
        a.sync()
        let cloned = Self.check(
            CLI.run(["clone", "--json", repo, "B"], in: box.root), "clone", command: "clone")
        #expect(
            cloned["documents"] as? Int == 1
                && (cloned["remote"] as? [String: Any])?["kind"] as? String == "git", "\(cloned)")
        let history = Self.check(
            box.replica("B").run("log", "--json", "doc.json"), "log-document", command: "log")
        let commit = (history["remote"] as? [[String: Any]])?.first?["id"] as? String
        #expect(commit?.count == 40, "a git remote's versions are commits: \(history)")
    }

    @Test("failures print a JSON error object on stdout with the same exit code")
    func errorsAreJSON() {
        let box = Sandbox()
        let outside = Self.check(
            CLI.run(["status", "--json"], in: box.root), "error", command: nil, exit: 1)
        #expect((outside["error"] as? [String: Any])?["code"] as? String == "not-a-tree", "\(outside)")
        let a = box.initReplica("A")

        let usage = Self.check(a.run("log", "--json", "--bogus"), "error", command: nil, exit: 2)
        #expect((usage["error"] as? [String: Any])?["code"] as? String == "usage")
        #expect((usage["error"] as? [String: Any])?["exitCode"] as? Int == 2)
        let unknownCommand = Self.check(
            CLI.run(["--json", "-C", "A", "frobnicate"], in: box.root), "error", command: nil, exit: 2)
        #expect((unknownCommand["error"] as? [String: Any])?["code"] as? String == "usage")

        let key = Self.check(a.run("config", "--json", "no.such.key"), "error", command: nil, exit: 1)
        #expect((key["error"] as? [String: Any])?["code"] as? String == "unknown-key")
        let missing = Self.check(
            CLI.run(["clone", "--json", box.path("nowhere"), "C"], in: box.root), "error", command: nil,
            exit: 1)
        #expect((missing["error"] as? [String: Any])?["code"] as? String == "no-remote", "\(missing)")
        // A run that fails after its report: the report alone, with the exit code.
        try? FileManager.default.removeItem(atPath: box.remote)
        a.write("new.json", "{}")
        let offline = Self.check(a.run("sync", "--json"), "sync-report", command: "sync", exit: 75)
        #expect(offline["remoteUnreachable"] is String, "\(offline)")
    }

    @Test(
        "a push refused by the max-delete guard and the restore it offers print reports valid against sync-report"
    )
    func refusedPushAndRestore() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{}", "b.json": "{}", "c.json": "{}"])
        a.sync()
        a.remove("a.json")
        a.remove("b.json")
        let refused = Self.check(a.run("push", "--json"), "sync-report", command: "push", exit: 1)
        #expect((refused["refusedPush"] as? [String: Any])?["count"] as? Int == 2, "\(refused)")
        let restored = Self.check(
            a.run("restore", "--json", "--deleted"), "sync-report", command: "restore")
        #expect((restored["restored"] as? [[String: Any]])?.count == 2, "\(restored)")
        let dry = Self.check(
            a.run("restore", "--json", "--dry-run", "c.json"), "sync-report", command: "restore")
        #expect(
            (dry["restored"] as? [[String: Any]])?.first?["changesetId"] == nil,
            "a dry run writes no new version: \(dry)")
    }

    @Test("every example in docs/JSON.md is valid against its schema")
    func documentedExamplesAreValid() throws {
        let page = try String(contentsOfFile: CLI.packageRoot + "/docs/JSON.md", encoding: .utf8)
        // A pretty object (no fence inside), or lines of compact objects (watch --json).
        let blocks = page.matches(
            of: #/```console\n\$ docsync [^\n]*\n(\{[^`]*?\n\})\n```/#.dotMatchesNewlines())
        #expect(blocks.count >= 20, "examples found: \(blocks.count)")
        let lineBlocks = page.matches(of: #/```console\n\$ docsync [^\n]*watch --json\n((?:\{[^\n]*\}\n)+)```/#)
        #expect(lineBlocks.count == 1, "the watch example: \(lineBlocks.count)")
        for block in lineBlocks {
            for line in block.1.split(separator: "\n") {
                if let problems = SchemaValidator.problems(String(line), schema: "watch") {
                    Issue.record("docs/JSON.md watch line rejected by watch.schema.json: \(problems)\n\(line)")
                }
            }
        }
        for block in blocks {
            let text = String(block.1)
            let object = try #require(JSONHelp.parse(text) as? [String: Any], "not JSON: \(text)")
            let schema: String
            switch object["command"] as? String {
            case nil: schema = "error"
            case "push", "pull", "sync", "rm", "restore", "revert", "override", "resolve", "reset-base":
                schema = "sync-report"
            case "log": schema = object["entries"] == nil ? "log-document" : "log"
            case "config": schema = object["values"] == nil ? "config" : "config-list"
            case "replicas forget": schema = "replicas-forget"
            case "sparse list": schema = "sparse-list"
            case let command?: schema = command
            }
            if let problems = SchemaValidator.problems(text, schema: schema) {
                Issue.record("docs/JSON.md example rejected by \(schema).schema.json: \(problems)\n\(text)")
            }
        }
    }
}
