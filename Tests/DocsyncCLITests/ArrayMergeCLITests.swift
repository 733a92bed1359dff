import Foundation
import Testing

/// Arrays changed on several replicas (docs/SYNC.md#arrays), through the built binary on
/// both remote kinds: lists of records by identity, sets, and an array slot that collides.
@Suite("Array merge through sync (three replicas)")
struct ArrayMergeCLITests {
    typealias Kind = MergeCLITests.Kind

    static let order =
        "{\n  \"order\": \"o-1\",\n  \"lines\": [\n    {\"id\": \"a\", \"qty\": 1}\n  ],\n  \"tags\": [\"x\"],\n  \"notes\": [\"one\", \"two\", \"three\"]\n}\n"

    func trio(_ box: Sandbox, _ kind: Kind) -> [Replica] {
        let rs = MergeCLITests.trio(box, kind)
        rs[0].write("rec.json", Self.order)
        rs[0].ok("sync")
        for r in rs.dropFirst() { r.ok("sync") }
        for r in rs { r.ok("config", "merge.sets", "tags") }
        return rs
    }

    func edit(_ r: Replica, _ change: (inout [String: Any]) -> Void) {
        var object = r.json("rec.json")!
        change(&object)
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        r.writeBytes("rec.json", Array(data))
        SaveClock.shared.stamp(r.path("rec.json"))
    }

    @Test(
        "three people add different items to one list, edit another item and change a set: every change kept, exit 0, no conflict",
        arguments: Kind.allCases)
    func everyoneAddsItems(_ kind: Kind) {
        let box = Sandbox("array-merge-\(kind)")
        let rs = trio(box, kind)
        edit(rs[0]) { o in
            o["lines"] = (o["lines"] as! [Any]) + [["id": "b", "qty": 2]]
            o["tags"] = [String]()  // removes x
        }
        edit(rs[1]) { o in
            var lines = o["lines"] as! [[String: Any]]
            lines[0]["qty"] = 5
            o["lines"] = lines + [["id": "c", "qty": 3]]
        }
        edit(rs[2]) { o in
            o["tags"] = ["x", "y"]
            o["notes"] = ["one", "two", "three", "four"]
        }
        for r in rs {
            let run = r.run("sync")
            #expect(run.exit == 0, "no field collided: \(run)")
        }
        MergeCLITests.converge(rs)
        let merged = rs[0].json("rec.json") ?? [:]
        let lines = (merged["lines"] as? [[String: Any]]) ?? []
        #expect(
            Set(lines.compactMap { $0["id"] as? String }) == ["a", "b", "c"], "both added items are there: \(merged)")
        #expect(lines.first { $0["id"] as? String == "a" }?["qty"] as? Int == 5, "the edit of item a is kept")
        #expect(merged["tags"] as? [String] == ["y"], "a set: x removed by one replica, y added by another")
        #expect(merged["notes"] as? [String] == ["one", "two", "three", "four"])
        for r in rs { #expect(r.conflictCopies().isEmpty, "no conflict copies in \(r.root)") }
    }

    @Test(
        "the same slot of a list changed on two replicas: exit 3, the later save's list, and resolve --take takes the other list whole",
        arguments: Kind.allCases)
    func sameSlotCollides(_ kind: Kind) throws {
        let box = Sandbox("array-slot-\(kind)")
        let rs = trio(box, kind)
        edit(rs[0]) { $0["notes"] = ["one", "TWO-a", "three"] }
        edit(rs[1]) { $0["notes"] = ["one", "TWO-b", "three"] }
        rs[0].ok("sync")
        let clash = rs[1].run("sync")
        #expect(clash.exit == 3, clash.comment)
        #expect(rs[1].json("rec.json")?["notes"] as? [String] == ["one", "TWO-b", "three"], "the later save's list")
        let listed = try #require(JSONHelp.parse(rs[1].ok("conflicts", "--json").stdout) as? [String: Any])
        let fields = ((listed["conflicts"] as? [[String: Any]])?.first?["fields"] as? [String]) ?? []
        #expect(fields == ["notes"], "the conflict is at the array: \(listed)")
        let resolved = rs[1].run("resolve", "rec.json", "--take", "remote")
        #expect(resolved.exit == 0, resolved.comment)
        #expect(rs[1].json("rec.json")?["notes"] as? [String] == ["one", "TWO-a", "three"])
        #expect((rs[1].json("rec.json")?["lines"] as? [Any])?.count == 1, "the rest of the record is untouched")
    }
}
