import Foundation
import Testing

@Suite("No-op syncs and recovery from a lost state")
struct StabilityAndRecoveryTests {
    @Test(
        "repeated syncs with no changes change nothing, locally or on the remote (either folder layout)",
        arguments: [false, true])
    func noOpSyncsTouchNothing(format1: Bool) {
        let box = Sandbox()
        box.remoteFormat1 = format1
        let a = box.initReplica(
            "A",
            files: [
                "a.json": "{\"a\": 1}\n", "b.json": "{\"b\": 1}\n", "dir/c.json": "{\"c\": 1}\n",
                "gone.json": "{\"g\": 1}\n"
            ])
        a.sync()
        let b = box.clone("B")
        // Some history: an edit, a move, a deletion (a tombstone), a new document.
        b.write("a.json", b.read("a.json")!.replacing("\"a\": 1", with: "\"a\": 2"))
        #expect(rename(b.path("b.json"), b.path("dir/b.json")) == 0)
        b.remove("gone.json")
        b.write("new.json", "{\"n\": 1}\n")
        b.sync()
        a.sync()
        b.sync()
        #expect(a.documents() == b.documents())
        #expect(!Reliability.folderTombstones(box.remote).isEmpty)

        func snapshot() -> [String: Files.Stamp] {
            var all: [String: Files.Stamp] = [:]
            for (path, stamp) in Files.stamps(a.root, skipMetadata: true) { all["A/" + path] = stamp }
            for (path, stamp) in Files.stamps(b.root, skipMetadata: true) { all["B/" + path] = stamp }
            for (path, stamp) in Files.stamps(box.remote, skipMetadata: false) where !Files.isTransient(path) {
                all["remote/" + path] = stamp
            }
            all["A/.docsync/journal"] = Files.stamp(a.journal)
            all["B/.docsync/journal"] = Files.stamp(b.journal)
            return all
        }
        let before = snapshot()
        if format1 {
            #expect(before["remote/.docsync/feed"] != nil && before["remote/.docsync/generation"] != nil)
        } else {
            #expect(
                before.keys.contains { $0.hasPrefix("remote/.docsync/replicas/") && $0.contains("/commits/") },
                "\(before.keys.sorted())")
        }

        for replica in [a, b, a, b] {
            let r = replica.sync()
            #expect(r.stdout.contains("0 recorded, 0 pulled, 0 pushed"), r.comment)
        }
        #expect(a.run("pull").exit == 0)
        #expect(b.run("push").exit == 0)
        let after = snapshot()
        #expect(
            Set(after.keys) == Set(before.keys),
            "files appeared or vanished: \(Set(after.keys).symmetricDifference(before.keys).sorted())")
        let changed = before.keys.sorted().filter { before[$0] != after[$0] }
        #expect(
            changed.isEmpty,
            "no-op syncs rewrote: \(changed.map { "\($0): \(before[$0]!) → \(after[$0].map(String.init(describing:)) ?? "gone")" })"
        )
    }

    @Test(
        "a missing .docsync/state is refused with a pointer to reset-base; nothing is deleted; reset-base then sync converges"
    )
    func missingState() {
        let box = Sandbox()
        let a = box.initReplica(
            "A", files: ["d1.json": "{\"d\": 1}\n", "d2.json": "{\"d\": 2}\n", "d3.json": "{\"d\": 3}\n"])
        a.sync()
        let b = box.clone("B")
        b.write("d4.json", "{\"d\": 4}\n")
        b.sync()
        a.write("d5.json", "{\"d\": 5}\n")

        a.remove(".docsync/state")
        let docs = a.documents()
        let remoteDocs = Files.tree(box.remote, skipMetadata: true)
        for command in ["sync", "push", "pull"] {
            let r = a.run(command)
            #expect(r.exit == 1, r.comment)
            #expect(r.stderr.contains("reset-base"), "the error must point to the recovery: \(r)")
        }
        #expect(a.documents() == docs, "nothing may change in the tree")
        #expect(Files.tree(box.remote, skipMetadata: true) == remoteDocs, "nothing may change on the remote")
        #expect(Reliability.folderTombstones(box.remote).isEmpty, "nothing may be deleted on the remote")

        let reset = a.run("reset-base")
        #expect(reset.exit == 0, reset.comment)
        let sync = a.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(Set(a.documents().keys) == ["d1.json", "d2.json", "d3.json", "d4.json", "d5.json"])
        #expect(
            Set(Files.list(box.remote, skipMetadata: true)) == ["d1.json", "d2.json", "d3.json", "d4.json", "d5.json"])
        #expect(Reliability.folderTombstones(box.remote).isEmpty, "reset-base must not delete anything")
        #expect(a.conflictCopies().isEmpty, "identical versions are not conflicts")
        for path in ["d1.json", "d2.json", "d3.json"] {
            #expect(a.bytes(path) == docs[path], "\(path) was rewritten by the recovery")
        }
        b.sync()
        #expect(b.documents() == a.documents())
        a.ok("verify")
        // A later deletion still works normally.
        a.remove("d1.json")
        a.sync()
        b.sync()
        #expect(!b.exists("d1.json"))
    }

    @Test("a damaged .docsync/state is refused too, without deleting anything")
    func damagedState() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["d1.json": "{\"d\": 1}\n", "d2.json": "{\"d\": 2}\n"])
        a.sync()
        let docs = a.documents()
        let remoteDocs = Files.tree(box.remote, skipMetadata: true)
        a.write(".docsync/state", "garbage\n")
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("reset-base"), r.comment)
        #expect(a.documents() == docs)
        #expect(Files.tree(box.remote, skipMetadata: true) == remoteDocs)
        #expect(a.run("reset-base").exit == 0)
        a.sync()
        #expect(a.documents() == docs)
        #expect(Files.tree(box.remote, skipMetadata: true) == remoteDocs)
    }
}
