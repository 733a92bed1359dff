// `docsync revert` (issue 24): the synced version back over local changes, which are
// dropped. Through the built binary on both remote kinds; what is checked is each file's
// bytes against what the remote holds (read by a second, full replica), and that nothing
// reverted ever reaches the remote.

import Foundation
import Testing

@Suite("docsync revert")
struct RevertTests {
    typealias Kind = SyncModeTests.Kind

    /// A full replica and a receive-only one of a new remote holding a.json, b.json, c.json.
    static func pair(_ box: Sandbox, _ kind: Kind) -> (full: Replica, backup: Replica) {
        let (_, full, backup) = SyncModeTests.fullAndBackup(box, kind, names: ["a", "b", "c"])
        return (full, backup)
    }

    static func pending(_ r: Replica) -> [[String: Any]] {
        (JSONHelp.parse(r.run("status", "--json").stdout) as? [String: Any])?["pending"] as? [[String: Any]] ?? []
    }

    @Test(
        "an edit, a creation, a deletion and a move are put back as synced, a path at a time or all at once; nothing reverted is ever sent",
        arguments: Kind.allCases)
    func revertsEveryKindOfChange(_ kind: Kind) throws {
        let box = Sandbox("revert-\(kind)")
        let (full, backup) = Self.pair(box, kind)
        let synced = backup.documents()
        SyncModeTests.set(backup, "a.json", "n", 2)
        backup.write("notes/new.json", SyncModeTests.doc(["n": 7]))
        backup.remove("b.json")
        try FileManager.default.moveItem(atPath: backup.path("c.json"), toPath: backup.path("c2.json"))

        // One path: only that document goes back.
        let one = backup.run("revert", "a.json")
        #expect(one.exit == 0, one.comment)
        #expect(one.stdout.contains("revert  update  a.json"), one.comment)
        #expect(backup.bytes("a.json") == synced["a.json"], "a.json holds the synced bytes again")
        #expect(
            Set(Self.pending(backup).compactMap { $0["path"] as? String }) == ["notes/new.json", "b.json", "c2.json"])

        // A folder, then everything else.
        #expect(backup.run("revert", "notes").exit == 0)
        #expect(!backup.exists("notes/new.json"))
        let rest = backup.run("revert", "--json")
        #expect(rest.exit == 0, rest.comment)
        let reverted = (JSONHelp.parse(rest.stdout) as? [String: Any])?["reverted"] as? [[String: Any]] ?? []
        #expect(Set(reverted.compactMap { $0["kind"] as? String }) == ["delete", "rename"], "\(reverted)")
        #expect(backup.documents() == synced, "every file as synced, nothing else in the tree")
        #expect(Self.pending(backup).isEmpty)
        #expect(backup.run("status").stdout.contains("Nothing to sync."))

        // Nothing reverted goes anywhere, not even once the replica sends again.
        #expect(backup.run("config", "sync.mode", "both").exit == 0)
        let sync = backup.run("sync")
        #expect(sync.exit == 0 && sync.stdout.contains("0 pushed"), sync.comment)
        full.sync()
        #expect(full.documents() == synced)

