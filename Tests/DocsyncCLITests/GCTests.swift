// `docsync gc`, local half: the journal is compacted down to the pending actions, and
// objects nothing refers to are removed. Real trees, the built binary.

import Foundation
import Testing

@Suite("docsync gc: local compaction") struct GCLocalTests {
    /// Replaces the "v" value in a document, keeping its ids (an ordinary edit).
    func edit(_ r: Replica, _ file: String, _ value: String) {
        r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
    }

    func size(_ path: String) -> Int { Files.bytes(path)?.count ?? -1 }

    func objectCount(_ r: Replica) -> Int { Files.list(r.path(".docsync/objects"), skipMetadata: false).count }

    @Test func pendingOfflineActionsSurviveGCAndStillPush() throws {
        let box = Sandbox()
        let a = box.initReplica(
            "a", files: ["keep.json": "{\"v\": \"k0\"}", "edit.json": "{\"v\": \"e0\"}", "gone.json": "{\"v\": \"g0\"}"]
        )
        a.sync()
        let b = box.clone("b")
        for i in 1...3 {
            edit(a, "keep.json", "k\(i)")
            a.sync()
        }
        b.sync()
        // Offline: the remote folder is away (unmounted share).
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.path("remote.away"))
        edit(a, "edit.json", "e-offline")
        a.remove("gone.json")
        a.write("new.json", "{\"v\": \"n-offline\"}")
        #expect(a.run("push").exit == 75)
        let before = size(a.journal)

