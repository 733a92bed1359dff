// Rename against rename: two replicas move one document to different names. The later
// rename (when the file was moved) wins on every replica, whatever order they sync in,
// and the other name is a recorded conflict: exit 3, listed, resolvable.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Rename against rename", .serialized)
struct RenameConflictTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    struct Case: Sendable, CustomTestStringConvertible {
        var kind: Kind
        /// Whether the replica that renamed later also syncs later.
        var laterSyncsLast: Bool
        var testDescription: String { "\(kind.rawValue), the later rename syncs \(laterSyncsLast ? "last" : "first")" }
    }

    static let cases = Kind.allCases.flatMap { k in [true, false].map { Case(kind: k, laterSyncsLast: $0) } }

    @Test(
        "the later rename wins on every replica whatever the sync order; the other name is a recorded conflict",
        arguments: cases)
    func laterRenameWins(_ c: Case) throws {
        let box = Sandbox("rename-\(c.kind)-\(c.laterSyncsLast)")
        let url = Reliability.remote(box, git: c.kind == .git)
        let r1 = box.replica("r1")
        r1.write("a.json", "{\n  \"v\": \"a\"\n}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "r1", "r1"], in: box.root).exit == 0)
        r1.sync()
        #expect(CLI.run(["clone", "--name", "r2", url, "r2"], in: box.root).exit == 0)
        let r2 = box.replica("r2")
        // r2 renames first, r1 a moment later.
        #expect(rename(r2.path("a.json"), r2.path("two.json")) == 0)
        usleep(300_000)
        #expect(rename(r1.path("a.json"), r1.path("one.json")) == 0)

        let (first, second) = c.laterSyncsLast ? (r2, r1) : (r1, r2)
        first.sync()
        let decided = second.run("sync")
        #expect(decided.exit == 3, "the losing name is a recorded conflict: \(decided)")
        let heard = first.run("sync")
        // r2 renamed first, so its name lost: told by exit 3 when it is the one hearing.
        #expect(heard.exit == (c.laterSyncsLast ? 3 : 0), heard.comment)
        for r in [r1, r2] {
            #expect(Set(r.documents().keys) == ["one.json"], "\(r.root): \(r.documents().keys.sorted())")
        }
        // The replica whose rename lost hears of it and can take its name back.
        let lists = r2.run("conflicts")
        #expect(lists.stdout.contains("two.json") && lists.stdout.contains("one.json"), lists.comment)
        let loserSync = r2.run("sync")
        #expect(loserSync.exit == 0, "already told: \(loserSync)")
        let took = r2.run("resolve", "one.json", "--take", "local")
        #expect(took.exit == 0, took.comment)
        #expect(Set(r2.documents().keys) == ["two.json"], "r2 took its own name back: \(r2.documents().keys.sorted())")
        r2.sync()
        r1.sync()
        #expect(Set(r1.documents().keys) == ["two.json"])
        #expect(r1.run("conflicts").stdout.contains("No open conflicts"))
    }
}
