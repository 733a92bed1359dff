import Foundation
import Testing

/// `docsync check`: the rules a sync holds records to, checked without syncing, in a
/// docsync tree or outside one (a git pre-commit hook, a CI step).
@Suite("docsync check")
struct CheckCommandTests {
    /// A with contacts/** bound to schemas/contact.json, as in SchemaTests.
    func setUp(_ box: Sandbox, files: [String: String]) -> Replica {
        let a = box.replica("A")
        a.write("schemas/contact.json", SchemaTests.contactSchema)
        for (path, text) in files { a.write(path, text) }
        #expect(CLI.run(["init", "--remote", box.remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.ok("config", "schema.contacts/**", "schemas/contact.json")
        return a
    }

    @Test("check: every problem of the tree or of the paths given, exit 1; all valid exit 0; --json; writes nothing")
    func checkInATree() throws {
        let box = Sandbox()
        let a = setUp(box, files: ["contacts/ann.json": "{\"name\": \"Ann\"}\n", "notes/n.json": "{\"x\": 1}\n"])
        a.ok("sync")
        a.write("contacts/bad.json", "{\"name\": \"B\", \"email\": \"x\"}\n")
        a.write("notes/broken.json", "{\"x\": \n")
        a.write("notes/ref.json", "{\"refId\": 7}\n")
        let before = Files.tree(a.root, skipMetadata: false)

        let all = a.run("check")
        #expect(all.exit == 1, all.comment)
        for line in [
            "contacts/bad.json: error: /email: not a valid email", "notes/broken.json:2:1: error:",
            "notes/ref.json: error: \"refId\" must be a string"
        ] {
            #expect(all.stderr.contains(line), "\(line): \(all)")
        }
        let one = a.run("check", "contacts/ann.json", "notes/n.json")
        #expect(one.exit == 0, one.comment)
        #expect(one.stdout.contains("checked 2 records (1 with a schema): all valid"), one.comment)
        let missing = a.run("check", "contacts/nobody.json")
        #expect(
            missing.exit == 1 && missing.stderr.contains("contacts/nobody.json: error: no such file"), missing.comment)
        // From a subfolder, paths are relative to it; schema globs still to the tree's root.
        let sub = CLI.run(["check", "bad.json"], in: a.path("contacts"))
        #expect(sub.exit == 1 && sub.stderr.contains("bad.json: error: /email: not a valid email"), sub.comment)

