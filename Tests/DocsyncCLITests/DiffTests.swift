import Foundation
import Testing

/// `docsync diff`: semantic, by JSON pointer, through the built binary.
@Suite("docsync diff")
struct DiffTests {
    @Test(
        "local edits against the last synced version, the remote, and one version; pointers for objects, identity arrays and lists",
        arguments: MergeCLITests.Kind.allCases)
    func againstBaseRemoteAndVersion(_ kind: MergeCLITests.Kind) throws {
        let box = Sandbox("diff-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write(
            "o.json",
            "{\n  \"order\": \"o1\",\n  \"lines\": [{\"id\": \"a\", \"qty\": 1}, {\"id\": \"b\", \"qty\": 2}],\n  \"tags\": [\"x\", \"y\"]\n}\n"
        )
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.ok("sync")
        let first = a.changesetId("o.json")!
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        #expect(a.ok("diff").stdout.isEmpty, "nothing changed: no output")

        // B moves item b first and edits it; A edits a field and a tag.
        b.write(
            "o.json",
            b.read("o.json")!.replacing(
                "{\"id\": \"a\", \"qty\": 1}, {\"id\": \"b\", \"qty\": 2}",
                with: "{\"id\": \"b\", \"qty\": 5}, {\"id\": \"a\", \"qty\": 1}"))
        b.ok("sync")
        a.write(
            "o.json",
            a.read("o.json")!.replacing("\"o1\"", with: "\"o2\"").replacing(
                "[\"x\", \"y\"]", with: "[\"x\", \"z\", \"y\"]"))
        let local = a.ok("diff")
        #expect(
            local.stdout
                == "o.json (against the last synced version \(first))\n  ~ /order: \"o1\" → \"o2\"\n  + /tags/1: \"z\"\n",
            local.comment)

        let vsRemote = a.ok("diff", "--against", "remote")
        // Item b matched by id wherever it moved; pointers name the place in the file here.
        #expect(vsRemote.stdout.contains("~ /lines/1/qty: 5 → 2"), "item b matched by id: \(vsRemote)")
        #expect(vsRemote.stdout.contains("~ /order: \"o1\" → \"o2\""), vsRemote.comment)

        a.ok("sync")
        let vsFirst = a.ok("diff", "o.json", "--against", String(first.prefix(16)))
        #expect(
            vsFirst.stdout.contains("~ /lines/0/qty: 2 → 5") && vsFirst.stdout.contains("+ /tags/1: \"z\""),
            vsFirst.comment)

        let json = try #require(
            JSONHelp.parse(a.ok("diff", "--json", "o.json", "--against", first).stdout) as? [String: Any])
        let changes = ((json["documents"] as? [[String: Any]])?.first?["changes"] as? [[String: Any]]) ?? []
        #expect(
            changes.contains {
                $0["pointer"] as? String == "/order" && $0["kind"] as? String == "changed"
                    && $0["old"] as? String == "\"o1\""
            }, "\(json)")
        let bad = a.run("diff", "o.json", "--against", "zzzz")
        #expect(bad.exit == 1 && bad.stderr.contains("no version 'zzzz'"), bad.comment)
    }

    @Test("diff --files, and as git's external diff in a real repository")
    func filesAndGit() throws {
        let box = Sandbox()
        let repo = box.path("repo")
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        try "{\"a\": [1, 2, 3], \"b\": {\"c\": 1}}\n".write(toFile: repo + "/r.json", atomically: true, encoding: .utf8)
        try "{\"a\": [1, 3, 4], \"b\": {\"c\": 2}}\n".write(toFile: repo + "/s.json", atomically: true, encoding: .utf8)
        let files = CLI.run(["diff", "--files", "r.json", "s.json"], in: repo)
        #expect(files.exit == 0, files.comment)
        #expect(files.stdout == "r.json → s.json\n  - /a/1: 2\n  + /a/2: 4\n  ~ /b/c: 1 → 2\n", files.comment)

        let env = Reliability.gitEnv.merging([
            "PATH": (CLI.binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"
        ]) { $1 }
        let git = { (args: [String]) in CLI.runTool("/usr/bin/git", args, in: repo, env: env) }
        #expect(git(["init", "-q", "-b", "main"]).exit == 0)
        #expect(git(["add", "."]).exit == 0 && git(["commit", "-qm", "one"]).exit == 0)
        try "{\"a\": [1, 2, 3, 9], \"b\": {\"c\": 1}}\n".write(
            toFile: repo + "/r.json", atomically: true, encoding: .utf8)
        let diff = git([
            "-c", "diff.docsync.command=docsync diff --git", "-c", "core.attributesFile=/dev/null", "diff",
            "--ext-diff", "--", "r.json"
        ])
        // Without the attribute git uses its own diff; with it, docsync's.
        #expect(diff.stdout.contains("+{\"a\": [1, 2, 3, 9]") || diff.stdout.contains("-{\"a\""), diff.comment)
        try "*.json diff=docsync\n".write(toFile: repo + "/.gitattributes", atomically: true, encoding: .utf8)
        let semantic = git(["-c", "diff.docsync.command=docsync diff --git", "diff", "--ext-diff", "--", "r.json"])
        #expect(semantic.exit == 0, semantic.comment)
        #expect(semantic.stdout == "a/r.json → b/r.json\n  + /a/3: 9\n", semantic.comment)
    }
}
