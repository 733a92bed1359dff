import Foundation
import Testing

/// Files changed the way people and their tools change them.
@Suite("Files edited the way people do")
struct EditStyleTests {
    /// A, a clone B, both in sync with `files`.
    static func pair(_ box: Sandbox, _ files: [String: String]) -> (Replica, Replica) {
        let a = box.initReplica("A", files: files)
        a.sync()
        let b = box.clone("B")
        return (a, b)
    }

    @Test("an editor's save (temp file + rename), sed -i and an in-place rewrite are all synced")
    func contentEdits() {
        let box = Sandbox()
        let (a, b) = Self.pair(
            box,
            [
                "editor.json": "{\n  \"text\": \"draft\"\n}\n",
                "sed.json": "{\n  \"colour\": \"red\",\n  \"size\": 3\n}\n",
                "inplace.json": "{\n  \"state\": \"aaaa\"\n}\n"
            ])
        let refIds = ["editor.json", "sed.json", "inplace.json"].map { a.refId($0) }

        editorSave(a.path("editor.json"), Array(a.read("editor.json")!.replacing("draft", with: "final text").utf8))
        let sed = CLI.runTool("/bin/sed", ["-i", "s/red/blue/", "sed.json"], in: a.root)
        #expect(sed.exit == 0, sed.comment)
        // Same size, same inode, right after the last sync (git's "racy" case).
        rewriteInPlace(
            a.path("inplace.json"),
            Array(a.read("inplace.json")!.replacing("\"state\": \"aaaa\"", with: "\"state\": \"bbbb\"").utf8))

        let pushed = a.sync()
        for name in ["editor.json", "sed.json", "inplace.json"] {
            #expect(pushed.stdout.contains(name), "\(name) should be pushed: \(pushed)")
        }
        b.sync()
        #expect(b.json("editor.json")?["text"] as? String == "final text")
        #expect(b.json("sed.json")?["colour"] as? String == "blue")
        #expect(b.json("inplace.json")?["state"] as? String == "bbbb")
        #expect(["editor.json", "sed.json", "inplace.json"].map { b.refId($0) } == refIds, "edits keep the refId")
        #expect(b.documents() == a.documents())
    }

    @Test("same-size rewrites within the same second are never missed")
    func racySameSizeEdits() {
        let box = Sandbox()
        let (a, b) = Self.pair(box, ["r.json": "{\"v\": \"0\"}\n"])
        for digit in 1...3 {
            let text = a.read("r.json")!
            let old = "\"v\": \"\(digit - 1)\"", new = "\"v\": \"\(digit)\""
            rewriteInPlace(a.path("r.json"), Array(text.replacing(old, with: new).utf8))
            a.sync()
            let onRemote = Files.bytes(box.remote + "/r.json").flatMap(JSONHelp.object)
            #expect(onRemote?["v"] as? String == "\(digit)", "rewrite #\(digit) did not reach the remote")
        }
        b.sync()
        #expect(b.json("r.json")?["v"] as? String == "3")
    }

    @Test(
        "cp: the copy gets a new refId, the original keeps its own (even when the copy sorts first or keeps the mtime), all reach the other replica"
    )
    func copy() {
        let box = Sandbox()
        let (a, b) = Self.pair(box, ["z.json": "{\n  \"title\": \"original\"\n}\n"])
        let originalRef = a.refId("z.json")
        let originalBytes = a.bytes("z.json")

        let cp = CLI.runTool("/bin/cp", ["z.json", "b.json"], in: a.root)
        #expect(cp.exit == 0, cp.comment)
        let cpp = CLI.runTool("/bin/cp", ["-p", "z.json", "a.json"], in: a.root)
        #expect(cpp.exit == 0, cpp.comment)
        try! FileManager.default.createDirectory(atPath: a.path("0"), withIntermediateDirectories: true)
        #expect(CLI.runTool("/bin/cp", ["z.json", "0/first.json"], in: a.root).exit == 0)
        a.sync()
        #expect(a.refId("z.json") == originalRef, "the original keeps its refId")
        #expect(a.bytes("z.json") == originalBytes, "the original is not rewritten")
        let copies = ["b.json", "a.json", "0/first.json"]
        let copyRefs = copies.map { a.refId($0) }
        #expect(
            !copyRefs.contains(nil) && !copyRefs.contains(originalRef), "every copy must get a new refId: \(copyRefs)")
        #expect(Set(copyRefs).count == copies.count, "and the copies must not share one")
        for path in copies { #expect(a.json(path)?["title"] as? String == "original") }

        b.sync()
        #expect(b.refId("z.json") == originalRef)
        #expect(copies.map { b.refId($0) } == copyRefs)
        #expect(b.documents() == a.documents())
    }

