// `sync.mode send-only` and `docsync override` (issue 24): a replica that sends its own
// changes and never applies the remote's, through the built binary, against a folder
// remote and a git repository. What is checked is the send-only tree's files byte for
// byte, and full and receive-only replicas that sync beside it (what reached the remote).

import Foundation
import Testing

@Suite("Replica modes: sync.mode send-only and override")
struct SendOnlyTests {
    typealias Kind = SyncModeTests.Kind

    static func doc(_ fields: [String: Int]) -> String { SyncModeTests.doc(fields) }
    static func set(_ r: Replica, _ file: String, _ field: String, _ value: Int) {
        SyncModeTests.set(r, file, field, value)
    }
    static func number(_ r: Replica, _ file: String, _ field: String) -> Int? { r.json(file)?[field] as? Int }

    static func status(_ r: Replica) -> [String: Any] {
        JSONHelp.parse(r.run("status", "--json").stdout) as? [String: Any] ?? [:]
    }

    static func paths(_ list: Any?) -> Set<String> {
        Set((list as? [[String: Any]] ?? []).compactMap { $0["path"] as? String })
    }

    /// A full replica "full" that made a new remote of `kind` holding `names` (each
    /// `{"m": 1, "n": 1}`), and a clone of it, "exporter", made send-only.
    static func fullAndExporter(_ box: Sandbox, _ kind: Kind, names: [String]) -> (
        url: String, full: Replica, exporter: Replica
    ) {
        let url = Reliability.remote(box, git: kind == .git)
        let full = box.replica("full")
        for name in names { full.write("\(name).json", doc(["m": 1, "n": 1])) }
        #expect(CLI.run(["init", "--remote", url, "--name", "full", "full"], in: box.root).exit == 0)
        full.sync()
        #expect(CLI.run(["clone", "--name", "exporter", url, "exporter"], in: box.root).exit == 0)
        let exporter = box.replica("exporter")
        exporter.ok("config", "sync.mode", "send-only")
        return (url, full, exporter)
    }

    /// a.json changed on both sides (n = 2 there, pushed; m = 3 here), and the exporter's
    /// sync that holds the full replica's change (`also` runs on the full side first).
    static func changeOnBothSides(
        _ full: Replica, _ exporter: Replica, also: () -> Void = {},
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        set(full, "a.json", "n", 2)
        also()
        full.sync(sourceLocation: sourceLocation)
        set(exporter, "a.json", "m", 3)
        #expect(exporter.run("sync").exit == 0, sourceLocation: sourceLocation)
    }

    @Test(
        "send-only: local changes are sent; the remote's are never applied, listed as not applied, and a document changed on both sides waits; override sends the local version over the remote's (kept in the conflict store, its maker told); mode both merges the rest",
        arguments: Kind.allCases)
    func sendOnlyNeverApplies(_ kind: Kind) throws {
        let box = Sandbox("send-only-\(kind)")
        let (_, full, exporter) = Self.fullAndExporter(box, kind, names: ["a", "b", "c", "d", "e"])
        // Only here: an edit and a new document. On both sides: d. Only there: the rest.
        Self.set(exporter, "a.json", "n", 2)
        exporter.write("mine.json", Self.doc(["n": 7]))
        Self.set(exporter, "d.json", "n", 4)
        Self.set(full, "b.json", "n", 3)
        full.remove("c.json")
        full.write("theirs.json", Self.doc(["n": 8]))
        Self.set(full, "d.json", "m", 6)
        Self.set(full, "e.json", "n", 5)
        full.sync()

        let untouched = ["b.json", "c.json", "e.json"].map { exporter.read($0) }
        let sync = exporter.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(sync.stdout.contains("5 not applied (send-only)"), sync.comment)
        #expect(["b.json", "c.json", "e.json"].map { exporter.read($0) } == untouched, "a remote change was applied")
        #expect(!exporter.exists("theirs.json"))
        #expect(Self.number(exporter, "d.json", "n") == 4 && Self.number(exporter, "d.json", "m") == 1)

        let status = exporter.run("status")
        #expect(status.stdout.contains("Mode:      send-only"), "\(status.stdout)")
        #expect(status.stdout.contains("Remote changes not applied (send-only): 5"), "\(status.stdout)")
        #expect(status.stdout.contains("d.json  (local changes wait"), "\(status.stdout)")
        let json = Self.status(exporter)
        #expect(json["syncMode"] as? String == "send-only")
        #expect(
            Self.paths(json["notApplied"]) == ["b.json", "c.json", "d.json", "e.json", "theirs.json"], "\(json)")
        #expect(Self.paths(json["pending"]) == ["d.json"], "d's edit waits: \(json)")

        // What reached the remote: the edit and the new document, not d's edit.
        let fullSync = full.run("sync")
        #expect(fullSync.exit == 0, fullSync.comment)
        #expect(Self.number(full, "a.json", "n") == 2 && full.read("mine.json") != nil)
        #expect(Self.number(full, "d.json", "n") == 1 && Self.number(full, "d.json", "m") == 6)

