// Words where it matters (issue 42, item 6): a conflict record names the replica whose
// action won, not whoever made the version a rename kept; a pure rename that beat a
// deletion is called a rename; a version held behind an invalid file on an ordinary
// replica is not "not applied (send-only)". Through the built binary, on every remote kind.

import Foundation
import Testing

@Suite("Wording: who did what, said right")
struct WordingTests {
    enum Kind: String, CaseIterable, Sendable { case dir, dir1, git }

    static func pair(_ box: Sandbox, _ kind: Kind) -> (Replica, Replica) {
        box.remoteFormat1 = kind == .dir1
        let url = Reliability.remote(box, git: kind == .git, format1: kind == .dir1)
        let a = box.replica("A")
        for i in 1...4 { a.write("d\(i).json", "{\"n\": \(i)}\n") }
        a.write("x.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "B", url, "B"], in: box.root).exit == 0)
        return (a, box.replica("B"))
    }

    @Test(
        "renamed on both sides: each replica names the other as the winner or loser, never itself twice",
        arguments: Kind.allCases)
    func renameAgainstRename(_ kind: Kind) throws {
        let box = Sandbox("rename-words-\(kind)")
        let (a, b) = Self.pair(box, kind)
        try FileManager.default.moveItem(atPath: a.path("x.json"), toPath: a.path("from-a.json"))
        #expect(a.run("sync").exit == 0)
        sleep(1)
        try FileManager.default.moveItem(atPath: b.path("x.json"), toPath: b.path("from-b.json"))
        let r = b.run("sync")
        #expect([0, 3].contains(r.exit), r.comment)
        _ = a.run("sync")
        let onA = a.run("conflicts")
        let onB = b.run("conflicts")
        // A made the version; B's rename is the later one and wins.
        #expect(onA.stdout.contains("this replica's rename to from-a.json lost to B's rename"), onA.comment)
        #expect(onB.stdout.contains("A's rename to from-a.json lost to this replica's rename"), onB.comment)
        // status says it with the same names as conflicts, not replica ids.
        let status = a.run("status")
        #expect(status.stdout.contains("this replica's rename to from-a.json lost to B's rename"), status.comment)
        for out in [onA.stdout, onB.stdout] {
            #expect(!out.contains("this replica's rename to from-a.json lost to this replica's"), "\(out)")
        }
    }

    @Test(
        "a rename that beat a deletion is called a rename, and the record names the renamer", arguments: Kind.allCases)
    func renameBeatsDeletion(_ kind: Kind) throws {
        let box = Sandbox("rename-delete-words-\(kind)")
        let (a, b) = Self.pair(box, kind)
        a.remove("x.json")
        #expect(a.run("sync").exit == 0)
        try FileManager.default.moveItem(atPath: b.path("x.json"), toPath: b.path("kept.json"))
        let r = b.run("sync")
        #expect(r.exit == 3, r.comment)
        #expect(r.stdout.contains("deleted on the remote but renamed here: kept the local rename"), r.comment)
        #expect(!r.stdout.contains("but edited here"), r.comment)
        let onB = b.run("conflicts")
        #expect(onB.stdout.contains("A's deletion"), onB.comment)
        #expect(!onB.stdout.contains("lost to A's"), "A deleted; B's rename won: \(onB)")
        _ = a.run("sync")
        let onA = a.run("conflicts")
        #expect(onA.stdout.contains("this replica's deletion"), onA.comment)
        #expect(onA.stdout.contains("lost to B's"), onA.comment)
    }

    @Test("a version held behind an invalid file on an ordinary replica waits; status does not call it send-only")
    func heldBehindInvalidFile() {
        let box = Sandbox("held-words")
        let (a, b) = Self.pair(box, .dir)
        let ref = a.refId("x.json")!
        a.write("x.json", "{\"refId\": \"\(ref)\", \"v\": 2}\n")
        #expect(a.run("sync").exit == 0)
        b.write("x.json", "{\"refId\": \"\(ref)\", \"v\": ")
        _ = b.run("sync")
        let status = b.run("status")
        #expect(status.stdout.contains("Waiting for a file to be valid again"), status.comment)
        #expect(!status.stdout.contains("send-only"), status.comment)
        #expect(!status.stdout.contains("override"), status.comment)
    }
}