        // The reverted edit is still in the journal: restore brings it back.
        let log = (JSONHelp.parse(backup.run("log", "--json").stdout) as? [String: Any])?["entries"] as? [[String: Any]]
        let lost = try #require(
            log?.last { $0["kind"] as? String == "update" && $0["path"] as? String == "a.json" }?["changesetId"]
                as? String)
        let restored = backup.run("restore", "a.json", "--at", lost)
        #expect(restored.exit == 0, restored.comment)
        #expect(SyncModeTests.number(backup, "a.json", "n") == 2)
    }

    @Test("a synced version is never written over a file that took its path; a path without local changes is an error")
    func refusesAndChangesNothing() throws {
        let box = Sandbox("revert-refuse")
        let (_, backup) = Self.pair(box, .dir)
        try FileManager.default.moveItem(atPath: backup.path("a.json"), toPath: backup.path("moved.json"))
        #expect(backup.run("sync").exit == 0, "the move is recorded")
        backup.write("a.json", SyncModeTests.doc(["other": 1]))
        let before = Files.tree(backup.root, skipMetadata: false)
        let refused = backup.run("revert", "moved.json")
        #expect(refused.exit == 1, refused.comment)
        #expect(refused.stderr.contains("a.json now holds another file"), refused.comment)
        #expect(SyncModeTests.number(backup, "a.json", "other") == 1, "the file in the way is untouched")
        #expect(backup.exists("moved.json"))
        let none = backup.run("revert", "b.json")
        #expect(none.exit == 1 && none.stderr.contains("b.json: no local change to revert"), none.comment)
        // The refused run recorded the new a.json (stamping its ids) and nothing else.
        let after = Files.tree(backup.root, skipMetadata: false).filter { !$0.key.hasPrefix(".docsync/") }
        #expect(
            after.filter { $0.key != "a.json" }
                == before.filter { !$0.key.hasPrefix(".docsync/") && $0.key != "a.json" },
            "a refused revert changes no other file of the tree")
        // Reverting everything removes the new a.json first (created here), then moves a.json back.
        #expect(backup.run("revert").exit == 0)
        #expect(SyncModeTests.number(backup, "a.json", "n") == 1 && !backup.exists("moved.json"))
    }

    @Test("a document whose file is invalid keeps its recorded changes: revert leaves it and says so")
    func invalidFileIsLeftAlone() throws {
        let box = Sandbox("revert-invalid")
        let (_, backup) = Self.pair(box, .dir)
        let synced = backup.documents()
        SyncModeTests.set(backup, "a.json", "n", 4)
        SyncModeTests.set(backup, "b.json", "n", 5)
        #expect(backup.run("sync").exit == 0, "both edits recorded")
        backup.write("a.json", "{ \"n\": ")
        let r = backup.run("revert")
        #expect(r.exit == 1, "an invalid file is reported as by every command: \(r)")
        #expect(r.stdout.contains("a.json: not a valid document now; left as it is"), r.comment)
        #expect(r.stdout.contains("revert  update  b.json"), r.comment)
        #expect(backup.read("a.json") == "{ \"n\": ", "the broken file is the user's, untouched")
        #expect(backup.bytes("b.json") == synced["b.json"])
        #expect(Set(Self.pending(backup).compactMap { $0["path"] as? String }) == ["a.json"], "a.json's edit stays")
        backup.write(
            "a.json",
            synced["a.json"].map { String(decoding: $0, as: UTF8.self) }!.replacingOccurrences(
                of: "\"n\": 1", with: "\"n\": 6"))
        #expect(backup.run("revert", "a.json").exit == 0)
        #expect(backup.documents() == synced, "fixed, it reverts")
    }

    @Test(
        "revert settles the document's open conflicts as taking the remote's: a receive-only replica that kept its own field over the remote's, then reverted, lists none",
        arguments: Kind.allCases)
    func revertSettlesConflicts(_ kind: Kind) throws {
        let box = Sandbox("revert-conflict-\(kind)")
        let (full, backup) = Self.pair(box, kind)
        SyncModeTests.set(full, "a.json", "n", 2)
        full.sync()
        // Saved later here: the merge keeps this replica's value and records the remote's.
        Thread.sleep(forTimeInterval: 0.01)
        SyncModeTests.set(backup, "a.json", "n", 3)
        let merged = backup.run("sync")
        #expect(merged.exit == 3, merged.comment)
        let open = { (r: Replica) -> [[String: Any]] in
            (JSONHelp.parse(r.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
                ?? []
        }
        #expect(open(backup).count == 1)
        let reverted = backup.run("revert", "a.json")
        #expect(reverted.exit == 0, reverted.comment)
        #expect(reverted.stdout.contains("open conflict is settled"), reverted.comment)
        #expect(SyncModeTests.number(backup, "a.json", "n") == 2, "the remote's value is back")
        #expect(open(backup).isEmpty, "\(open(backup))")
        let all =
            (JSONHelp.parse(backup.run("conflicts", "--json", "--all").stdout) as? [String: Any])?["conflicts"]
            as? [[String: Any]] ?? []
        #expect(all.count == 1 && all.first?["take"] as? String == "remote", "\(all)")
        #expect(backup.run("sync").exit == 0)
    }

    @Test("revert killed after its journal: the next run finishes it and says so", arguments: Kind.allCases)
    func killedRevertIsFinished(_ kind: Kind) throws {
        let box = Sandbox("revert-kill-\(kind)")
        let (full, backup) = Self.pair(box, kind)
        let synced = backup.documents()
        SyncModeTests.set(backup, "a.json", "n", 5)
        backup.write("new.json", SyncModeTests.doc(["n": 3]))
        let killed = backup.run(["revert"], env: ["DOCSYNC_CRASH_AT": "revert.after-journal"])
        #expect(killed.exit == 137, "the revert died there: \(killed)")
        #expect(SyncModeTests.number(backup, "a.json", "n") == 5, "killed before it touched a file")
        let next = backup.run("sync")
        #expect(next.exit == 0, next.comment)
        #expect(next.stderr.contains("finished an interrupted run's change of a.json"), next.comment)
        #expect(backup.documents() == synced, "the revert is finished: every file as synced")
        #expect(Self.pending(backup).isEmpty)
        full.sync()
        #expect(full.documents() == synced)
    }
}
