// The same folder on two machines meeting one remote for the first time: a file without
// ids of its own at a path where the remote has a document joins that document. Identical
// content is simply the same document; different content is a two-way merge whose
// differing fields are a recorded conflict. Never a `~` copy of every file.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("First contact: a folder that exists on both machines", .serialized)
struct FirstContactTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// A new remote of `kind` in the sandbox (a folder `init` creates, or a bare repository).
    static func remote(_ box: Sandbox, _ kind: Kind) -> String {
        Reliability.remote(box, git: kind == .git)
    }

    static func initTree(_ box: Sandbox, _ name: String, _ url: String, files: [String: String]) -> Replica {
        let r = box.replica(name)
        for (path, text) in files { r.write(path, text) }
        let made = CLI.run(["init", "--remote", url, "--name", name, name], in: box.root)
        #expect(made.exit == 0, made.comment)
        return r
    }

    static let ada = "{\n  \"name\": \"Ada Lovelace\",\n  \"born\": 1815\n}\n"
    static let notes = "{\n  \"text\": \"groceries\"\n}\n"

    @Test(
        "the same files, without ids, on both machines: one document each, nothing pushed twice, no copies",
        arguments: Kind.allCases)
    func identicalFolders(_ kind: Kind) {
        let box = Sandbox("identical-\(kind)")
        let url = Self.remote(box, kind)
        let files = ["ada.json": Self.ada, "notes/list.json": Self.notes]
        let laptop = Self.initTree(box, "laptop", url, files: files)
        laptop.sync()
        let desk = Self.initTree(box, "desk", url, files: files)
        let joined = desk.run("sync", "--json")
        #expect(joined.exit == 0, joined.comment)
        #expect(Reliability.count(joined, "pushed") == 0, "nothing to send: the documents are the remote's: \(joined)")
        laptop.sync()
        for r in [laptop, desk] {
            #expect(Set(r.documents().keys) == Set(files.keys), "\(r.root): \(r.documents().keys.sorted())")
            #expect(r.conflictCopies().isEmpty)
        }
        #expect(desk.refId("ada.json") == laptop.refId("ada.json"), "the same document")
        #expect(desk.documents() == laptop.documents(), "the same bytes")
        #expect(desk.run("conflicts").stdout.contains("No open conflicts"))
        let status = desk.run("status", "--json")
        #expect(
            ((JSONHelp.parse(status.stdout) as? [String: Any])?["pending"] as? [Any])?.isEmpty == true, status.comment)
    }

    @Test(
        "a declared counter in the same file on both machines is one count, not two additions (found by the model check's counters)",
        arguments: Kind.allCases)
    func countersAreNotDoubled(_ kind: Kind) {
        let box = Sandbox("counters-\(kind)")
        let url = Self.remote(box, kind)
        let plays = "{\n  \"title\": \"Song\",\n  \"plays\": 3\n}\n"
        let laptop = Self.initTree(box, "laptop", url, files: ["song.json": plays])
        #expect(laptop.run("config", "merge.counters", "plays").exit == 0)
        laptop.sync()
        // Another title saved here later: the two files are merged, the count with them.
        let desk = Self.initTree(
            box, "desk", url, files: ["song.json": plays.replacingOccurrences(of: "Song", with: "Song (live)")])
        #expect(desk.run("config", "merge.counters", "plays").exit == 0)
        let joined = desk.run("sync")
        #expect(joined.exit == 3, "the titles differ: a recorded conflict: \(joined.comment)")
        #expect(desk.json("song.json")?["title"] as? String == "Song (live)", "the later save's title")
        #expect(desk.json("song.json")?["plays"] as? Int == 3, "not 6: \(desk.read("song.json") ?? "")")
        let told = laptop.run("sync")
        #expect(told.exit == 3, "its title lost: it is told: \(told.comment)")
        #expect(laptop.json("song.json")?["plays"] as? Int == 3)
        // Counting goes on as usual afterwards.
        laptop.write(
            "song.json", laptop.read("song.json")!.replacingOccurrences(of: "\"plays\": 3", with: "\"plays\": 4"))
        desk.write("song.json", desk.read("song.json")!.replacingOccurrences(of: "\"plays\": 3", with: "\"plays\": 5"))
        laptop.sync()
        desk.sync()
        #expect(desk.json("song.json")?["plays"] as? Int == 6, "3 + 1 + 2")
    }

    @Test(
        "the same file with different content on both: one document, fields merged, the differing field a conflict (exit 3), both versions kept",
        arguments: Kind.allCases)
    func differentContent(_ kind: Kind) throws {
        let box = Sandbox("different-\(kind)")
        let url = Self.remote(box, kind)
        let laptop = Self.initTree(box, "laptop", url, files: ["ada.json": Self.ada])
        setSaveTime(laptop.path("ada.json"), 1_700_000_000)
        laptop.sync()
        let desk = Self.initTree(
            box, "desk", url,
            files: ["ada.json": "{\n  \"name\": \"Ada King\",\n  \"born\": 1815,\n  \"title\": \"Countess\"\n}\n"])
        // Saved later than the laptop's: its value of the colliding field wins.
        setSaveTime(desk.path("ada.json"), 1_700_000_100)
        let joined = desk.run("sync")
        #expect(joined.exit == 3, "a recorded conflict: \(joined)")
        #expect(Set(desk.documents().keys) == ["ada.json"], "\(desk.documents().keys.sorted())")
        let merged = try #require(desk.json("ada.json"))
        #expect(merged["name"] as? String == "Ada King", "the later save wins the collision")
        #expect(merged["title"] as? String == "Countess", "a field only one side has is taken")
        #expect(merged["born"] as? Int == 1815)
        #expect(merged["refId"] as? String == laptop.refId("ada.json"), "it joined the remote's document")
        let copies = desk.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(copies.contains { $0["name"] as? String == "Ada Lovelace" }, "the losing version is kept: \(copies)")
        let listed =
            (JSONHelp.parse(desk.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(listed.count == 1, "\(listed)")
        laptop.run("sync")
        #expect(laptop.documents() == desk.documents())
        #expect(
            laptop.conflictCopies().values.compactMap(JSONHelp.object).contains {
                $0["name"] as? String == "Ada Lovelace"
            },
            "the laptop's losing version is in its conflict store too")
    }

    @Test(
        "a file whose fields all lose, laid out in another order and missing one: it is the remote's version, nothing pushed",
        arguments: Kind.allCases)
    func losingFileInAnotherOrder(_ kind: Kind) throws {
        let box = Sandbox("order-\(kind)")
        let url = Self.remote(box, kind)
        let desk = box.replica("desk")
        desk.write("ada.json", "{\n  \"born\": 1816,\n  \"name\": \"Ada\"\n}\n")
        setSaveTime(desk.path("ada.json"), 1_700_000_000)
        let laptop = Self.initTree(
            box, "laptop", url,
            files: ["ada.json": "{\n  \"name\": \"Ada\",\n  \"born\": 1815,\n  \"title\": \"Countess\"\n}\n"])
        setSaveTime(laptop.path("ada.json"), 1_700_000_100)
        laptop.sync()
        #expect(CLI.run(["init", "--remote", url, "--name", "desk", "desk"], in: box.root).exit == 0)
        let joined = desk.run("sync", "--json")
        #expect(joined.exit == 3, "born collided and desk's value lost: \(joined)")
        #expect(
            Reliability.count(joined, "pushed") == 0, "the result is the remote's version: nothing to push: \(joined)")
        #expect(desk.read("ada.json") == laptop.read("ada.json"), "the remote's bytes, in its order")
        let copies = desk.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(copies.contains { $0["born"] as? Int == 1816 }, "desk's version is kept: \(copies)")
    }

    @Test(
        "clone into a folder that is not empty: its files join the remote's documents, the others are recorded and sent by the next sync",
        arguments: Kind.allCases)
    func cloneIntoNonEmptyFolder(_ kind: Kind) {
        let box = Sandbox("clone-\(kind)")
        let url = Self.remote(box, kind)
        let laptop = Self.initTree(box, "laptop", url, files: ["ada.json": Self.ada, "notes/list.json": Self.notes])
        laptop.sync()
        let desk = box.replica("desk")
        desk.write("ada.json", Self.ada)
        desk.write("mine.json", "{\"only\": \"desk\"}\n")
        let cloned = CLI.run(["clone", "--name", "desk", url, "desk"], in: box.root)
        #expect(cloned.exit == 0, cloned.comment)
        #expect(
            Set(desk.documents().keys) == ["ada.json", "notes/list.json", "mine.json"],
            "\(desk.documents().keys.sorted())")
        #expect(desk.refId("ada.json") == laptop.refId("ada.json"))
        #expect(desk.read("ada.json") == laptop.read("ada.json"))
        desk.sync()
        laptop.sync()
        #expect(laptop.documents() == desk.documents())
        for r in [laptop, desk] { #expect(r.conflictCopies().isEmpty) }
    }

    @Test(
        "first contact while the remote is away: the files are recorded (exit 75); once it is back they join the remote's documents"
    )
    func firstContactOffline() {
        let box = Sandbox()
        let url = Self.remote(box, .dir)
        let laptop = Self.initTree(box, "laptop", url, files: ["ada.json": Self.ada])
        laptop.sync()
        let desk = Self.initTree(box, "desk", url, files: ["ada.json": Self.ada])
        #expect(rename(url, url + ".away") == 0)
        let away = desk.run("sync")
        #expect(away.exit == 75, away.comment)
        #expect(desk.refId("ada.json") != nil, "recorded while offline, as any edit")
        #expect(desk.refId("ada.json") != laptop.refId("ada.json"))
        #expect(rename(url + ".away", url) == 0)
        let back = desk.run("sync", "--json")
        #expect(back.exit == 0, back.comment)
        #expect(Reliability.count(back, "pushed") == 0, "the same document: nothing to send: \(back)")
        #expect(desk.refId("ada.json") == laptop.refId("ada.json"), "it took the remote document's identity")
        laptop.sync()
        #expect(Set(desk.documents().keys) == ["ada.json"], "\(desk.documents().keys.sorted())")
        #expect(desk.documents() == laptop.documents())
    }

    @Test("a tree with files cannot clone over a docsync tree: refused, nothing changed")
    func cloneIntoATreeIsRefused() {
        let box = Sandbox()
        let url = Self.remote(box, .dir)
        let laptop = Self.initTree(box, "laptop", url, files: ["ada.json": Self.ada])
        laptop.sync()
        let before = laptop.documents()
        let r = CLI.run(["clone", url, "laptop"], in: box.root)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("already a docsync tree"), r.comment)
        #expect(laptop.documents() == before)
    }
}