        // override d: the local version goes over the full replica's, which is told.
        let over = exporter.run("override", "d.json")
        #expect(over.exit == 0, over.comment)
        #expect(over.stdout.contains("override  update  d.json"), over.comment)
        let told = full.run("sync")
        #expect(told.exit == 3, "the full replica hears its version lost: \(told.comment)")
        #expect(Self.number(full, "d.json", "n") == 4 && Self.number(full, "d.json", "m") == 1)
        let records =
            (JSONHelp.parse(exporter.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"]
            as? [[String: Any]] ?? []
        #expect(records.count == 1 && records.first?["path"] as? String == "d.json", "\(records)")
        // The remote's version is kept, and resolve brings its values back.
        let stored = records.first?["file"] as? String ?? ""
        #expect(exporter.json(stored)?["m"] as? Int == 6, "the stored copy is the full replica's version")

        // Deleted here over the remote's edit of e; c, deleted there, sent again.
        exporter.remove("e.json")
        let over2 = exporter.run("override", "e.json", "c.json")
        #expect(over2.exit == 0, over2.comment)
        #expect(full.run("sync").exit == 3)
        #expect(!full.exists("e.json") && full.read("c.json") != nil)
        // Nothing to override there any more, or never held: said, exit 1.
        let none = exporter.run("override", "a.json")
        #expect(none.exit == 1 && none.stderr.contains("no remote change held there"), none.comment)

        // Both ways again: what is still held is merged in.
        exporter.ok("config", "sync.mode", "both")
        let merged = exporter.run("sync")
        #expect(merged.exit == 0 || merged.exit == 3, merged.comment)
        #expect(Self.number(exporter, "b.json", "n") == 3 && exporter.read("theirs.json") != nil)
        #expect(
            Self.status(exporter)["notApplied"] as? [Any] == nil
                || Self.paths(Self.status(exporter)["notApplied"]).isEmpty)
        #expect(full.run("sync").exit == 0)
        #expect(exporter.documents() == full.documents(), "both replicas hold the same documents")
    }

    @Test("override is refused on a replica that is not send-only, and a dry run changes nothing")
    func overrideRefusedAndDryRun() {
        let box = Sandbox("override-refused")
        let (_, full, exporter) = Self.fullAndExporter(box, .dir, names: ["a"])
        let refused = full.run("override")
        #expect(refused.exit == 1 && refused.stderr.contains("send-only"), refused.comment)
        Self.changeOnBothSides(full, exporter)
        let before = exporter.read("a.json")
        let dry = JSONOutputTests.check(
            exporter.run("override", "--json", "--dry-run"), "sync-report", command: "override")
        #expect(Self.paths(dry["overridden"]) == ["a.json"], "\(dry)")
        #expect(exporter.read("a.json") == before)
        #expect(Self.paths(Self.status(exporter)["notApplied"]) == ["a.json"])
        let done = JSONOutputTests.check(exporter.run("override", "--json"), "sync-report", command: "override")
        #expect(Self.paths(done["pushed"]) == ["a.json"], "\(done)")
        #expect(full.run("sync").exit == 3, "the full replica hears its version lost")
        #expect(Self.number(full, "a.json", "m") == 3 && Self.number(full, "a.json", "n") == 1)
    }

