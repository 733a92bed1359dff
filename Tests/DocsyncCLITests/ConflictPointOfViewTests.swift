// A conflict record names its versions by the replica that made each; every replica shows
// it from its own point of view, and `resolve --take local` means what that replica has.
// The case that broke: r1 deletes d.json while r2 edits it; on r3, which did neither, the
// record said "(local deletion)" and `resolve --take local` deleted the document everywhere.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Conflicts seen from a replica that was not party to them")
struct ConflictPointOfViewTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    static func conflicts(_ r: Replica) -> [[String: Any]] {
        (JSONHelp.parse(r.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]] ?? []
    }

    /// r1, r2, r3 on one remote; r1 deletes d.json while r2 edits it, and both edit field
    /// `v` of e.json (r2's save is later, so r1's value loses); synced r1, r2, r3.
    static func threeReplicas(_ box: Sandbox, _ kind: Kind) -> (r1: Replica, r2: Replica, r3: Replica) {
        let url = Reliability.remote(box, git: kind == .git)
        let r1 = box.replica("r1")
        r1.write("d.json", "{\n  \"v\": \"d0\"\n}\n")
        r1.write("e.json", "{\n  \"v\": \"e0\",\n  \"w\": 1\n}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "r1", "r1"], in: box.root).exit == 0)
        r1.sync()
        for name in ["r2", "r3"] {
            let r = CLI.run(["clone", "--name", name, url, name], in: box.root)
            #expect(r.exit == 0, r.comment)
        }
        let (r2, r3) = (box.replica("r2"), box.replica("r3"))
        r1.remove("d.json")
        r2.write("d.json", r2.read("d.json")!.replacingOccurrences(of: "\"d0\"", with: "\"d-by-r2\""))
        r1.write("e.json", r1.read("e.json")!.replacingOccurrences(of: "\"e0\"", with: "\"e-by-r1\""))
        r2.write("e.json", r2.read("e.json")!.replacingOccurrences(of: "\"e0\"", with: "\"e-by-r2\""))
        let now = Int(Date().timeIntervalSince1970)
        setSaveTime(r1.path("e.json"), now - 20)
        setSaveTime(r2.path("e.json"), now - 10)
        r1.sync()
        let second = r2.run("sync")
        #expect(second.exit == 3, second.comment)
        r3.sync()
        return (r1, r2, r3)
    }

    @Test(
        "on the third replica: r1's deletion and r1's version are r1's, not local; resolve --take local deletes nothing",
        arguments: Kind.allCases)
    func thirdReplicaSeesOthersVersions(_ kind: Kind) throws {
        let box = Sandbox("pov-\(kind)")
        let (r1, r2, r3) = Self.threeReplicas(box, kind)
        #expect(r3.exists("d.json") && r3.json("d.json")?["v"] as? String == "d-by-r2")
        let listed = r3.run("conflicts")
        #expect(listed.exit == 0, listed.comment)
        #expect(
            !listed.stdout.contains("(local deletion)") && !listed.stdout.contains("(local version)"), listed.comment)
        #expect(listed.stdout.contains("r1's deletion") && listed.stdout.contains("lost to r2"), listed.comment)
        #expect(listed.stdout.contains("r1's version"), listed.comment)
        for record in Self.conflicts(r3) {
            #expect(record["storedSide"] as? String == "remote", "nothing here is r3's own: \(record)")
        }
        // On r1 the same records are its own: it hears that its versions lost (exit 3).
        let heard = r1.run("sync")
        #expect(heard.exit == 3, heard.comment)
        for record in Self.conflicts(r1) { #expect(record["storedSide"] as? String == "local", "\(record)") }
        #expect(r1.run("conflicts").stdout.contains("this replica's deletion"))

        let status = r3.run("status")
        #expect(status.stdout.contains("deleted by r1"), status.comment)

        let kept = r3.run("resolve", "d.json", "--take", "local")
        #expect(kept.exit == 0, kept.comment)
        #expect(r3.json("d.json")?["v"] as? String == "d-by-r2", "what r3 has stays")
        for r in [r3, r1, r2, r3] { r.run("sync") }
        for r in [r1, r2, r3] {
            #expect(r.json("d.json")?["v"] as? String == "d-by-r2", "\(r.root): the document lives on every replica")
        }
    }

    @Test(
        "--take accepts a replica's name: r3 takes r1's value of the collided field, and every replica gets it",
        arguments: Kind.allCases)
    func takeByReplicaName(_ kind: Kind) throws {
        let box = Sandbox("take-\(kind)")
        let (r1, r2, r3) = Self.threeReplicas(box, kind)
        #expect(r3.json("e.json")?["v"] as? String == "e-by-r2")
        let took = r3.run("resolve", "e.json", "--take", "r1")
        #expect(took.exit == 0, took.comment)
        #expect(r3.json("e.json")?["v"] as? String == "e-by-r1")
        let unknown = r3.run("resolve", "e.json", "--take", "nobody")
        #expect(unknown.exit == 1, unknown.comment)
        for r in [r3, r1, r2, r3] { r.run("sync") }
        for r in [r1, r2, r3] {
            #expect(r.json("e.json")?["v"] as? String == "e-by-r1", "\(r.root)")
            #expect(r.json("e.json")?["w"] as? Int == 1)
        }
        // Taking the replica that made the kept version keeps the document as it is.
        let d = r3.run("resolve", "d.json", "--take", "r2")
        #expect(d.exit == 0 && r3.exists("d.json"), d.comment)
    }
}

@Suite("resolve killed half-way")
struct ResolveKillTests {
    @Test(
        "a resolve SIGKILLed after journaling it is finished by the next run: values taken, conflict closed everywhere, nothing else pushed",
        arguments: ConflictPointOfViewTests.Kind.allCases)
    func killedResolveIsFinished(_ kind: ConflictPointOfViewTests.Kind) throws {
        let box = Sandbox("resolve-kill-\(kind)")
        let (r1, r2, r3) = ConflictPointOfViewTests.threeReplicas(box, kind)
        // On r1, whose value of e.json's v lost: take it back, killed after the journal.
        _ = r1.run("sync")
        #expect(r1.json("e.json")?["v"] as? String == "e-by-r2")
        let killed = r1.run(
            ["resolve", "e.json", "--take", "local"], env: ["DOCSYNC_CRASH_AT": "resolve.after-journal"])
        #expect(killed.exit == 137, "the resolve died there: \(killed)")
        let next = r1.run("sync")
        #expect(next.exit == 0, "nothing new lost here: \(next)")
        #expect(
            next.stderr.contains("finished an interrupted resolve of e.json"), "and it says what it finished: \(next)")
        #expect(r1.json("e.json")?["v"] as? String == "e-by-r1", "the taken value is in the file")
        let open = ConflictPointOfViewTests.conflicts(r1).filter {
            $0["path"] as? String == "e.json" && $0["resolved"] == nil
        }
        #expect(open.isEmpty, "the conflict is closed: \(open)")
        for r in [r2, r3, r1, r2, r3] { _ = r.run("sync") }
        for r in [r1, r2, r3] {
            #expect(r.json("e.json")?["v"] as? String == "e-by-r1", "\(r.root)")
            let stillOpen = ConflictPointOfViewTests.conflicts(r).filter {
                $0["path"] as? String == "e.json" && $0["resolved"] == nil
            }
            #expect(stillOpen.isEmpty, "\(r.root): \(stillOpen)")
        }
    }
}
