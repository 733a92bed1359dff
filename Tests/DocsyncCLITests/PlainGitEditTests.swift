// Edits made with plain git (sed in a `git clone`) keep the changesetId of the version they
// came from, so one changesetId would name several contents. docsync keeps "one
// changesetId, one content": such a version pulled from git gets a fresh changesetId, the
// merge driver gives a tie to ours (as SYNC.md says) and says why, and `restore --at`
// refuses an id that names several versions and lists them.

import Foundation
import Testing

@Suite("Plain-git edits that keep the changesetId", .serialized)
struct PlainGitEditTests {
    static func git(_ args: [String], in dir: String) -> RunResult {
        let env = Reliability.gitEnv.merging([
            "PATH": (CLI.binary as NSString).deletingLastPathComponent + ":/usr/bin:/bin",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com"
        ]) { $1 }
        return CLI.runTool("/usr/bin/git", args, in: dir, env: env)
    }

    static func field(_ text: String, _ key: String) -> String? {
        (JSONHelp.object(Array(text.utf8))?[key]) as? String
    }

    @Test(
        "merge driver: both sides carry the same changesetId (sed on two branches): ours wins the collision, and it says so"
    )
    func mergeDriverTie() throws {
        let box = Sandbox()
        let id = "01a20000aaaa-0000-9461eb2315bc"
        let base = "{\"refId\": \"r\", \"changesetId\": \"\(id)\", \"v\": \"base\"}\n"
        let ours = "{\"refId\": \"r\", \"changesetId\": \"\(id)\", \"v\": \"ours\"}\n"
        let theirs = "{\"refId\": \"r\", \"changesetId\": \"\(id)\", \"v\": \"theirs\"}\n"
        for (name, text) in [("base.json", base), ("ours.json", ours), ("theirs.json", theirs)] {
            try text.write(toFile: box.path(name), atomically: true, encoding: .utf8)
        }
        let r = CLI.run(["merge-driver", "base.json", "ours.json", "theirs.json", "x.json"], in: box.root)
        #expect(r.exit == 1, "a collision leaves the file unmerged: \(r)")
        let merged = try String(contentsOfFile: box.path("ours.json"), encoding: .utf8)
        #expect(Self.field(merged, "v") == "ours", "a tie goes to ours: \(merged)")
        #expect(
            !r.stdout.contains("later changesetId") && !r.stderr.contains("later changesetId"), "no false reason: \(r)")
        #expect((r.stdout + r.stderr).contains("same changesetId"), r.comment)
    }

    @Test(
        "a plain-git edit of a version docsync stamped keeps that id: a replica that never saw the stamped version derives the same new id as one that did"
    )
    func replicasThatSawDifferentHistoryDeriveOneId() throws {
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("p.json", "{\n  \"a\": \"base\",\n  \"b\": \"base\"\n}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", repo, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        let work = box.path("work")
        #expect(Self.git(["clone", "-q", repo, work], in: box.root).exit == 0)
        func sed(_ from: String, _ to: String, _ message: String) throws {
            #expect(Self.git(["pull", "-q", "--no-rebase", "origin", "main"], in: work).exit == 0)
            let text = try String(contentsOfFile: work + "/p.json", encoding: .utf8)
            try text.replacingOccurrences(of: from, with: to).write(
                toFile: work + "/p.json", atomically: true, encoding: .utf8)
            #expect(Self.git(["commit", "-qam", message], in: work).exit == 0)
            #expect(Self.git(["push", "-q", "origin", "main"], in: work).exit == 0)
        }
        // A plain-git edit; A syncs and publishes the version stamped with a new id.
        try sed("\"a\": \"base\"", "\"a\": \"git\"", "a")
        #expect(a.run("sync").exit == 0)
        let stamped = try #require(a.changesetId("p.json"))
        // A second plain-git edit, on the stamped version: it keeps the stamped id. A and B
        // pull it (neither publishes); B never saw the stamped version.
        try sed("\"b\": \"base\"", "\"b\": \"git\"", "b")
        #expect(Self.field(try String(contentsOfFile: work + "/p.json", encoding: .utf8), "changesetId") == stamped)
        #expect(a.run("pull").exit == 0)
        #expect(b.run("pull").exit == 0)
        for r in [a, b] {
            #expect(
                r.json("p.json")?["a"] as? String == "git" && r.json("p.json")?["b"] as? String == "git",
                "\(r.root): \(r.read("p.json") ?? "-")")
        }
        let idA = try #require(a.changesetId("p.json")), idB = try #require(b.changesetId("p.json"))
        #expect(idA != stamped, "A: the second edit is a new version, not \(stamped)")
        #expect(idB == idA, "B derives the id A derived (one content, one changesetId): A \(idA), B \(idB)")
    }

    @Test(
        "two branches edited with sed, merged with plain git: docsync pulls a fresh changesetId; restore --at the shared id refuses and lists the versions"
    )
    func sedOnTwoBranches() throws {
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("p.json", "{\n  \"name\": \"Ann\",\n  \"x\": 1,\n  \"y\": 2,\n  \"z\": 3,\n  \"phone\": \"1\"\n}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let shared = try #require(a.changesetId("p.json"))
        let work = box.path("work")
        #expect(Self.git(["clone", "-q", repo, work], in: box.root).exit == 0)
        #expect(Self.git(["checkout", "-q", "-b", "b1"], in: work).exit == 0)
        let text = try String(contentsOfFile: work + "/p.json", encoding: .utf8)
        try text.replacingOccurrences(of: "\"Ann\"", with: "\"Anna\"").write(
            toFile: work + "/p.json", atomically: true, encoding: .utf8)
        #expect(Self.git(["commit", "-qam", "name"], in: work).exit == 0)
        #expect(Self.git(["checkout", "-q", "main"], in: work).exit == 0)
        try text.replacingOccurrences(of: "\"1\"", with: "\"2\"").write(
            toFile: work + "/p.json", atomically: true, encoding: .utf8)
        #expect(Self.git(["commit", "-qam", "phone"], in: work).exit == 0)
        let merge = Self.git(["merge", "-q", "--no-edit", "b1"], in: work)
        #expect(merge.exit == 0, merge.comment)
        #expect(Self.git(["push", "-q", "origin", "main"], in: work).exit == 0)
        let merged = try String(contentsOfFile: work + "/p.json", encoding: .utf8)
        #expect(Self.field(merged, "changesetId") == shared, "plain git kept the old id in all three commits")

        let pulled = a.run("sync")
        #expect(pulled.exit == 0, pulled.comment)
        #expect(a.json("p.json")?["name"] as? String == "Anna" && a.json("p.json")?["phone"] as? String == "2")
        let now = try #require(a.changesetId("p.json"))
        #expect(now != shared, "a new content got a new changesetId")
        let id = try #require(ChangesetIDText(now))
        let old = try #require(ChangesetIDText(shared))
        #expect(id > old, "ordered after the version it was edited from")

        let restore = a.run("restore", "p.json", "--at", shared)
        #expect(restore.exit == 1, restore.comment)
        #expect(restore.stderr.contains("matches") && restore.stderr.contains("versions"), restore.comment)
        #expect(a.json("p.json")?["name"] as? String == "Anna", "nothing restored")
    }
}

/// The sortable text of a changesetId (its wall-clock and counter parts), for ordering.
private func ChangesetIDText(_ id: String) -> String? {
    let parts = id.split(separator: "-")
    return parts.count == 3 ? parts[0] + "-" + parts[1] : nil
}
