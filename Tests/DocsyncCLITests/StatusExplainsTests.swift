// `status` says why it lists what it lists: invalid files with path:line:col on stdout,
// a delete + create of one path as a refId changed (a removed one is an update), renames with their old
// path, deletions as tombstones, deletions that lost to an edit; `log` says "deleted"
// for a pulled deletion and names replicas.

import Foundation
import Testing

@Suite("status and log explain what they show")
struct StatusExplainsTests {
    static let doc = "{\"title\": \"original\"}\n"

    /// A with a.json, b.json, c.json synced, and B cloned from the same folder remote.
    static func pair(_ box: Sandbox) -> (Replica, Replica) {
        let a = box.initReplica("A", files: ["a.json": doc, "b.json": doc, "c.json": doc])
        a.sync()
        return (a, box.clone("B"))
    }

    @Test("status shows the first 50 of each list and how many more; --all shows every one; --json lists every one")
    func longListsAreCut() throws {
        let box = Sandbox()
        let (a, _) = Self.pair(box)
        for i in 0..<120 { a.write(String(format: "new/n%03d.json", i), "{\"i\": \(i)}\n") }
        let status = a.ok("status")
        let listed = status.stdout.split(separator: "\n").filter { $0.hasPrefix("  create  new/") }
        #expect(status.stdout.contains("Unrecorded changes on disk: 120"), status.comment)
        #expect(listed.count == 50, status.comment)
        #expect(status.stdout.contains("  … and 70 more (docsync status --all)"), status.comment)
        let all = a.ok("status", "--all")
        #expect(all.stdout.split(separator: "\n").filter { $0.hasPrefix("  create  new/") }.count == 120, all.comment)
        #expect(!all.stdout.contains("more (docsync status --all)"), all.comment)
        let json = try #require(JSONHelp.parse(a.ok("status", "--json").stdout) as? [String: Any])
        #expect((json["unrecorded"] as? [Any])?.count == 120, "\(json.keys)")

        // Pending: recorded while the remote is away (exit 75), cut the same way.
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.remote + ".away")
        #expect(a.run("sync").exit == 75)
        let pending = a.ok("status")
        #expect(pending.stdout.contains("Pending (recorded, not yet on the remote): 120"), pending.comment)
        #expect(
            pending.stdout.split(separator: "\n").filter { $0.hasPrefix("  create  new/") }.count == 50, pending.comment
        )
        #expect(pending.stdout.contains("  … and 70 more (docsync status --all)"), pending.comment)
    }

    @Test("invalid files are listed on stdout with path:line:col: reason, and status exits 1")
    func invalidFilesOnStdout() {
        let box = Sandbox()
        let (a, _) = Self.pair(box)
        a.write("bad.json", "{\"x\": 1,,}")
        let status = a.run("status")
        #expect(status.exit == 1, status.comment)
        #expect(
            status.stdout.contains("Not valid documents, left untouched and not synced: 1"),
            status.comment)
        #expect(status.stdout.contains("  bad.json:1:9: "), status.comment)
    }

    @Test(
        "a file whose refId was removed is a new version of its document; one whose refId changed is a delete + create that says so"
    )
    func refIdRemovedOrChanged() throws {
        let box = Sandbox()
        let (a, _) = Self.pair(box)
        let refA = try #require(a.refId("a.json"))
        let refB = try #require(a.refId("b.json"))
        a.write("a.json", "{\"title\": \"no id any more\"}\n")
        a.write("b.json", a.read("b.json")!.replacing(refB, with: "my-own-id"))
        let status = a.run("status")
        #expect(status.exit == 0, status.comment)
        // A file without ids at a tracked path: that document, rewritten (SPEC).
        #expect(status.stdout.contains("update  a.json"), status.comment)
        #expect(!status.stdout.contains("delete  a.json") && !status.stdout.contains("create  a.json"), status.comment)
        #expect(
            status.stdout.contains("delete  b.json  (its refId \(refB) changed to my-own-id in the file"),
            status.comment)
        #expect(
            status.stdout.contains(
                "create  b.json  (the file no longer carries refId \(refB): it is a new document, the old one is deleted)"
            ), status.comment)

        // Recorded, the pair stays explained (the new id is a real one now).
        let recorded = a.run("push", "--dry-run")
        #expect(recorded.exit == 0, recorded.comment)
        a.ok("push")
        #expect(a.refId("a.json") == refA, "stamped with its document's refId again")
        #expect(a.json("a.json")?["title"] as? String == "no id any more")
    }

    @Test("renames show (from old/path); recorded deletions are tombstones on the next push")
    func renamesAndTombstones() throws {
        let box = Sandbox()
        let (a, _) = Self.pair(box)
        try FileManager.default.createDirectory(
            atPath: a.path("sub"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: a.path("a.json"), toPath: a.path("sub/moved.json"))
        a.remove("b.json")
        let before = a.run("status")
        #expect(before.stdout.contains("rename  sub/moved.json  (from a.json)"), before.comment)
        #expect(
            before.stdout.contains(
                "delete  b.json  (file gone: recorded as a deletion (a tombstone on the remote) by the next push or sync)"
            ), before.comment)
        a.ok("rm", "c.json")
        let after = a.run("status")
        #expect(after.stdout.contains("Pending (recorded, not yet on the remote)"), after.comment)
        #expect(
            after.stdout.contains("delete  c.json  (a tombstone on the remote after the next push)"),
            after.comment)
    }

    @Test(
        "a deletion that lost to an edit is shown as such, with the command that deletes it after all")
    func deletionThatLostToAnEdit() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        a.ok("rm", "a.json")
        a.sync()
        b.write("a.json", b.read("a.json")!.replacing("original", with: "edited by B"))
        #expect(b.run("sync").exit == 3)
        #expect(a.run("sync").exit == 3)
        let status = a.run("status")
        #expect(
            status.stdout.contains("Deletions that lost to an edit (the edit was kept): 1"),
            status.comment)
        #expect(
            status.stdout.contains(
                "a.json  deleted here, edited elsewhere: kept version \(b.changesetId("a.json") ?? "?")"),
            status.comment)
        #expect(
            status.stdout.contains("`docsync resolve a.json --take local` deletes it after all"),
            status.comment)
        let listed = a.ok("conflicts")
        #expect(listed.stdout.contains("recorded by replica B ("), "replicas by name: \(listed)")
        // The command offered does what it says.
        #expect(a.run("resolve", "a.json", "--take", "local").exit == 0)
        #expect(!a.exists("a.json"))
    }

    @Test("log: a pulled deletion says deleted; a document's history names replicas")
    func logSaysDeletedAndNamesReplicas() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        a.ok("rm", "c.json")
        a.sync()
        b.sync()
        let log = b.ok("log")
        #expect(log.stdout.contains(#/apply    deleted c\.json  \S+/#), log.comment)
        #expect(log.stdout.contains(#/seen     deleted c\.json  \S+/#), log.comment)
        let history = b.ok("log", "c.json")
        let aId =
            (JSONHelp.parse(a.ok("status", "--json").stdout) as? [String: Any])?["replicaId"] as? String
            ?? "?"
        #expect(
            history.stdout.contains("  A  c.json"), "versions name replica A, not only \(aId): \(history)"
        )
        let json = JSONHelp.parse(b.ok("log", "--json", "c.json").stdout) as? [String: Any]
        let authors = (json?["remote"] as? [[String: Any]] ?? []).map {
            ($0["author"] as? String, $0["authorName"] as? String)
        }
        #expect(!authors.isEmpty && authors.allSatisfy { $0.0 == aId && $0.1 == "A" }, "\(authors)")
    }
}