    @Test("restoring an older copy of a file from a backup is a new change, and it syncs")
    func restoreFromBackup() {
        let box = Sandbox()
        let (a, b) = Self.pair(box, ["doc.json": "{\"state\": \"first\"}\n"])
        let backup = a.bytes("doc.json")!
        a.write("doc.json", a.read("doc.json")!.replacing("first", with: "second"))
        a.sync()
        b.sync()
        #expect(b.json("doc.json")?["state"] as? String == "second")

        a.writeBytes("doc.json", backup)
        let restored = a.run("sync")
        #expect(restored.exit == 0, restored.comment)
        #expect(a.json("doc.json")?["state"] as? String == "first")
        #expect(
            a.changesetId("doc.json") != JSONHelp.object(backup)?["changesetId"] as? String,
            "restored content gets a new changesetId")
        b.sync()
        #expect(
            b.json("doc.json")?["state"] as? String == "first",
            "the restored version must win over the newer-looking one")
        #expect(b.documents() == a.documents())
    }

    @Test("mv a.json sub/c.json: same refId at the new path on the other replica, old path gone")
    func move() {
        let box = Sandbox()
        let (a, b) = Self.pair(box, ["a.json": "{\n  \"title\": \"moving\"\n}\n", "stay.json": "{\"x\": 1}\n"])
        let ref = a.refId("a.json")
        try! FileManager.default.createDirectory(atPath: a.path("sub"), withIntermediateDirectories: true)
        let mv = CLI.runTool("/bin/mv", ["a.json", "sub/c.json"], in: a.root)
        #expect(mv.exit == 0, mv.comment)
        a.sync()
        #expect(a.refId("sub/c.json") == ref)

        b.sync()
        #expect(!b.exists("a.json"), "the old path must be gone on the other replica")
        #expect(b.refId("sub/c.json") == ref, "the moved document keeps its identity")
        #expect(b.bytes("sub/c.json") == a.bytes("sub/c.json"))
        #expect(
            !FileManager.default.fileExists(atPath: box.remote + "/a.json"), "the old path must be gone on the remote")
        #expect(Reliability.folderTombstones(box.remote).isEmpty, "a move is not a deletion")
        #expect(b.documents() == a.documents())
    }

    @Test("rm a.json: deleted on the other replica, tombstone on the remote")
    func plainRemove() {
        let box = Sandbox()
        let (a, b) = Self.pair(box, ["gone.json": "{\"bye\": true}\n", "kept.json": "{\"hi\": true}\n"])
        let ref = a.refId("gone.json")!
        let changeset = a.changesetId("gone.json")!
        let rm = CLI.runTool("/bin/rm", ["gone.json"], in: a.root)
        #expect(rm.exit == 0, rm.comment)
        let pushed = a.sync()
        #expect(pushed.stdout.contains("gone.json"), pushed.comment)

        #expect(!FileManager.default.fileExists(atPath: box.remote + "/gone.json"))
        let tombstones = Reliability.folderTombstones(box.remote)
        #expect(tombstones.count == 1, "expected one tombstone, found \(tombstones.keys.sorted())")
        if let tombstone = tombstones.values.first {
            #expect(tombstone.refId == ref, "the tombstone names the refId: \(tombstone)")
            #expect(tombstone.changesetId == changeset, "the tombstone names the deleted changesetId: \(tombstone)")
        } else {
            Issue.record("the tombstone is not a JSON object")
        }

        b.sync()
        #expect(!b.exists("gone.json"), "the deletion must reach the other replica")
        #expect(b.exists("kept.json"))
        #expect(b.documents() == a.documents())
    }
}
