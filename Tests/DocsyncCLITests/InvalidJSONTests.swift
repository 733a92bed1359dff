import Foundation
import Testing

@Suite("Files that are not valid documents")
struct InvalidJSONTests {
    @Test("a syntax error is reported as path:line:col:, the file is untouched, everything else syncs, exit 1")
    func syntaxError() {
        let box = Sandbox()
        // Line 4, column 10 is the ',' where a value should be.
        let bad = "{\n  \"a\": 1,\n  \"list\": [1, 2],\n  \"b\":   ,\n  \"c\": 3\n}\n"
        let a = box.initReplica(
            "A", files: ["good.json": "{\"ok\": true}\n", "sub/bad.json": bad, "array.json": "[1, 2, 3]\n"])
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("sub/bad.json:4:10:"), "expected sub/bad.json:4:10: in stderr: \(r)")
        #expect(r.stderr.contains("array.json:1:1:"), "a non-object top level is reported too: \(r)")
        #expect(a.read("sub/bad.json") == bad, "the invalid file must be left byte for byte as it was")
        #expect(a.read("array.json") == "[1, 2, 3]\n")
        #expect(a.refId("good.json") != nil, "the valid document is still stamped")
        #expect(Files.bytes(box.remote + "/good.json") == a.bytes("good.json"), "the valid document is still pushed")
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/sub/bad.json"))

        // status and verify report it too, without changing anything.
        let status = a.run("status")
        #expect(status.exit == 1, status.comment)
        // Once, in the report on stdout (not again on stderr).
        #expect(status.stdout.contains("sub/bad.json:4:10:"), status.comment)
        #expect(!status.stderr.contains("sub/bad.json:4:10:"), status.comment)
        let verify = a.run("verify")
        #expect(verify.exit == 1, verify.comment)
        #expect(verify.stdout.contains("sub/bad.json") || verify.stderr.contains("sub/bad.json"), verify.comment)
        #expect(a.read("sub/bad.json") == bad)

        let b = box.clone("B")
        #expect(Set(b.documents().keys) == ["good.json"])

        // Fixed (and the array file removed): now it syncs like any document.
        a.remove("array.json")
        a.write("sub/bad.json", bad.replacing("\"b\":   ,", with: "\"b\":   2,"))
        a.sync()
        b.sync()
        #expect(b.json("sub/bad.json")?["b"] as? Int == 2)
        #expect(b.documents() == a.documents())
    }

    @Test(
        "a file whose first non-space byte is '[' is a top-level array, whatever follows: in sync, check, diff and blame"
    )
    func openBracketIsAnArray() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["doc.json": "{\"v\": 1}\n", "other.json": "{\"o\": 1}\n"])
        a.sync()
        a.write("bracket.json", "[")
        a.write("bracket-junk.json", "  \n[{\"a\": ")
        let sync = a.run("sync")
        #expect(sync.exit == 1, sync.comment)
        #expect(
            sync.stderr.contains("bracket.json:1:1: error: top-level value is an array, not an object"), sync.comment)
        #expect(
            sync.stderr.contains("bracket-junk.json:2:1: error: top-level value is an array, not an object"),
            sync.comment)
        #expect(a.read("bracket.json") == "[")
        let check = a.run("check", "bracket.json")
        #expect(
            check.exit == 1 && check.stderr.contains("bracket.json:1:1: error: top-level value is an array"),
            check.comment)

        // A tracked document that now holds just '[' (or a whole array).
        a.write("doc.json", "[")
        let diff = a.run("diff", "doc.json")
        #expect(
            diff.stdout.contains("not a valid document: 1:1: top-level value is an array, not an object"), diff.comment)
        #expect(!diff.stdout.contains("end of file"), diff.comment)
        a.write("doc.json", "[1, 2]\n")
        let whole = a.run("diff", "doc.json")
        #expect(
            whole.stdout.contains("not a valid document: 1:1: top-level value is an array, not an object"),
            whole.comment)
        a.write("doc.json", "[")
        let blame = a.run("blame", "doc.json")
        #expect(
            blame.exit == 1 && blame.stderr.contains("doc.json:1:1: top-level value is an array, not an object"),
            blame.comment)
    }

    @Test("a tracked document that becomes invalid is not deleted on the remote; its fix syncs")
    func trackedDocumentBreaks() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["doc.json": "{\n  \"v\": 1\n}\n", "other.json": "{\"o\": 1}\n"])
        a.sync()
        let b = box.clone("B")
        let ref = a.refId("doc.json")!
        let remoteBefore = Files.bytes(box.remote + "/doc.json")

        // A half-saved file: cut in the middle.
        let good = a.read("doc.json")!
        let broken = String(good.prefix(good.count - 6))
        a.write("doc.json", broken)
        a.write("other.json", a.read("other.json")!.replacing("\"o\": 1", with: "\"o\": 2"))
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("doc.json:"), r.comment)
        #expect(a.read("doc.json") == broken, "the broken file is left as it is")
        #expect(
            Files.bytes(box.remote + "/doc.json") == remoteBefore,
            "an unreadable local file must not delete or change the remote copy")
        #expect(Reliability.folderTombstones(box.remote).isEmpty)
        let remoteOther = Files.bytes(box.remote + "/other.json").flatMap(JSONHelp.object)
        #expect(remoteOther?["o"] as? Int == 2, "other documents still sync")

        b.sync()
        #expect(b.refId("doc.json") == ref, "B must keep the document")

        // The user fixes it with an edit: the edit syncs.
        a.write("doc.json", good.replacing("\"v\": 1", with: "\"v\": 5"))
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        b.sync()
        #expect(b.json("doc.json")?["v"] as? Int == 5)
        #expect(b.refId("doc.json") == ref)
        #expect(b.documents() == a.documents())
    }

    @Test(
        "a document broken locally is never overwritten by a pull; the remote version waits, and meets the fix three-way (no edit lost)"
    )
    func brokenDocumentIsNotOverwrittenByPull() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["doc.json": "{\n  \"v\": 1,\n  \"w\": 1\n}\n"])
        a.sync()
        let b = box.clone("B")
        b.write("doc.json", b.read("doc.json")!.replacing("\"w\": 1", with: "\"w\": 2"))
        b.sync()

        let good = a.read("doc.json")!
        let broken = good.replacing("\"v\": 1,", with: "\"v\": 1,,")
        a.write("doc.json", broken)
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("doc.json:"), r.comment)
        #expect(
            r.stdout.contains("waiting") && r.stdout.contains("doc.json"), "the waiting remote version is said: \(r)")
        #expect(a.read("doc.json") == broken, "a pull must not overwrite a file the user is in the middle of fixing")
        #expect(
            JSONHelp.object(Files.bytes(box.remote + "/doc.json") ?? [])?["w"] as? Int == 2,
            "the broken file is never pushed")
        #expect(a.conflictCopies().isEmpty, "a version waiting for a fix is not a conflict")

        // The user's fix started from the old version: it meets B's edit three-way.
        a.write("doc.json", good.replacing("\"v\": 1", with: "\"v\": 5"))
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        #expect(a.json("doc.json")?["v"] as? Int == 5, "the fix is kept")
        #expect(a.json("doc.json")?["w"] as? Int == 2, "B's edit is not undone by the fix")
        b.sync()
        #expect(b.json("doc.json")?["v"] as? Int == 5 && b.json("doc.json")?["w"] as? Int == 2)
        #expect(a.documents() == b.documents())
        #expect(a.run("sync").exit == 0 && a.conflictCopies().isEmpty)
    }
}
