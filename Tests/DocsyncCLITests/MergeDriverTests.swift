import Foundation
import Testing

/// `docsync git-setup` and `docsync merge-driver` driven by the real `git merge`, in a
/// plain git repository (no docsync tree), as a user would.
@Suite("git merge driver")
struct MergeDriverTests {
    let box = Sandbox()
    var repo: String { box.path("repo") }

    func git(_ args: String...) -> RunResult {
        let env = Reliability.gitEnv.merging([
            "PATH": (CLI.binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com"
        ]) { $1 }
        return CLI.runTool("/usr/bin/git", Array(args), in: repo, env: env)
    }

    func write(_ path: String, _ text: String) {
        try! text.write(toFile: repo + "/" + path, atomically: true, encoding: .utf8)
    }
    func read(_ path: String) -> String { (try? String(contentsOfFile: repo + "/" + path, encoding: .utf8)) ?? "" }

    /// A repository with order.json committed on main, git-setup done, and a branch `other`.
    func setUp() {
        try! FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        #expect(git("init", "-q", "-b", "main").exit == 0)
        let setup = CLI.run(["git-setup"], in: repo)
        #expect(setup.exit == 0, setup.comment)
        #expect(read(".gitattributes").contains("*.json merge=docsync"))
        #expect(git("config", "merge.docsync.driver").stdout.contains("docsync merge-driver %O %A %B %P"))
        write(
            "order.json",
            "{\n  \"order\": \"o-1\",\n  \"lines\": [\n    {\"id\": \"a\", \"qty\": 1}\n  ],\n  \"note\": \"n\"\n}\n")
        #expect(git("add", ".").exit == 0)
        #expect(git("commit", "-qm", "base").exit == 0)
        #expect(git("branch", "other").exit == 0)
    }

    @Test("two branches adding different items to one list: git merge succeeds with both items")
    func bothItems() throws {
        setUp()
        write(
            "order.json",
            read("order.json").replacing(
                "{\"id\": \"a\", \"qty\": 1}", with: "{\"id\": \"a\", \"qty\": 1},\n    {\"id\": \"b\", \"qty\": 2}"))
        #expect(git("commit", "-qam", "add b").exit == 0)
        #expect(git("checkout", "-q", "other").exit == 0)
        write(
            "order.json",
            read("order.json").replacing(
                "{\"id\": \"a\", \"qty\": 1}", with: "{\"id\": \"a\", \"qty\": 1},\n    {\"id\": \"c\", \"qty\": 3}"))
        #expect(git("commit", "-qam", "add c").exit == 0)
        #expect(git("checkout", "-q", "main").exit == 0)
        let merged = git("merge", "-q", "--no-edit", "other")
        #expect(merged.exit == 0, merged.comment)
        let object = try #require(
            JSONHelp.parse(read("order.json")) as? [String: Any], Comment(rawValue: read("order.json")))
        let ids = (object["lines"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        // Both inserted after a: the earlier save's first. Without changesetIds ours counts
        // as the later save (git's convention), so theirs (c) comes first.
        #expect(ids == ["a", "c", "b"], "\(read("order.json"))")
        #expect(git("status", "--porcelain").stdout.isEmpty, "the merge was committed")
    }

    @Test(
        "a field changed on both branches: git marks the file unmerged, the file is valid JSON, the pointer and both values are printed"
    )
    func collision() throws {
        setUp()
        write("order.json", read("order.json").replacing("\"note\": \"n\"", with: "\"note\": \"main\""))
        #expect(git("commit", "-qam", "main note").exit == 0)
        #expect(git("checkout", "-q", "other").exit == 0)
        write(
            "order.json",
            read("order.json").replacing("\"note\": \"n\"", with: "\"note\": \"other\"").replacing(
                "\"qty\": 1", with: "\"qty\": 7"))
        #expect(git("commit", "-qam", "other note").exit == 0)
        #expect(git("checkout", "-q", "main").exit == 0)
        let merged = git("merge", "--no-edit", "other")
        #expect(merged.exit != 0, merged.comment)
        #expect(
            (merged.stdout + merged.stderr).contains("order.json: /note: ours \"main\", theirs \"other\"; kept ours"),
            merged.comment)
        #expect(git("status", "--porcelain").stdout.contains("UU order.json"), "git marks it unmerged")
        let object = try #require(
            JSONHelp.parse(read("order.json")) as? [String: Any],
            "valid JSON, no conflict markers: \(read("order.json"))")
        #expect(object["note"] as? String == "main", "ours: no changesetIds to compare")
        #expect((object["lines"] as? [[String: Any]])?.first?["qty"] as? Int == 7, "the rest is merged")
    }

    @Test("merge-driver by hand: invalid JSON on one side leaves OURS as it was and exits 1")
    func invalidSide() {
        try! FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        write("base.json", "{\"a\": 1}")
        write("ours.json", "{\"a\": 2}")
        write("theirs.json", "{\"a\": ")
        let r = CLI.run(["merge-driver", "base.json", "ours.json", "theirs.json", "x.json"], in: repo)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("theirs (x.json):1:7"), r.comment)
        #expect(read("ours.json") == "{\"a\": 2}")
    }

    @Test(
        "merge-driver: a side that repeats a member name (I-JSON) is not merged (a merge would keep one silently): OURS as it was, exit 1"
    )
    func repeatedMemberName() {
        try! FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        write("base.json", "{\"a\": 1, \"o\": {\"b\": 1}}")
        write("ours.json", "{\"a\": 2, \"o\": {\"b\": 1}}")
        write("theirs.json", "{\"a\": 1, \"o\": {\"b\": 1, \"b\": 3}}")
        let r = CLI.run(["merge-driver", "base.json", "ours.json", "theirs.json", "x.json"], in: repo)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("theirs (x.json):1:24: duplicate member name \"b\""), r.comment)
        #expect(read("ours.json") == "{\"a\": 2, \"o\": {\"b\": 1}}")
    }
}
