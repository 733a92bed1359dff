import Foundation
import Testing

/// Two and three replicas syncing through one directory remote.
@Suite("Replicas syncing through a directory remote")
struct ReplicaSyncTests {
    /// Files as people write them: tabs, odd spacing, keys in no particular order, no
    /// trailing newline, CRLF line ends, an empty object.
    static let originals: [String: String] = [
        "contacts/alice.json": "{\n\t\"zip\":   \"01234\",\n\t\"name\" : \"Alice\",\n\t\"tags\": [ \"a\",\"b\" ]\n}\n",
        "notes.json": "{\"zeta\":1,\"alpha\":{\"x\":[1, 2,3]}}",
        "tasks/todo.json": "{ \"done\": false,   \"title\": \"buy milk\" }\n",
        "crlf.json": "{\r\n    \"b\": 2,\r\n    \"a\": 1\r\n}\r\n",
        "empty.json": "{}\n"
    ]

    @Test("sync stamps refId and changesetId without reformatting; a clone gets identical files; edits flow both ways")
    func twoReplicasStampCloneAndEdit() {
        let box = Sandbox()
        let a = box.initReplica("A", files: Self.originals)
        let first = a.sync()
        #expect(first.stdout.contains("push"), first.comment)

        for (path, text) in Self.originals {
            let original = Array(text.utf8)
            guard let stamped = a.bytes(path), let object = a.json(path) else {
                Issue.record("\(path) is missing or no longer valid JSON after sync")
                continue
            }
            let refId = object["refId"] as? String ?? ""
            let changesetId = object["changesetId"] as? String ?? ""
            #expect(!refId.isEmpty, "\(path) got no refId")
            #expect(!changesetId.isEmpty, "\(path) got no changesetId")
            #expect(
                Stamping.onlyIdsInserted(original: original, stamped: stamped, refId: refId, changesetId: changesetId),
                "\(path): expected the original bytes plus only the two ids, got:\n\(String(decoding: stamped, as: UTF8.self))"
            )
            // The user's own fields are all still there with their values.
            let userKeys = Set(object.keys).subtracting(["refId", "changesetId"])
            let originalObject = JSONHelp.object(original) ?? [:]
            #expect(userKeys == Set(originalObject.keys), "\(path)")
        }
        // Every refId is distinct.
        let refIds = Self.originals.keys.compactMap { a.refId($0) }
        #expect(Set(refIds).count == Self.originals.count)

        // The remote holds the documents at their paths, readable.
        for path in Self.originals.keys {
            #expect(Files.bytes(box.remote + "/" + path) == a.bytes(path), "remote copy of \(path) differs")
        }

        let b = box.clone("B")
        #expect(b.documents() == a.documents(), "a fresh clone must have byte-identical documents")

        // B edits one document → sync → A sync → A has B's edit.
        let todo = b.read("tasks/todo.json")!
        b.write("tasks/todo.json", todo.replacing("buy milk", with: "buy oat milk"))
        b.sync()
        let edited = b.json("tasks/todo.json")
        #expect(edited?["title"] as? String == "buy oat milk")
        #expect(edited?["refId"] as? String == a.refId("tasks/todo.json"), "an edit keeps the refId")
        #expect(edited?["changesetId"] as? String != a.changesetId("tasks/todo.json"), "an edit gets a new changesetId")

        let pulled = a.sync()
        #expect(pulled.stdout.contains("tasks/todo.json"), pulled.comment)
        #expect(a.bytes("tasks/todo.json") == b.bytes("tasks/todo.json"))
        #expect(a.documents() == b.documents())
        a.ok("verify")
        b.ok("verify")
    }

    @Test("three replicas editing different documents, synced in various orders, converge")
    func threeReplicasConverge() {
        let box = Sandbox()
        var seed: [String: String] = [:]
        for i in 1...6 { seed["doc\(i).json"] = "{\n  \"n\": \(i),\n  \"owner\": \"nobody\"\n}\n" }
        let a = box.initReplica("A", files: seed)
        a.sync()
        let b = box.clone("B")
        let c = box.clone("C")
        let ids = (1...6).map { a.refId("doc\($0).json") }

        // Round 1: each replica changes something different.
        a.write("doc1.json", a.read("doc1.json")!.replacing("nobody", with: "A"))
        a.write("fromA.json", "{\"made\": \"A\"}\n")
        b.write("doc2.json", b.read("doc2.json")!.replacing("nobody", with: "B"))
        b.write("dir/fromB.json", "{\"made\": \"B\"}\n")
        b.remove("doc5.json")
        c.write("doc3.json", c.read("doc3.json")!.replacing("nobody", with: "C"))
        try! FileManager.default.createDirectory(atPath: c.path("moved"), withIntermediateDirectories: true)
        #expect(rename(c.path("doc4.json"), c.path("moved/doc4.json")) == 0)

        b.sync()
        c.sync()
        a.sync()
        // Round 2: more edits, other order.
        c.write("doc6.json", c.read("doc6.json")!.replacing("nobody", with: "C2"))
        a.write("doc2.json", a.read("doc2.json")!.replacing("\"n\": 2", with: "\"n\": 22"))
        a.sync()
        c.sync()
        b.sync()
        // Settle: one more pass each.
        a.sync()
        c.sync()

        let docsA = a.documents(), docsB = b.documents(), docsC = c.documents()
        #expect(docsA == docsB, "A and B differ: \(docsA.keys.sorted()) vs \(docsB.keys.sorted())")
        #expect(docsA == docsC, "A and C differ: \(docsA.keys.sorted()) vs \(docsC.keys.sorted())")
        #expect(Files.tree(box.remote, skipMetadata: true) == docsA, "the remote's documents differ from the replicas'")
        #expect(
            Set(docsA.keys) == [
                "doc1.json", "doc2.json", "doc3.json", "moved/doc4.json", "doc6.json", "fromA.json", "dir/fromB.json"
            ])

        #expect(a.json("doc1.json")?["owner"] as? String == "A")
        #expect(
            a.json("doc2.json")?["owner"] as? String == "B",
            "B's edit of doc2 must survive A's later edit of another field")
        #expect(a.json("doc2.json")?["n"] as? Int == 22)
        #expect(a.json("doc3.json")?["owner"] as? String == "C")
        #expect(a.refId("moved/doc4.json") == ids[3], "a moved document keeps its refId")
        #expect(a.json("doc6.json")?["owner"] as? String == "C2")
        #expect(a.json("dir/fromB.json")?["made"] as? String == "B")
        for r in [a, b, c] {
            #expect(r.conflictCopies().isEmpty, "edits of different documents must not conflict")
        }
    }
}
