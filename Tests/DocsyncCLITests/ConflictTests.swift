import Foundation
import Testing

@Suite("Conflicts and concurrent changes")
struct ConflictTests {
    static let doc = "{\n  \"title\": \"original\",\n  \"n\": 1\n}\n"

    static func pair(_ box: Sandbox) -> (Replica, Replica) {
        let a = box.initReplica("A", files: ["doc.json": doc, "other.json": "{\"o\": 1}\n"])
        a.sync()
        let b = box.clone("B")
        return (a, b)
    }

    @Test(
        "both sides edit differently: the second syncer exits 3, keeps the loser under .docsync/conflicts/, and both converge"
    )
    func differentEdits() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        let ref = a.refId("doc.json")
        // B saves after A (SaveClock: mtimes 2 ms apart), so B's edit wins the field.
        a.write("doc.json", a.read("doc.json")!.replacing("original", with: "from A"))
        SaveClock.shared.stamp(a.path("doc.json"))
        b.write("doc.json", b.read("doc.json")!.replacing("original", with: "from B"))
        SaveClock.shared.stamp(b.path("doc.json"))

        a.sync()
        let aVersion = a.bytes("doc.json")!
        let second = b.run("sync")
        #expect(second.exit == 3, second.comment)
        #expect(second.stdout.contains("conflict") && second.stdout.contains("doc.json"), second.comment)