        let json = a.run("check", "--json")
        #expect(json.exit == 1, json.comment)
        let object = try #require(JSONHelp.parse(json.stdout) as? [String: Any], json.comment)
        #expect(object["command"] as? String == "check")
        #expect(
            object["checked"] as? Int == 6 && object["withSchema"] as? Int == 2 && object["invalid"] as? Int == 3,
            json.comment)
        let problems = object["problems"] as? [[String: Any]] ?? []
        #expect(
            problems.contains { $0["path"] as? String == "contacts/bad.json" && $0["pointer"] as? String == "/email" },
            json.comment)
        #expect(
            problems.contains { $0["path"] as? String == "notes/broken.json" && $0["line"] as? Int == 2 }, json.comment)

        #expect(Files.tree(a.root, skipMetadata: false) == before, "check writes nothing, in the tree or in .docsync/")
    }

    @Test(
        "check DIR from outside the tree (a CI step, a hook in a parent folder) checks the tree's records by its rules")
    func checkATreeFromOutsideIt() throws {
        let box = Sandbox()
        let a = setUp(box, files: ["contacts/ann.json": "{\"name\": \"Ann\"}\n"])
        a.write("contacts/bad.json", "{\"name\": \"B\", \"email\": \"x\"}\n")
        a.write("notes/broken.json", "{\"x\": \n")
        a.write("notes/list.json", "[1]\n")

        let expected = [
            "A/contacts/bad.json: error: /email: not a valid email", "A/notes/broken.json:2:1: error:",
            "A/notes/list.json:1:1: error: top-level value is an array"
        ]
        let outside = CLI.run(["check", "A"], in: box.root)
        #expect(outside.exit == 1, outside.comment)
        for line in expected { #expect(outside.stderr.contains(line), "\(line): \(outside)") }
        #expect(!outside.stdout.contains("all valid"), outside.comment)
        // A file named from outside is checked by the tree's schema globs too.
        let file = CLI.run(["check", "A/contacts/bad.json"], in: box.root)
        #expect(file.exit == 1 && file.stderr.contains(expected[0]), file.comment)
        // From inside another tree, a path into this one is still checked by this one's rules.
        let b = box.initReplica("B")
        let fromB = CLI.run(["check", "../A/contacts"], in: b.root)
        #expect(
            fromB.exit == 1 && fromB.stderr.contains("../A/contacts/bad.json: error: /email: not a valid email"),
            fromB.comment)
        // A parent folder (a repository holding the tree) checks the trees in it by their rules;
        // the folder remote beside them is not records.
        let parent = CLI.run(["check"], in: box.root)
        #expect(parent.exit == 1, parent.comment)
        for line in expected { #expect(parent.stderr.contains(line), "\(line): \(parent)") }
        #expect(!parent.stderr.contains("remote/"), parent.comment)
        // -C works the same way.
        let dashC = CLI.run(["-C", "A", "check"], in: box.root)
        #expect(dashC.exit == 1 && dashC.stderr.contains("notes/list.json:1:1: error:"), dashC.comment)
    }

    @Test("check outside a docsync tree, with --schema, and as the README's git pre-commit hook in a real repository")
    func checkOutsideATreeAndAsAHook() throws {
        let box = Sandbox()
        let repo = box.path("repo")
        try FileManager.default.createDirectory(atPath: repo + "/records", withIntermediateDirectories: true)
        try SchemaTests.contactSchema.write(toFile: repo + "/contact.schema.json", atomically: true, encoding: .utf8)
        try "{\"name\": 1}\n".write(toFile: repo + "/records/a.json", atomically: true, encoding: .utf8)
        let forced = CLI.run(["check", "--schema", "contact.schema.json", "records"], in: repo)
        #expect(
            forced.exit == 1 && forced.stderr.contains("records/a.json: error: /name: expected string, found integer"),
            forced.comment)
        let noSchema = CLI.run(["check", "records"], in: repo)
        #expect(noSchema.exit == 0, "outside a tree, a record names its schema itself or none applies: \(noSchema)")
        let badFlag = CLI.run(["check", "--schema", "nope.json", "records"], in: repo)
        #expect(badFlag.exit == 1 && badFlag.stderr.contains("--schema nope.json: no such file"), badFlag.comment)

        // The hook from examples/ (shown in the README), in a real git repository.
        let git = { (args: [String]) in CLI.runTool("/usr/bin/git", args, in: repo, env: Reliability.gitEnv) }
        #expect(git(["init", "-q", "-b", "main"]).exit == 0)
        let hook = CLI.packageRoot + "/examples/git-hooks/pre-commit"
        #expect(FileManager.default.fileExists(atPath: hook))
        try FileManager.default.copyItem(atPath: hook, toPath: repo + "/.git/hooks/pre-commit")
        let docsyncFolder = (CLI.binary as NSString).deletingLastPathComponent
        let env = [
            "PATH": docsyncFolder + ":/usr/bin:/bin", "DOCSYNC_CHECK_SCHEMA": "contact.schema.json",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com"
        ]
        #expect(git(["add", "."]).exit == 0)
        let refused = CLI.runTool(
            "/usr/bin/git", ["commit", "-q", "-m", "bad"], in: repo, env: Reliability.gitEnv.merging(env) { $1 })
        #expect(refused.exit != 0, "the hook refuses a record that fails: \(refused)")
        #expect(refused.stderr.contains("records/a.json: error: /name"), refused.comment)
        try "{\"name\": \"A\"}\n".write(toFile: repo + "/records/a.json", atomically: true, encoding: .utf8)
        #expect(git(["add", "."]).exit == 0)
        let accepted = CLI.runTool(
            "/usr/bin/git", ["commit", "-q", "-m", "good"], in: repo, env: Reliability.gitEnv.merging(env) { $1 })
        #expect(accepted.exit == 0, accepted.comment)
    }
}
