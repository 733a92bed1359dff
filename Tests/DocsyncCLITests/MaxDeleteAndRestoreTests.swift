// The max-delete guard still reports what the run pulled and offers one command that
// brings back every document the refused push would have deleted; `restore` takes
// several documents, brings back deleted ones, refuses an ambiguous --at prefix and says
// which version it wrote; a full changesetId found in both the journal and the remote's
// history is one version, not two.

import Foundation
import Testing

@Suite("max-delete guard and restore")
struct MaxDeleteAndRestoreTests {
    /// A with d1…d4 synced; B cloned, adds fromB.json and syncs.
    static func setUp(_ box: Sandbox) -> (Replica, Replica) {
        var files: [String: String] = [:]
        for i in 1...4 { files["d\(i).json"] = "{\"n\": \(i)}\n" }
        let a = box.initReplica("A", files: files)
        a.sync()
        let b = box.clone("B")
        b.write("fromB.json", "{\"from\": \"B\"}\n")
        b.sync()
        return (a, b)
    }

    @Test(
        "a refused push still pulls and reports it, lists the deletions, and `docsync restore --deleted` brings them all back"
    )
    func refusedPushReportsAndRestores() throws {
        let box = Sandbox()
        let (a, b) = Self.setUp(box)
        let before = (1...3).map { a.bytes("d\($0).json") }
        for i in 1...3 { a.remove("d\(i).json") }
        let refused = a.run("sync")
        #expect(refused.exit == 1, refused.comment)
        #expect(
            refused.stdout.contains("pull    create  fromB.json"),
            "what the run pulled is reported: \(refused)")
        #expect(a.exists("fromB.json"), "the pull before the refused push was applied")
        for i in 1...3 {
            #expect(refused.stdout.contains("  would delete  d\(i).json"), refused.comment)
        }
        #expect(
            refused.stdout.contains("To bring them all back:  docsync restore --deleted"), refused.comment
        )
        #expect(
            refused.stderr.contains("push.maxDeleteShare")
                && refused.stderr.contains("docsync restore --deleted"), refused.comment)
        for i in 1...3 {
            #expect(
                FileManager.default.fileExists(atPath: box.remote + "/d\(i).json"),
                "nothing was deleted on the remote")
        }

        let quiet = a.run("sync", "--quiet")
        #expect(quiet.exit == 1 && quiet.stdout.isEmpty, "cron: nothing on stdout: \(quiet)")
        #expect(
            quiet.stderr.contains("docsync restore --deleted"), "the one line cron mails names the way back: \(quiet)")

        let json = a.run("sync", "--json")
        #expect(json.exit == 1, json.comment)
        let report = try #require(
            JSONHelp.parse(json.stdout) as? [String: Any], "one JSON object: \(json)")
        let refusal = try #require(report["refusedPush"] as? [String: Any], "\(report)")
        #expect(refusal["count"] as? Int == 3 && refusal["total"] as? Int == 5, "\(refusal)")
        #expect(
            (refusal["deletions"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == [
                "d1.json", "d2.json", "d3.json"
            ])
        #expect(refusal["restoreCommand"] as? String == "docsync restore --deleted")

        let restored = a.run("restore", "--deleted")
        #expect(restored.exit == 0, restored.comment)
        for i in 1...3 {
            let path = "d\(i).json"
            #expect(a.json(path)?["n"] as? Int == i, "\(path) is back")
            #expect(
                a.refId(path) == (before[i - 1].flatMap(JSONHelp.object)?["refId"] as? String),
                "\(path) keeps its identity")
            #expect(
                restored.stdout.contains("restore \(path): version ")
                    && restored.stdout.contains("now \(a.changesetId(path) ?? "?")"), restored.comment)
        }
        #expect(a.sync().exit == 0)
        b.sync()
        for i in 1...4 { #expect(b.json("d\(i).json")?["n"] as? Int == i, "B still has d\(i).json") }
        #expect(
            a.run("restore", "--deleted").exit == 1,
            "nothing left to restore is an error, not a silent success")
    }

    @Test(
        "restore DOC on a deleted document brings back its last live version; several documents per call"
    )
    func restoreDeletedAndSeveral() throws {
        let box = Sandbox()
        let (a, b) = Self.setUp(box)
        a.write("d1.json", a.read("d1.json")!.replacing("\"n\": 1", with: "\"n\": 10"))
        a.sync()
        let refD1 = try #require(a.refId("d1.json"))
        let lastLive = try #require(a.changesetId("d1.json"))
        b.sync()
        b.ok("rm", "d1.json", "d2.json")
        b.sync()
        a.sync()
        #expect(!a.exists("d1.json") && !a.exists("d2.json"))

        let r = a.run("restore", "d1.json", "d2.json")
        #expect(r.exit == 0, r.comment)
        #expect(
            a.json("d1.json")?["n"] as? Int == 10 && a.refId("d1.json") == refD1,
            "the last live version, same identity")
        #expect(a.json("d2.json")?["n"] as? Int == 2)
        #expect(
            r.stdout.contains(
                "restore d1.json: version \(lastLive) (from the journal), now \(a.changesetId("d1.json") ?? "?")"
            ), r.comment)
        #expect(a.changesetId("d1.json") != lastLive, "a restore is a new edit")
        a.sync()
        b.sync()
        #expect(
            b.json("d1.json")?["n"] as? Int == 10 && b.json("d2.json")?["n"] as? Int == 2,
            "the restore reaches the other replica")

        let json = try #require(
            JSONHelp.parse(a.run("restore", "--json", "d3.json").stdout) as? [String: Any])
        let entry = (json["restored"] as? [[String: Any]])?.first
        #expect(
            entry?["path"] as? String == "d3.json"
                && entry?["changesetId"] as? String == a.changesetId("d3.json"), "\(json)")

        #expect(a.run("restore").exit == 2, "nothing named is a usage error")
        #expect(
            a.run("restore", "--at", "01", "d1.json", "d2.json").exit == 2,
            "--at names one document's version")
    }

    @Test(
        "restore --at refuses a prefix that matches several versions, listing them, and changes nothing"
    )
    func ambiguousPrefix() throws {
        let box = Sandbox()
        let (a, _) = Self.setUp(box)
        let first = try #require(a.changesetId("d4.json"))
        a.write("d4.json", a.read("d4.json")!.replacing("\"n\": 4", with: "\"n\": 40"))
        a.sync()
        let second = try #require(a.changesetId("d4.json"))
        // The common beginning of the two ids (at least the leading digit they share).
        let common = String(zip(first, second).prefix { $0 == $1 }.map(\.0))
        try #require(!common.isEmpty && common != first)
        let bytes = a.bytes("d4.json")
        let r = a.run("restore", "--at", common, "d4.json")
        #expect(r.exit == 1, r.comment)
        #expect(
            r.stderr.contains("ambiguous") && r.stderr.contains(first) && r.stderr.contains(second),
            r.comment)
        #expect(a.bytes("d4.json") == bytes, "nothing written")
        #expect(!a.ok("status").stdout.contains("Pending"), "nothing recorded")

        let exact = a.run("restore", "--at", String(first.prefix(first.count - 2)), "d4.json")
        #expect(exact.exit == 0, exact.comment)
        #expect(
            a.json("d4.json")?["n"] as? Int == 4 && exact.stdout.contains("version \(first)"),
            exact.comment)
    }

    @Test(
        "restore --at a full changesetId that both the journal and the remote's history hold brings it back",
        arguments: [false, true])
    func fullIdInJournalAndRemote(git: Bool) throws {
        let box = Sandbox()
        let url = Reliability.remote(box, git: git)
        let a = box.replica("A")
        a.write("d.json", "{\"n\": 1}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        a.write("d.json", a.read("d.json")!.replacing("\"n\": 1", with: "\"n\": 2"))
        a.sync()
        let second = try #require(a.changesetId("d.json"))
        a.write("d.json", a.read("d.json")!.replacing("\"n\": 2", with: "\"n\": 3"))
        a.sync()
        let r = a.run("restore", "--at", second, "d.json")
        #expect(r.exit == 0, "\(git ? "git" : "folder"): \(r.comment)")
        #expect(a.json("d.json")?["n"] as? Int == 2, r.comment)
    }
}