    @Test(
        "an override's record names the fields the remote's version differs in, and resolve --take remote brings them back; a document made and deleted on the remote while held stops waiting",
        arguments: Kind.allCases)
    func overrideRecordAndStaleHold(_ kind: Kind) throws {
        let box = Sandbox("override-record-\(kind)")
        let (_, full, exporter) = Self.fullAndExporter(box, kind, names: ["a"])
        Self.changeOnBothSides(full, exporter) { full.write("brief.json", Self.doc(["n": 1])) }
        #expect(Self.paths(Self.status(exporter)["notApplied"]) == ["a.json", "brief.json"])
        // Made and deleted there while held here: nothing waits for it any more.
        full.remove("brief.json")
        full.sync()
        #expect(exporter.run("sync").exit == 0)
        #expect(Self.paths(Self.status(exporter)["notApplied"]) == ["a.json"])

        #expect(exporter.run("override").exit == 0)
        let records =
            (JSONHelp.parse(exporter.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"]
            as? [[String: Any]] ?? []
        #expect(records.count == 1, "\(records)")
        #expect(Set(records.first?["fields"] as? [String] ?? []) == ["m", "n"], "\(records)")
        let taken = exporter.run("resolve", "a.json", "--take", "remote")
        #expect(taken.exit == 0, taken.comment)
        #expect(Self.number(exporter, "a.json", "n") == 2 && Self.number(exporter, "a.json", "m") == 1)
        #expect(exporter.run("sync").exit == 0)
        full.run("sync")
        #expect(Self.number(full, "a.json", "n") == 2 && Self.number(full, "a.json", "m") == 1)
    }

    @Test(
        "override of a held rename sends the local name back and records nothing: no value of the remote's version lost",
        arguments: Kind.allCases)
    func overrideOfARename(_ kind: Kind) throws {
        let box = Sandbox("override-rename-\(kind)")
        let (_, full, exporter) = Self.fullAndExporter(box, kind, names: ["a"])
        try FileManager.default.moveItem(atPath: full.path("a.json"), toPath: full.path("moved.json"))
        full.sync()
        #expect(exporter.run("sync").exit == 0)
        #expect(exporter.exists("a.json") && !exporter.exists("moved.json"), "the rename was not applied here")
        #expect(Self.paths(Self.status(exporter)["notApplied"]) == ["moved.json"])
        let over = exporter.run("override", "a.json")
        #expect(over.exit == 0, over.comment)
        let records = (JSONHelp.parse(exporter.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"]
        #expect((records as? [Any])?.isEmpty == true, "\(records ?? "-")")
        let back = full.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(full.exists("a.json") && !full.exists("moved.json"), "the local name went back to the remote")
    }

    @Test("override killed after its journal: the next run finishes it and sends it", arguments: Kind.allCases)
    func overrideKilledAfterJournal(_ kind: Kind) {
        let box = Sandbox("override-killed-\(kind)")
        let (_, full, exporter) = Self.fullAndExporter(box, kind, names: ["a"])
        Self.changeOnBothSides(full, exporter)
        let killed = exporter.run(["override"], env: ["DOCSYNC_CRASH_AT": "override.after-journal"])
        #expect(killed.exit == 137, "the crash point was reached: \(killed.comment)")
        let next = exporter.run("sync")
        #expect(next.exit == 0, next.comment)
        #expect(Self.paths(Self.status(exporter)["notApplied"]).isEmpty)
        #expect(full.run("sync").exit == 3, "the full replica hears its version lost")
        #expect(Self.number(full, "a.json", "m") == 3 && Self.number(full, "a.json", "n") == 1)
        #expect(full.json("a.json")?["changesetId"] as? String == exporter.json("a.json")?["changesetId"] as? String)
    }

    @Test(
        "a full, a send-only and a receive-only replica sync at the same moment, three rounds: the send-only one's documents reach both, its files of others' documents never change, the receive-only one's never leave",
        arguments: Kind.allCases)
    func threeModesTogether(_ kind: Kind) throws {
        let box = Sandbox("modes-together-\(kind)")
        let (url, full, exporter) = Self.fullAndExporter(box, kind, names: ["seed"])
        #expect(CLI.run(["clone", "--receive-only", "--name", "backup", url, "backup"], in: box.root).exit == 0)
        let backup = box.replica("backup")
        let seedHere = exporter.read("seed.json")
        for round in 1...3 {
            full.write("f\(round).json", Self.doc(["round": round]))
            exporter.write("x\(round).json", Self.doc(["round": round]))
            backup.write("r\(round).json", Self.doc(["round": round]))
            Self.set(full, "seed.json", "n", round + 1)
            let results = runConcurrently([full, exporter, backup].map { (["sync"], $0.root) })
            for result in results { #expect(result.exit == 0 || result.exit == 75, result.comment) }
        }
        for replica in [full, exporter, backup, full, exporter, backup] { #expect(replica.run("sync").exit == 0) }
        let expected: Set<String> = ["seed.json", "f1.json", "f2.json", "f3.json", "x1.json", "x2.json", "x3.json"]
        #expect(Set(full.documents().keys) == expected)
        #expect(Set(backup.documents().keys) == expected.union(["r1.json", "r2.json", "r3.json"]))
        for round in 1...3 {
            #expect(full.read("x\(round).json") == exporter.read("x\(round).json"))
            #expect(backup.read("x\(round).json") == exporter.read("x\(round).json"))
            #expect(!exporter.exists("f\(round).json") && !exporter.exists("r\(round).json"))
        }
        #expect(exporter.read("seed.json") == seedHere, "a remote change was applied on the send-only replica")
        #expect(Self.number(full, "seed.json", "n") == 4 && Self.number(backup, "seed.json", "n") == 4)
        #expect(Self.paths(Self.status(exporter)["notApplied"]) == ["seed.json", "f1.json", "f2.json", "f3.json"])
    }

    @Test(
        "watch on a send-only replica: an edit is sent; a change another replica pushed is listed, not applied",
        arguments: WatchTests.Kind.allCases)
    func watchHonoursSendOnly(_ kind: WatchTests.Kind) {
        let box = Sandbox("send-only-watch-\(kind)")
        let (w, probe) = WatchTests.setUp(box, kind, pullSeconds: 1)
        w.ok("config", "sync.mode", "send-only")
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        w.write("local.json", Self.doc(["n": 1]))
        #expect(
            waitUntil(seconds: 60) {
                _ = probe.run("pull")
                return probe.exists("local.json")
            }, "the send-only replica's edit reached the remote: \(watch.description)")
        probe.write("from-probe.json", Self.doc(["n": 2]))
        probe.sync()
        #expect(
            waitUntil(seconds: 60) { watch.syncLines.contains { $0.contains("not applied (send-only)") } },
            watch.comment)
        #expect(watch.stop() == 0, watch.comment)
        #expect(!w.exists("from-probe.json"), "a remote change was applied on the send-only replica")
        #expect(Self.paths(Self.status(w)["notApplied"]).contains("from-probe.json"))
    }
}