        // The remote is away: the local half is done, and gc says "try again later" (75).
        let gc = a.run("gc", "--json")
        #expect(gc.exit == 75, gc.comment)
        let report = try #require(JSONHelp.parse(gc.stdout) as? [String: Any], gc.comment)
        #expect(report["pendingKept"] as? Int == 3, gc.comment)
        #expect((report["journalEntriesDropped"] as? Int ?? 0) > 5, gc.comment)
        #expect(size(a.journal) < before)
        #expect(size(a.journal) == report["journalBytesAfter"] as? Int)
        let pending = a.ok("log", "--pending").stdout
        for path in ["edit.json", "gone.json", "new.json"] { #expect(pending.contains(path), "\(pending)") }
        #expect(a.ok("verify", "--local-only").exit == 0)
        // A second gc has nothing left to do and rewrites nothing.
        let journalBytes = a.bytes(".docsync/journal")
        let again = try #require(JSONHelp.parse(a.ok("gc", "--json", "--local-only").stdout) as? [String: Any])
        #expect(again["journalEntriesDropped"] as? Int == 0 && again["objectsRemoved"] as? Int == 0)
        #expect(a.bytes(".docsync/journal") == journalBytes)

        try FileManager.default.moveItem(atPath: box.path("remote.away"), toPath: box.remote)
        let pushed = a.ok("sync")
        #expect(pushed.stdout.contains("3 pushed"), pushed.comment)
        b.sync()
        #expect(b.json("edit.json")?["v"] as? String == "e-offline")
        #expect(b.json("new.json")?["v"] as? String == "n-offline")
        #expect(!b.exists("gone.json"))
        #expect(a.documents() == b.documents())
        // New entries number on from the compacted journal.
        edit(a, "keep.json", "k-after")
        a.sync()
        let log = a.ok("log").stdout
        #expect(log.contains("keep.json"), "\(log)")
        for r in [a, b] { #expect(r.run("verify").exit == 0, r.run("verify").comment) }
    }

    @Test("on a git remote, gc puts the cache repository (small fetches from a path stay loose) into one pack")
    func gitCacheIsRepacked() throws {
        let box = Sandbox()
        let (repo, a) = CorruptionTests.gitReplicaHoldingOneDocument(box)
        let b = box.replica("B")
        #expect(CLI.run(["clone", repo, "B"], in: box.root).exit == 0)
        for round in 2...4 {
            b.write("b\(round).json", "{\"v\": \(round)}\n")
            b.sync()
            a.sync()  // a fetch: a few more loose objects in A's cache
        }
        let cache = a.path(".docsync/git")
        func packs() -> Int {
            Files.list(cache + "/objects/pack", skipMetadata: false).filter { $0.hasSuffix(".pack") }.count
        }
        func looseObjects() -> Int {
            Files.list(cache + "/objects", skipMetadata: false).filter {
                !$0.hasPrefix("pack/") && !$0.hasPrefix("info/")
            }
            .count
        }
        #expect(looseObjects() > 0)
        let r = a.run("gc", "--local-only")
        #expect(r.exit == 0, r.comment)
        #expect(r.stdout.contains("gc  git cache  ") && r.stdout.contains("→ one pack of"), r.comment)
        #expect(packs() == 1 && looseObjects() == 0)
        Reliability.fsck(cache)
        b.write("b5.json", "{\"v\": 5}\n")
        b.sync()
        a.sync()
        #expect(a.json("b5.json")?["v"] as? Int == 5)
    }

    @Test("after gc, log DOC prints no empty journal heading: one line says the entries were compacted")
    func logAfterGCHasNoEmptyHeading() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["d.json": "{\"v\": 1}\n"])
        a.sync()
        // A window that leaves a section empty prints no heading for it.
        let windowed = a.ok("log", "d.json", "--since", "2999-01-01")
        #expect(!windowed.stdout.contains("Remote versions"), windowed.comment)
        #expect(!windowed.stdout.contains("This replica's journal"), windowed.comment)
        a.ok("gc")
        let log = a.ok("log", "d.json")
        let lines = log.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, line) in lines.enumerated() where line.hasSuffix(":") {
            let next = i + 1 < lines.count ? lines[i + 1] : ""
            #expect(next.hasPrefix("  "), "heading '\(line)' with nothing under it: \(log)")
        }
        #expect(
            log.stdout.contains(
                "This replica's journal: no entries for it (docsync gc compacted them once they reached the remote)"),
            log.comment)
    }

    @Test func dryRunChangesNothing() throws {
        let box = Sandbox()
        let a = box.initReplica("a", files: ["x.json": "{\"v\": \"0\"}"])
        a.sync()
        for i in 1...3 {
            edit(a, "x.json", "\(i)")
            a.sync()
        }
        edit(a, "x.json", "unpushed")
        a.ok("status")
        let before = Files.tree(a.root, skipMetadata: false).filter {
            !$0.key.hasSuffix("/lock") && $0.key != ".docsync/lock"
        }
        let listing = Files.listing(a.root)
        let text = a.ok("gc", "--dry-run")
        #expect(text.stdout.contains("would gc"), text.comment)
        #expect(text.stdout.contains("Dry run: would free"), text.comment)
        let json = try #require(JSONHelp.parse(a.ok("gc", "--dry-run", "--json").stdout) as? [String: Any])
        #expect(json["dryRun"] as? Bool == true)
        #expect((json["journalEntriesDropped"] as? Int ?? 0) > 0)
        #expect((json["objectsRemoved"] as? Int ?? 0) > 0)
        let after = Files.tree(a.root, skipMetadata: false).filter {
            !$0.key.hasSuffix("/lock") && $0.key != ".docsync/lock"
        }
        #expect(after == before, "gc --dry-run changed bytes")
        #expect(Files.listing(a.root) == listing)
        // The real run frees what the dry run announced.
        let real = try #require(JSONHelp.parse(a.ok("gc", "--json").stdout) as? [String: Any])
        #expect(real["journalEntriesDropped"] as? Int == json["journalEntriesDropped"] as? Int)
        #expect(real["objectsRemoved"] as? Int == json["objectsRemoved"] as? Int)
        #expect(real["pendingKept"] as? Int == 0)
        a.sync()
        #expect(a.run("verify").exit == 0)
    }

    @Test func objectsStillNeededAreKept() throws {
        let box = Sandbox()
        let a = box.initReplica(
            "a", files: ["rec.json": "{\n  \"v\": \"0\",\n  \"name\": \"Ann\",\n  \"city\": \"Oslo\"\n}\n"])
        a.sync()
        let b = box.clone("b")
        // A conflict: the same field changed on both sides; the loser goes to the store.
        edit(b, "rec.json", "b")
        b.sync()
        edit(a, "rec.json", "a")
        #expect(a.run("sync").exit == 3)
        let copies = a.conflictCopies()
        #expect(copies.count == 1)
        #expect(b.run("sync").exit == 3, "b's version lost at a: b hears of it")
        let objectsBefore = objectCount(a)

        let gc = try #require(JSONHelp.parse(a.ok("gc", "--json").stdout) as? [String: Any])
        #expect((gc["objectsRemoved"] as? Int ?? 0) > 0, "\(gc)")
        #expect(objectCount(a) < objectsBefore)
        #expect(a.conflictCopies() == copies)
        #expect(a.run("verify").exit == 0, a.run("verify").comment)

        // Three-way merge after gc still has its base: different fields on each side merge.
        b.write("rec.json", b.read("rec.json")!.replacing(#/"city": "[^"]*"/#, with: "\"city\": \"Bergen\""))
        a.write("rec.json", a.read("rec.json")!.replacing(#/"name": "[^"]*"/#, with: "\"name\": \"Anna\""))
        b.sync()
        let merged = a.run("sync")
        #expect(merged.exit == 0, merged.comment)
        #expect(a.json("rec.json")?["name"] as? String == "Anna")
        #expect(a.json("rec.json")?["city"] as? String == "Bergen")
        b.sync()
        #expect(a.documents() == b.documents())

        // The conflict copy is still resolvable after gc.
        let stored = try #require(
            a.ok("conflicts", "--json").stdout.firstMatch(of: #/"changesetId"\s*:\s*"([^"]+)"/#)?.1)
        let resolved = a.run("resolve", "rec.json", "--take", String(stored))
        #expect(resolved.exit == 0, resolved.comment)
        #expect(a.json("rec.json")?["v"] as? String == "b")
        a.sync()
        b.sync()
        #expect(a.documents() == b.documents())
        for r in [a, b] { #expect(r.run("verify").exit == 0) }
    }

    @Test func aDamagedJournalHistoryIsLeftAlone() throws {
        let box = Sandbox()
        let a = box.initReplica("a", files: ["x.json": "{\"v\": \"0\"}"])
        a.sync()
        edit(a, "x.json", "1")
        a.sync()
        // Flip a byte inside the first (already folded) line's payload.
        var bytes = try #require(a.bytes(".docsync/journal"))
        bytes[10] = bytes[10] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        a.writeBytes(".docsync/journal", bytes)
        let stateBefore = a.bytes(".docsync/state")
        let r = a.run("gc")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("nothing was changed"), r.comment)
        #expect(a.bytes(".docsync/journal") == bytes)
        #expect(a.bytes(".docsync/state") == stateBefore)
    }
}
