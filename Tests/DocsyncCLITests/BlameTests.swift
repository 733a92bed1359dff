import Foundation
import Testing

/// `docsync blame`: which version, replica and time last set each field, through the built
/// binary on both remote kinds.
@Suite("docsync blame")
struct BlameTests {
    @Test(
        "each field names the version that set it, across replicas; an edit not yet recorded says so",
        arguments: MergeCLITests.Kind.allCases)
    func fieldsAcrossReplicas(_ kind: MergeCLITests.Kind) throws {
        let box = Sandbox("blame-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("p.json", "{\n  \"name\": \"Ann\",\n  \"city\": \"Oslo\",\n  \"tags\": [\"x\"]\n}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "laptop", "A"], in: box.root).exit == 0)
        a.ok("sync")
        let created = a.changesetId("p.json")!
        #expect(CLI.run(["clone", "--name", "desk", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        b.write("p.json", b.read("p.json")!.replacing("\"Oslo\"", with: "\"Bergen\""))
        b.ok("sync")
        let moved = b.changesetId("p.json")!
        a.ok("sync")
        a.write("p.json", a.read("p.json")!.replacing("\"Ann\"", with: "\"Anna\""))

        let text = a.ok("blame", "p.json").stdout
        let lines = Dictionary(
            uniqueKeysWithValues: text.split(separator: "\n").map { line in
                (String(line.split(separator: " ").first!), String(line))
            })
        #expect(
            lines["/name"]?.contains("(not recorded)") == true && lines["/name"]?.contains("\"Anna\"") == true,
            Comment(rawValue: text))
        #expect(
            lines["/city"]?.contains(moved) == true && lines["/city"]?.contains("desk") == true,
            "set by desk's version: \(text)")
        #expect(
            lines["/tags/0"]?.contains(created) == true && lines["/tags/0"]?.contains("laptop") == true,
            Comment(rawValue: text))

        a.ok("sync")
        let json = try #require(JSONHelp.parse(a.ok("blame", "--json", "p.json", "/name").stdout) as? [String: Any])
        let fields = json["fields"] as? [[String: Any]] ?? []
        #expect(fields.count == 1 && fields.first?["pointer"] as? String == "/name", "\(json)")
        #expect(
            fields.first?["changesetId"] as? String == a.changesetId("p.json"),
            "after the sync, the recorded version: \(json)")
        #expect((json["versions"] as? Int ?? 0) >= 3, "\(json)")
    }
}
