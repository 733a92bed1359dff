import Foundation
import Testing

@Suite("Deleting documents")
struct DeletionTests {
    /// Lines of `docsync log` that mention `path` and the action kind.
    static func logLines(_ r: Replica, kind: String, path: String, extra: [String] = []) -> [String] {
        let out = r.run(["log"] + extra)
        #expect(out.exit == 0, out.comment)
        return out.stdout.split(separator: "\n").map(String.init).filter {
            $0.split(separator: " ").contains(Substring(kind)) && $0.contains(path)
        }
    }

    @Test("docsync rm records the deletion: log shows it pending before push and done after")
    func docsyncRmThenLog() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["x.json": "{\"x\": 1}\n", "y.json": "{\"y\": 1}\n"])
        a.sync()
        let b = box.clone("B")
        let ref = a.refId("x.json")!

        let dry = a.run("rm", "--dry-run", "x.json")
        #expect(dry.exit == 0, dry.comment)
        #expect(a.exists("x.json"), "rm --dry-run must not delete")

        let rm = a.run("rm", "x.json")
        #expect(rm.exit == 0, rm.comment)
        #expect(!a.exists("x.json"), "docsync rm deletes the file")
        #expect(FileManager.default.fileExists(atPath: box.remote + "/x.json"), "nothing is sent before push")

        let before = Self.logLines(a, kind: "delete", path: "x.json")
        #expect(before.count == 1 && before[0].contains("[pending]"), "log before push: \(before)")
        let pendingOnly = Self.logLines(a, kind: "delete", path: "x.json", extra: ["--pending"])
        #expect(pendingOnly.count == 1, "log --pending must list the deletion")

        let json = a.run("log", "--json")
        let entries = (JSONHelp.parse(json.stdout) as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let deletes = entries.filter { $0["kind"] as? String == "delete" }
        #expect(deletes.count == 1, json.comment)
        #expect(deletes.first?["refId"] as? String == ref)
        #expect(deletes.first?["pending"] as? Bool == true)

        let push = a.run("push")
        #expect(push.exit == 0, push.comment)
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/x.json"))
        let after = Self.logLines(a, kind: "delete", path: "x.json")
        #expect(
            after.count == 1 && after[0].contains("[done]") && !after[0].contains("[pending]"),
            "log after push: \(after)")
        #expect(Self.logLines(a, kind: "delete", path: "x.json", extra: ["--pending"]).isEmpty)

        b.sync()
        #expect(!b.exists("x.json"))
        #expect(b.exists("y.json"))
    }

    @Test("docsync rm of a file that is not a tracked document fails and deletes nothing")
    func rmUntracked() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["x.json": "{\"x\": 1}\n"])
        a.sync()
        a.write("notes.txt", "not a document\n")
        let r = a.run("rm", "notes.txt")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("notes.txt"), r.comment)
        #expect(a.exists("notes.txt"))
        let missing = a.run("rm", "nope.json")
        #expect(missing.exit == 1, missing.comment)
    }

    @Test("a push deleting more than push.maxDeleteShare stops and asks for --force")
    func maxDeleteShare() {
        let box = Sandbox()
        var files: [String: String] = [:]
        for i in 1...6 { files["d\(i).json"] = "{\"i\": \(i)}\n" }
        let a = box.initReplica("A", files: files)
        a.sync()
        let b = box.clone("B")
        let remoteBefore = Files.tree(box.remote, skipMetadata: true)
        #expect(remoteBefore.count == 6)

        let rm = a.run("rm", "d1.json", "d2.json", "d3.json", "d4.json")
        #expect(rm.exit == 0, rm.comment)
        let refused = a.run("push")
        #expect(refused.exit == 1, refused.comment)
        #expect(refused.stderr.contains("--force"), refused.comment)
        #expect(Files.tree(box.remote, skipMetadata: true) == remoteBefore, "nothing may be deleted on the remote")
        #expect(Reliability.folderTombstones(box.remote).isEmpty)
        let sync = a.run("sync")
        #expect(sync.exit == 1, "sync must refuse the same way: \(sync)")
        #expect(Files.tree(box.remote, skipMetadata: true) == remoteBefore)

        let forced = a.run("push", "--force")
        #expect(forced.exit == 0, forced.comment)
        #expect(Set(Files.list(box.remote, skipMetadata: true)) == ["d5.json", "d6.json"])
        #expect(Reliability.folderTombstones(box.remote).count == 4)

        b.sync()
        #expect(Set(b.documents().keys) == ["d5.json", "d6.json"])
    }

    @Test("deleting up to push.maxDeleteShare needs no --force")
    func deleteWithinShare() {
        let box = Sandbox()
        var files: [String: String] = [:]
        for i in 1...6 { files["d\(i).json"] = "{\"i\": \(i)}\n" }
        let a = box.initReplica("A", files: files)
        a.sync()
        for i in 1...3 { a.remove("d\(i).json") }
        let push = a.run("push")
        #expect(push.exit == 0, push.comment)
        #expect(Set(Files.list(box.remote, skipMetadata: true)) == ["d4.json", "d5.json", "d6.json"])
    }
}