        // Nothing is lost: one version in the tree, the other in the conflict store.
        let copies = b.conflictCopies()
        #expect(copies.count == 1, "expected one conflict copy, found \(copies.keys.sorted())")
        let finalB = b.json("doc.json")
        let winner = finalB?["changesetId"] as? String ?? ""
        #expect(finalB?["refId"] as? String == ref)
        if let loserBytes = copies.values.first, let loser = JSONHelp.object(loserBytes) {
            let titles: Set<String> = [finalB?["title"] as? String ?? "?", loser["title"] as? String ?? "?"]
            #expect(titles == ["from A", "from B"], "both versions must survive, found \(titles)")
            #expect(
                (loser["changesetId"] as? String ?? "") < winner,
                "the later changesetId wins (winner \(winner), loser \(loser["changesetId"] ?? "?"))")
            if loser["title"] as? String == "from A" {
                #expect(loserBytes == aVersion, "the conflict copy must be A's version byte for byte")
            }
        } else {
            Issue.record("no readable conflict copy under B/.docsync/conflicts/")
        }

        let status = b.run("status")
        #expect(status.exit == 0, status.comment)
        #expect(status.stdout.contains("Conflicts") && status.stdout.contains("doc.json"), status.comment)
        let statusJSON = JSONHelp.parse(b.run("status", "--json").stdout) as? [String: Any]
        let conflicts = statusJSON?["conflicts"] as? [[String: Any]] ?? []
        #expect(conflicts.count == 1)
        #expect(conflicts.first?["path"] as? String == "doc.json")
        #expect(conflicts.first?["refId"] as? String == ref)

        // A's version lost at B: A hears of it (exit 3) and lists the same record.
        let converge = a.run("sync")
        #expect(converge.exit == 3, converge.comment)
        let heard =
            (JSONHelp.parse(a.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(
            heard.count == 1 && heard.first?["refId"] as? String == ref && heard.first?["lostBy"] as? String != nil,
            "\(heard)")
        #expect(a.bytes("doc.json") == b.bytes("doc.json"))
        #expect(a.documents() == b.documents())
        #expect(Files.bytes(box.remote + "/doc.json") == b.bytes("doc.json"))
        // Syncing again is calm: no new conflict.
        #expect(b.run("sync").exit == 0)
        #expect(b.conflictCopies().count == 1)
    }

    @Test(
        "conflict lines name the other replica by its name, then its id, on both remote kinds",
        arguments: MergeCLITests.Kind.allCases)
    func conflictLinesNameReplicas(_ kind: MergeCLITests.Kind) {
        let box = Sandbox("names-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("doc.json", Self.doc)
        a.write("e.json", "{\"e\": 1}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "alpha", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "beta", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        let alpha = a.run("config", "core.replicaId").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let beta = b.run("config", "core.replicaId").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(alpha.count == 12 && beta.count == 12)

        // A edits doc and deletes e; B, later, edits both: B's edits win, B records the conflicts.
        a.write("doc.json", a.read("doc.json")!.replacing("original", with: "from A"))
        SaveClock.shared.stamp(a.path("doc.json"))
        a.remove("e.json")
        b.write("doc.json", b.read("doc.json")!.replacing("original", with: "from B"))
        SaveClock.shared.stamp(b.path("doc.json"))
        b.write("e.json", b.read("e.json")!.replacing("\"e\": 1", with: "\"e\": 2"))
        a.sync()
        #expect(b.run("sync").exit == 3)
        let statusB = b.run("status")
        #expect(statusB.stdout.contains("e.json  deleted by alpha (\(alpha)), edited here"), statusB.comment)

        // A hears of both from the remote: the lines name beta, not only its id.
        let heard = a.run("sync")
        #expect(heard.stdout.contains("at replica beta (\(beta))"), heard.comment)
        #expect(!heard.stdout.contains("at replica \(beta)"), heard.comment)
        let conflicts = a.run("conflicts")
        #expect(conflicts.stdout.contains("recorded by replica beta (\(beta))"), conflicts.comment)
        let log = a.run("log")
        for line in (log.stdout + a.run("status").stdout).split(separator: "\n") where line.contains(beta) {
            #expect(line.contains("beta (\(beta))") || line.contains("-\(beta)"), "a bare replica id: \(line)")
        }
    }

    @Test("identical edits on both sides are not a conflict")
    func identicalEdits() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        a.write("doc.json", a.read("doc.json")!.replacing("original", with: "same change"))
        b.write("doc.json", b.read("doc.json")!.replacing("original", with: "same change"))
        a.sync()
        let second = b.run("sync")
        #expect(second.exit == 0, second.comment)
        #expect(!second.stdout.contains("conflict"), second.comment)
        #expect(b.conflictCopies().isEmpty)
        a.sync()
        #expect(a.conflictCopies().isEmpty)
        #expect(a.json("doc.json")?["title"] as? String == "same change")
        #expect(a.documents() == b.documents())
        let status = JSONHelp.parse(b.run("status", "--json").stdout) as? [String: Any]
        #expect((status?["conflicts"] as? [Any])?.isEmpty == true)
    }

    @Test("deleted here, edited there (delete synced first): the edit wins on both replicas")
    func deleteThenEdit() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        let ref = a.refId("doc.json")
        a.ok("rm", "doc.json")
        a.sync()
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/doc.json"))

        b.write("doc.json", b.read("doc.json")!.replacing("original", with: "edited by B"))
        let edit = b.run("sync")
        #expect(edit.exit == 3, "the deletion that lost is recorded: \(edit)")
        #expect(b.json("doc.json")?["title"] as? String == "edited by B", "B's edit must not be lost: \(edit)")
        #expect((edit.stdout + edit.stderr).contains("doc.json"), "the resurrection should be reported: \(edit)")
        let remote = Files.bytes(box.remote + "/doc.json").flatMap(JSONHelp.object)
        #expect(remote?["title"] as? String == "edited by B", "the edit must reach the remote")

        // A's deletion lost to B's edit: A hears of it and lists the record.
        let back = a.run("sync")
        #expect(back.exit == 3, back.comment)
        let heard =
            (JSONHelp.parse(a.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(heard.count == 1 && heard.first?["deleted"] as? Bool == true, "\(heard)")
        #expect(a.json("doc.json")?["title"] as? String == "edited by B")
        #expect(a.refId("doc.json") == ref)
        #expect(a.documents() == b.documents())
        #expect(Reliability.folderTombstones(box.remote).isEmpty, "the resurrected doc must not keep a tombstone")
    }

    @Test("edited here, deleted there (edit synced first): the edit wins on both replicas")
    func editThenDelete() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        a.write("doc.json", a.read("doc.json")!.replacing("original", with: "edited by A"))
        a.sync()
        b.remove("doc.json")
        let del = b.run("sync")
        #expect(del.exit == 3, "the deletion that lost is recorded: \(del)")
        #expect(b.json("doc.json")?["title"] as? String == "edited by A", "A's edit must come back to B: \(del)")
        #expect((del.stdout + del.stderr).contains("doc.json"), "the resurrection should be reported: \(del)")
        let remote = Files.bytes(box.remote + "/doc.json").flatMap(JSONHelp.object)
        #expect(remote?["title"] as? String == "edited by A", "the remote must keep the edit")
        #expect(Reliability.folderTombstones(box.remote).isEmpty)

        let again = a.run("sync")
        #expect(again.exit == 0, again.comment)
        #expect(a.json("doc.json")?["title"] as? String == "edited by A")
        #expect(a.documents() == b.documents())
    }

    @Test("renamed on one side, edited on the other: both apply")
    func renameAndEdit() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        let ref = a.refId("doc.json")
        try! FileManager.default.createDirectory(atPath: a.path("sub"), withIntermediateDirectories: true)
        #expect(rename(a.path("doc.json"), a.path("sub/renamed.json")) == 0)
        b.write("doc.json", b.read("doc.json")!.replacing("original", with: "edited by B"))
        a.sync()
        let second = b.run("sync")
        #expect(second.exit == 0, second.comment)
        #expect(!b.exists("doc.json"), "the rename must reach B")
        #expect(b.json("sub/renamed.json")?["title"] as? String == "edited by B", "B's edit must survive the rename")
        #expect(b.refId("sub/renamed.json") == ref)
        a.sync()
        #expect(a.json("sub/renamed.json")?["title"] as? String == "edited by B")
        #expect(a.documents() == b.documents())
        #expect(a.conflictCopies().isEmpty && b.conflictCopies().isEmpty)
    }

    @Test("both sides create different documents at the same path: both are kept")
    func samePathCreates() {
        let box = Sandbox()
        let (a, b) = Self.pair(box)
        a.write("new.json", "{\"from\": \"A\"}\n")
        b.write("new.json", "{\"from\": \"B\"}\n")
        a.sync()
        let second = b.run("sync")
        #expect(second.exit == 0 || second.exit == 3, second.comment)
        a.sync()
        #expect(a.documents() == b.documents())
        let docs = b.documents().keys.compactMap { path -> String? in
            (b.json(path)?["from"] as? String).map { _ in path }
        }
        let origins = Set(docs.compactMap { b.json($0)?["from"] as? String })
        #expect(docs.count == 2 && origins == ["A", "B"], "both new documents must exist, found \(docs)")
        #expect(Set(docs.compactMap { b.refId($0) }).count == 2, "and keep distinct identities")
        #expect(Files.tree(box.remote, skipMetadata: true) == a.documents())
    }

    @Test(
        "resolve --take of a field inside an array of records takes that element's field only: a later edit of another element stays",
        arguments: [false, true])
    func takeInsideAnIdentityArray(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = EditsDuringRunTests.pair(
            box, git: git, ["d.json": "{\"i\": [{\"id\": \"p\", \"v\": \"1\"}, {\"id\": \"q\", \"v\": \"1\"}]}\n"])
        a.write("d.json", a.read("d.json")!.replacing("\"q\", \"v\": \"1\"", with: "\"q\", \"v\": \"A\""))
        usleep(20_000)
        b.write("d.json", b.read("d.json")!.replacing("\"q\", \"v\": \"1\"", with: "\"q\", \"v\": \"B\""))
        #expect(a.run("sync").exit == 0)
        #expect(b.run("sync").exit == 3, "B's later save wins q; A's is stored")
        // Since the conflict, B edits another element.
        b.write("d.json", b.read("d.json")!.replacing("\"p\", \"v\": \"1\"", with: "\"p\", \"v\": \"P2\""))
        #expect(b.run("sync").exit == 0)
        let resolved = b.run("resolve", "d.json", "--take", "remote")
        #expect(resolved.exit == 0, resolved.comment)
        let elements = (b.json("d.json")?["i"] as? [[String: Any]] ?? []).map { "\($0["id"]!)=\($0["v"]!)" }
        #expect(elements == ["p=P2", "q=A"], "\(git ? "git" : "folder"): \(b.read("d.json") ?? "")")
        #expect(b.run("sync").exit == 0)
        #expect(a.run("sync").exit == 0)
        let there = (a.json("d.json")?["i"] as? [[String: Any]] ?? []).map { "\($0["id"]!)=\($0["v"]!)" }
        #expect(there == ["p=P2", "q=A"], "A gets the resolution and the later edit")
    }
}
