// A damaged `.docsync/` (journal, state, config, clock, index) and a remote that is only
// partly there. Each case must give a clear error naming the file and the way out
// (docs/RECOVERY.md), or be repaired safely; it must never be read as "everything was
// deleted", and no document may be lost.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Reliability: corrupted .docsync/ and partial remotes")
struct CorruptionTests {
    /// A, B on a folder remote with d1…d3 synced; A then deletes d2 and edits d1 while the
    /// remote is away, so A's journal and state hold pending actions (a deletion too).
    static func setUpWithPending(_ box: Sandbox) -> (a: Replica, b: Replica) {
        let a = box.initReplica(
            "A",
            files: [
                "d1.json": "{\n  \"v\": \"d1-0\"\n}\n", "d2.json": "{\"v\": \"d2-0\"}\n",
                "d3.json": "{\"v\": \"d3-0\"}\n"
            ])
        a.sync()
        let b = box.clone("B")
        #expect(rename(box.remote, box.remote + ".away") == 0)
        a.write("d1.json", a.read("d1.json")!.replacing("\"d1-0\"", with: "\"d1-A\""))
        a.remove("d2.json")
        a.write("d4.json", "{\"v\": \"d4-A\"}\n")
        #expect(a.run("sync").exit == 75)
        #expect(rename(box.remote + ".away", box.remote) == 0)
        return (a, b)
    }

    /// After recovery: A's pending edit, deletion and creation all reached B.
    static func expectPendingWorkArrived(_ a: Replica, _ b: Replica, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let r = b.run("sync")
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        #expect(b.json("d1.json")?["v"] as? String == "d1-A", sourceLocation: sourceLocation)
        #expect(!b.exists("d2.json"), "the pending deletion was not lost", sourceLocation: sourceLocation)
        #expect(b.json("d4.json")?["v"] as? String == "d4-A", sourceLocation: sourceLocation)
        #expect(b.documents() == a.documents(), sourceLocation: sourceLocation)
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment, sourceLocation: sourceLocation)
        }
    }

    // MARK: - Journal

    enum JournalDamage: String, CaseIterable, Sendable { case emptied, deleted, cutMidLine, cutInHalf }

    @Test(
        "a journal shorter than the checkpoint (emptied, deleted, cut): repaired from the intact state with a warning, pending work still sent",
        arguments: JournalDamage.allCases)
    func shortenedJournal(_ damage: JournalDamage) {
        let box = Sandbox("journal-\(damage)")
        let (a, b) = Self.setUpWithPending(box)
        let size = Files.bytes(a.journal)!.count
        switch damage {
        case .emptied: rewriteInPlace(a.journal, [])
        case .deleted: a.remove(".docsync/journal")
        case .cutMidLine: #expect(truncate(a.journal, off_t(size - 7)) == 0)
        case .cutInHalf: #expect(truncate(a.journal, off_t(size / 2)) == 0)
        }
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(
            r.stderr.contains(a.journal) && r.stderr.contains("shorter than the last checkpoint"),
            "a warning names the journal: \(r)")
        #expect(r.stdout.contains("3 pushed"), "the pending edit, deletion and creation are sent: \(r)")
        if damage != .deleted && damage != .emptied {
            let aside = Files.list(a.path(".docsync"), skipMetadata: false).filter { $0.hasPrefix("journal.damaged-") }
            #expect(aside.count == 1, "what was left of the journal is kept aside: \(aside)")
        }
        Self.expectPendingWorkArrived(a, b)
        let log = a.run("log")
        #expect(log.exit == 0, log.comment)
    }

    enum Garble: String, CaseIterable, Sendable { case twoGarbageLines, unknownEntryWithGoodChecksum, flippedByte }

    @Test(
        "a damaged journal entry not yet folded in: refused with the file, line and recovery; the documented recovery loses nothing",
        arguments: Garble.allCases)
    func damagedUnfoldedEntry(_ garble: Garble) throws {
        let box = Sandbox("garble-\(garble)")
        let (a, b) = Self.setUpWithPending(box)
        // Entries after the checkpoint: a run killed right after journaling its changes.
        a.write("d5.json", "{\"v\": \"d5-A\"}\n")
        a.write("d6.json", "{\"v\": \"d6-A\"}\n")
        #expect(a.run("sync", env: ["DOCSYNC_CRASH_AT": "record.after-journal"]).exit == 137)
        var bytes = Files.bytes(a.journal)!
        switch garble {
        case .twoGarbageLines:
            bytes += Array("garbage\nmore garbage\n".utf8)
        case .unknownEntryWithGoodChecksum:
            let payload = #"{"kind":"teleport","seq":999,"time":0}"#
            bytes += Array((payload + "\t#" + Reliability.sha256Prefix(payload) + "\n").utf8)
            bytes += Array("another line\n".utf8)
        case .flippedByte:
            // The first of the two unfolded lines (the journal ends with them).
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let target = bytes.count - lines[lines.count - 2].count - lines[lines.count - 3].count - 2 + 10
            bytes[target] ^= 0x01
        }
        try Data(bytes).write(to: URL(fileURLWithPath: a.journal))
        let docs = a.documents()
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains(a.journal + ": journal line "), "names the journal and the line: \(r)")
        #expect(r.stderr.contains("docs/RECOVERY.md"), r.comment)
        #expect(a.documents() == docs, "a refused run changes no document")
        #expect(a.run("status").exit == 1)

        // docs/RECOVERY.md: keep a copy, move the journal aside, reset-base, sync.
        #expect(CLI.runTool("/bin/cp", ["-a", a.path(".docsync"), box.path("backup")], in: box.root).exit == 0)
        #expect(rename(a.journal, a.journal + ".damaged") == 0)
        let reset = a.run("reset-base")
        #expect(reset.exit == 0, reset.comment)
        let synced = a.run("sync")
        #expect([0, 3].contains(synced.exit), synced.comment)
        #expect(b.run("sync").exit == 0)
        // Nothing lost: every version A saved is on B; the deletion of d2 comes back (the
        // documented price of reset-base), never the other way round.
        for (file, value) in [
            ("d1.json", "d1-A"), ("d3.json", "d3-0"), ("d4.json", "d4-A"), ("d5.json", "d5-A"), ("d6.json", "d6-A")
        ] {
            #expect(b.json(file)?["v"] as? String == value, "\(file) on B")
        }
        #expect(b.documents() == a.documents())
    }

    @Test("a torn last journal line is dropped with a warning and cut off; nothing else changes")
    func tornTail() {
        let box = Sandbox()
        let (a, b) = Self.setUpWithPending(box)
        var bytes = Files.bytes(a.journal)!
        bytes += Array("{\"kind\":\"create\",\"seq\":".utf8)
        try! Data(bytes).write(to: URL(fileURLWithPath: a.journal))
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(r.stderr.contains("cut short"), r.comment)
        #expect(Files.bytes(a.journal)?.last == 0x0A)
        Self.expectPendingWorkArrived(a, b)
    }

    // MARK: - State

    enum StateDamage: String, CaseIterable, Sendable { case truncated, flippedByte, emptied, deleted, sealOnly }

    @Test(
        "a damaged or missing state is refused (names the file, points to reset-base); reset-base then sync deletes nothing",
        arguments: StateDamage.allCases)
    func damagedState(_ damage: StateDamage) {
        let box = Sandbox("state-\(damage)")
        let (a, b) = Self.setUpWithPending(box)
        let state = a.path(".docsync/state")
        var bytes = Files.bytes(state)!
        switch damage {
        case .truncated: bytes = Array(bytes.prefix(bytes.count / 2))
        case .flippedByte: bytes[bytes.count / 3] ^= 0x20
        case .emptied: bytes = []
        case .deleted: break
        case .sealOnly: bytes = Array(bytes.suffix(72))
        }
        if damage == .deleted {
            a.remove(".docsync/state")
        } else {
            try! Data(bytes).write(to: URL(fileURLWithPath: state))
        }
        Self.expectRefusedThenReset(a, b, box, commands: ["sync", "status", "push"], naming: state)
    }

    /// Each of `commands` in `a` refuses to run (exit 1, naming `file` and reset-base) and
    /// changes nothing, locally or on the remote; then `reset-base` and a sync bring A's
    /// pending work to B with nothing deleted on either side.
    static func expectRefusedThenReset(
        _ a: Replica, _ b: Replica, _ box: Sandbox, commands: [String], naming file: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let docs = a.documents()
        let remoteDocs = Files.tree(box.remote, skipMetadata: true)
        for command in commands {
            let r = a.run(command)
            #expect(r.exit == 1, r.comment, sourceLocation: sourceLocation)
            #expect(
                r.stderr.contains(file) && r.stderr.contains("reset-base"), "names the file and the recovery: \(r)",
                sourceLocation: sourceLocation)
        }
        #expect(a.documents() == docs, sourceLocation: sourceLocation)
        #expect(
            Files.tree(box.remote, skipMetadata: true) == remoteDocs, "nothing reaches the remote",
            sourceLocation: sourceLocation)

        let reset = a.run("reset-base")
        #expect(reset.exit == 0, reset.comment, sourceLocation: sourceLocation)
        let synced = a.run("sync")
        #expect([0, 3].contains(synced.exit), synced.comment, sourceLocation: sourceLocation)
        #expect(b.run("sync").exit == 0, sourceLocation: sourceLocation)
        #expect(b.json("d1.json")?["v"] as? String == "d1-A", sourceLocation: sourceLocation)
        #expect(b.json("d4.json")?["v"] as? String == "d4-A", sourceLocation: sourceLocation)
        #expect(
            b.json("d3.json")?["v"] as? String == "d3-0", "nothing is deleted on either side",
            sourceLocation: sourceLocation)
        #expect(b.documents() == a.documents(), sourceLocation: sourceLocation)
        #expect(a.run("verify").exit == 0, sourceLocation: sourceLocation)
    }

    enum BaseFileDamage: String, CaseIterable, Sendable { case flippedByte, truncated, deleted }

    @Test(
        "a damaged or missing base file is refused where the run needs it (names it, points to reset-base); reset-base then sync deletes nothing",
        arguments: BaseFileDamage.allCases)
    func damagedBaseFile(_ damage: BaseFileDamage) throws {
        let box = Sandbox("base-file-\(damage)")
        let (a, b) = Self.setUpWithPending(box)
        let names = BaseFileTests.baseFiles(a)
        #expect(names.count == 1, "one base file beside the state: \(names)")
        let baseFile = a.path(".docsync/" + (names.first ?? "base-"))
        var bytes = try #require(Files.bytes(baseFile))
        switch damage {
        case .flippedByte: bytes[bytes.count / 2] ^= 0x20
        case .truncated: bytes = Array(bytes.prefix(bytes.count - 10))
        case .deleted: break
        }
        if damage == .deleted {
            #expect(unlink(baseFile) == 0)
        } else {
            try Data(bytes).write(to: URL(fileURLWithPath: baseFile))
        }
        // A has pending actions: every one of these runs needs the base.
        Self.expectRefusedThenReset(a, b, box, commands: ["sync", "status", "push", "verify", "log"], naming: baseFile)
    }

    // MARK: - Config

    enum ConfigDamage: String, CaseIterable, Sendable {
        case truncated, emptied, deleted, noReplicaId, badReplicaId, numberValue, badKind
    }

    @Test(
        "a damaged or missing config is refused (names the file, points to docs/RECOVERY.md); no malformed id reaches the remote",
        arguments: ConfigDamage.allCases)
    func damagedConfig(_ damage: ConfigDamage) {
        let box = Sandbox("config-\(damage)")
        let (a, _) = Self.setUpWithPending(box)
        let config = a.path(".docsync/config")
        let good = a.read(".docsync/config")!
        switch damage {
        case .truncated: a.write(".docsync/config", String(good.prefix(good.count / 2)))
        case .emptied: a.write(".docsync/config", "")
        case .deleted: a.remove(".docsync/config")
        case .noReplicaId: a.write(".docsync/config", "{\"remote.url\": \"\(box.remote)\", \"remote.kind\": \"dir\"}\n")
        case .badReplicaId:
            a.write(
                ".docsync/config",
                good.replacing(#/"core.replicaId" : "[^"]*"/#, with: "\"core.replicaId\" : \"NOT VALID\""))
        case .numberValue:
            a.write(".docsync/config", good.replacing(#/"remote.kind" : "dir"/#, with: "\"remote.kind\" : 1"))
        case .badKind:
            a.write(".docsync/config", good.replacing(#/"remote.kind" : "dir"/#, with: "\"remote.kind\" : \"ftp\""))
        }
        a.write("d7.json", "{\"v\": \"d7-A\"}\n")
        let docs = a.documents()
        let journal = Files.bytes(a.journal)
        let remoteBefore = Files.tree(box.remote, skipMetadata: false).filter { !$0.key.hasSuffix("push.lock") }
        for command in ["sync", "status", "verify"] {
            let r = a.run(command)
            #expect(r.exit == 1, r.comment)
            #expect(
                r.stderr.contains(config) && r.stderr.contains("docs/RECOVERY.md#a-damaged-or-missing-config"),
                "names the config and the recovery: \(r)")
        }
        // From a subfolder too: it is this tree's config that is broken, not "no tree here".
        a.write("sub/x.json", "{}")
        let inSub = CLI.run(["status"], in: a.path("sub"))
        #expect(inSub.stderr.contains(config), inSub.comment)
        a.remove("sub/x.json")
        // init must not write over the journal and state that are still there.
        let reinit = CLI.run(["init", "--remote", box.remote, "A"], in: box.root)
        #expect(reinit.exit == 1, reinit.comment)
        #expect(Files.bytes(a.journal) == journal)
        #expect(a.documents() == docs)
        #expect(
            Files.tree(box.remote, skipMetadata: false).filter { !$0.key.hasSuffix("push.lock") } == remoteBefore,
            "nothing reaches the remote")

        a.write(".docsync/config", good)
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        let b = box.clone("C")
        #expect(b.json("d7.json")?["v"] as? String == "d7-A")
        #expect(b.json("d1.json")?["v"] as? String == "d1-A" && !b.exists("d2.json"))
    }

    // MARK: - Clock

    enum ClockDamage: String, CaseIterable, Sendable { case garbled, emptied, deleted, truncated }

    @Test(
        "a damaged or lost clock is rebuilt from the state: a new edit still gets an id later than the version it replaces",
        arguments: ClockDamage.allCases)
    func damagedClock(_ damage: ClockDamage) {
        let box = Sandbox("clock-\(damage)")
        // A version from a replica whose clock runs a day ahead (a file copied from it
        // keeps its changesetId, and this tree's clock observes it).
        let ahead = UInt64(Date().timeIntervalSince1970 * 1000) + 86_400_000
        let futureId = String(format: "%012llx", ahead) + "-0000-0a0b0c0d0e0f"
        let a = box.initReplica(
            "A",
            files: [
                "f.json":
                    "{\n  \"refId\": \"from-the-future\",\n  \"changesetId\": \"\(futureId)\",\n  \"v\": \"f0\"\n}\n"
            ])
        a.sync()
        // A copy this tree has never seen gets an id of its own, after the one it carries.
        #expect((a.changesetId("f.json") ?? "") > futureId)
        let clock = a.path(".docsync/clock")
        switch damage {
        case .garbled: a.write(".docsync/clock", "\u{1}\u{2}garbage\n")
        case .emptied: a.write(".docsync/clock", "")
        case .deleted: a.remove(".docsync/clock")
        case .truncated: a.write(".docsync/clock", String(a.read(".docsync/clock")!.prefix(9)))
        }
        a.write("f.json", a.read("f.json")!.replacing("\"f0\"", with: "\"f1\""))
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        let newId = a.changesetId("f.json") ?? ""
        #expect(newId > futureId, "the edit's id \(newId) must sort after the version it replaces \(futureId)")
        if damage != .deleted { #expect(r.stderr.contains(clock + " was damaged"), r.comment) }
        let b = box.clone("B")
        #expect(b.json("f.json")?["v"] as? String == "f1")
        #expect(a.run("verify").exit == 0)
    }

    @Test("a garbled or deleted stat cache (index) is only a cache: nothing is recorded again, nothing changes")
    func damagedIndex() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n", "b.json": "{\"v\": 2}\n"])
        a.sync()
        let docs = a.documents()
        for damage in ["garbage\n", ""] {
            a.write(".docsync/index", damage)
            let r = a.run("sync")
            #expect(r.exit == 0 && r.stdout.contains("0 recorded, 0 pulled, 0 pushed"), r.comment)
        }
        a.remove(".docsync/index")
        #expect(a.sync().stdout.contains("0 recorded, 0 pulled, 0 pushed"))
        #expect(a.documents() == docs)
    }

    // MARK: - Partial remotes

    enum PartialRemote: String, CaseIterable, Sendable {
        case vanished, emptyFolder, metadataGone, generationGone, generationGarbled, feedGone, feedCut, formatGarbled,
            documentsGone
    }

    @Test(
        "a folder remote that vanished or exists only partly: 75 or a clear error, never 'everything was deleted'",
        arguments: PartialRemote.allCases)
    func partialFolderRemote(_ damage: PartialRemote) throws {
        let box = Sandbox("partial-\(damage)")
        box.remoteFormat1 = true  // about format 1's own files
        let a = box.initReplica(
            "A", files: ["a.json": "{\"v\": \"a\"}\n", "b.json": "{\"v\": \"b\"}\n", "c/d.json": "{\"v\": \"d\"}\n"])
        a.sync()
        let backup = box.path("remote-backup")
        #expect(CLI.runTool("/bin/cp", ["-a", box.remote, backup], in: box.root).exit == 0)
        let meta = box.remote + "/.docsync"
        let fm = FileManager.default
        switch damage {
        case .vanished: try fm.removeItem(atPath: box.remote)
        case .emptyFolder:
            try fm.removeItem(atPath: box.remote)
            try fm.createDirectory(atPath: box.remote, withIntermediateDirectories: false)
        case .metadataGone: try fm.removeItem(atPath: meta)
        case .generationGone: try fm.removeItem(atPath: meta + "/generation")
        case .generationGarbled: try Data("x y z\n".utf8).write(to: URL(fileURLWithPath: meta + "/generation"))
        case .feedGone: try fm.removeItem(atPath: meta + "/feed")
        case .feedCut: #expect(truncate(meta + "/feed", 10) == 0)
        case .formatGarbled: try Data("something else\n".utf8).write(to: URL(fileURLWithPath: meta + "/format"))
        case .documentsGone:
            for f in ["a.json", "b.json", "c/d.json"] { try fm.removeItem(atPath: box.remote + "/" + f) }
        }
        let docs = a.documents()
        a.write("new.json", "{\"v\": \"new\"}\n")
        let r = a.run("sync")
        switch damage {
        case .vanished, .emptyFolder, .metadataGone:
            #expect(r.exit == 75, r.comment)
            #expect(r.stderr.contains("unreachable"), r.comment)
        case .documentsGone:
            #expect(r.exit == 0, r.comment)
            let verify = a.run("verify")
            #expect(
                verify.exit == 1
                    && (verify.stdout + verify.stderr).contains("a.json is missing from the remote folder"),
                "verify sees the missing copies: \(verify)")
            let b = box.clone("B")
            #expect(b.json("a.json")?["v"] as? String == "a", "readers still get every version from .docsync/objects")
            #expect(b.json("c/d.json")?["v"] as? String == "d")
        default:
            #expect(r.exit == 1, r.comment)
            let named = ["generation", "feed", "format"].contains { r.stderr.contains(meta + "/" + $0) }
            #expect(named, "the error names the remote's damaged file: \(r)")
        }
        var expected = docs
        expected["new.json"] = a.bytes("new.json")
        #expect(a.documents() == expected, "nothing may be deleted or changed locally")
        let pending = a.run("log", "--pending").stdout
        #expect(!pending.contains("delete"), "no deletion may be recorded: \(pending)")
        if damage != .documentsGone {
            #expect(!fm.fileExists(atPath: box.remote + "/new.json"), "nothing is written into a damaged remote")
            try? fm.removeItem(atPath: box.remote)
            #expect(rename(backup, box.remote) == 0)
        }
        let back = a.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(Files.bytes(box.remote + "/new.json") == a.bytes("new.json"))
        if damage == .documentsGone {
            // Pushing a document again writes its readable copy again.
            for f in ["a.json", "b.json", "c/d.json"] {
                a.write(f, a.read(f)!.replacing("\"v\": \"", with: "\"v\": \"2-"))
            }
            #expect(a.run("sync").exit == 0)
        }
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)
    }

    enum PartialGit: String, CaseIterable, Sendable { case vanished, recreatedEmpty, emptyFolder }

    @Test(
        "a git remote that vanished or was re-created empty: a clear error, nothing deleted; restored, it syncs",
        arguments: PartialGit.allCases)
    func partialGitRemote(_ damage: PartialGit) throws {
        let box = Sandbox("partial-git-\(damage)")
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        for f in ["a.json", "b.json"] { a.write(f, "{\"v\": \"\(f)\"}\n") }
        #expect(CLI.run(["init", "--remote", repo, "A"], in: box.root).exit == 0)
        a.sync()
        #expect(rename(repo, repo + ".away") == 0)
        switch damage {
        case .vanished: break
        case .recreatedEmpty: Reliability.makeBareRepo(repo)
        case .emptyFolder: try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: false)
        }
        let docs = a.documents()
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains(repo), r.comment)
        #expect(r.stderr.contains("no git repository there") || r.stderr.contains("disappeared"), r.comment)
        #expect(a.documents() == docs)
        #expect(!a.run("log", "--pending").stdout.contains("delete"))
        try? FileManager.default.removeItem(atPath: repo)
        #expect(rename(repo + ".away", repo) == 0)
        a.write("c.json", "{\"v\": \"c\"}\n")
        let back = a.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(a.run("verify").exit == 0)
        Reliability.fsck(repo)
    }

    @Test(
        "lock files a killed run left in the git cache are removed by the next writing run, not taken for an unreachable remote"
    )
    func leftoverGitCacheLocks() throws {
        let box = Sandbox()
        let (repo, a) = Self.gitReplicaHoldingOneDocument(box)
        // What libgit2 leaves when killed between writing a ref's lock and renaming it.
        let cache = a.path(".docsync/git")
        let locks = ["refs/docsync/outgoing.lock", "refs/remotes/origin/main.lock", "packed-refs.lock", "HEAD.lock"]
        for lock in locks {
            try FileManager.default.createDirectory(
                atPath: cache + "/" + (lock as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: cache + "/" + lock, contents: Data("0000\n".utf8)))
        }
        // A read-only command holds no tree lock: it must leave them alone.
        _ = a.run("status")
        #expect(locks.allSatisfy { FileManager.default.fileExists(atPath: cache + "/" + $0) })

        a.write("a.json", "{\"v\": 2}\n")
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(r.stderr.contains("removed a lock file a killed run left behind"), r.comment)
        #expect(locks.allSatisfy { !FileManager.default.fileExists(atPath: cache + "/" + $0) })
        let b = box.replica("B")
        #expect(CLI.run(["clone", repo, "B"], in: box.root).exit == 0)
        #expect(b.json("a.json")?["v"] as? Int == 2)
        Reliability.fsck(repo)
    }
}

extension CorruptionTests {
    @Test(
        "a push killed while libgit2 wrote its pack leaves a partial pack in the git cache; the next sync removes it and lands every document"
    )
    func partialPackInTheGitCache() throws {
        let box = Sandbox()
        let (repo, a) = Self.gitReplicaHoldingOneDocument(box)
        // More new files than git keeps loose: their blobs go into one pack.
        for i in 0..<150 { a.write("many/doc\(i).json", "{\"n\": \(i)}\n") }
        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": "git.pack-appended"])
        #expect(killed.exit == 137, "the push never reached its pack: \(killed.comment)")
        let packs = a.path(".docsync/git/objects/pack")
        let partial = (try FileManager.default.contentsOfDirectory(atPath: packs)).filter { $0.hasPrefix("pack_git2_") }
        #expect(partial.count == 1, "the kill left libgit2's partial pack: \(partial)")

        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(r.stderr.contains("removed a partial pack file a killed run left behind"), r.comment)
        #expect(
            (try FileManager.default.contentsOfDirectory(atPath: packs)).filter { $0.hasPrefix("pack_git2_") }.isEmpty)
        let b = box.replica("B")
        #expect(CLI.run(["clone", repo, "B"], in: box.root).exit == 0)
        for i in [0, 77, 149] { #expect(b.json("many/doc\(i).json")?["n"] as? Int == i) }
        #expect(a.run("verify").exit == 0)
        Reliability.fsck(repo)
        Reliability.fsck(a.path(".docsync/git"))
    }

    /// A bare repository and replica A on it, synced, holding `a.json` with `"v": 1`.
    static func gitReplicaHoldingOneDocument(_ box: Sandbox) -> (repo: String, replica: Replica) {
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("a.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", repo, "A"], in: box.root).exit == 0)
        a.sync()
        return (repo, a)
    }

    /// What git leaves when killed between locking the branch's ref and renaming the lock:
    /// `lock`, dated `age` seconds ago; then `a.json`'s `v` edited from `edit - 1` to `edit`.
    static func leaveRefLock(_ lock: String, secondsOld age: Double, thenEdit a: Replica, to edit: Int) throws {
        #expect(FileManager.default.createFile(atPath: lock, contents: Data()))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: lock)
        a.write("a.json", a.read("a.json")!.replacing("\"v\": \(edit - 1)", with: "\"v\": \(edit)"))
    }

    /// `a.json` on the branch `main` of the bare repository `repo`, read with git.
    static func shownOnMain(_ repo: String) -> String {
        CLI.runTool("/usr/bin/git", ["--git-dir", repo, "show", "main:a.json"], in: "/", env: Reliability.gitEnv).stdout
    }

    @Test(
        "a branch ref lock a killed push left in a local git remote is waited for while young, then removed; the push lands"
    )
    func leftoverRefLockInALocalGitRemote() throws {
        let box = Sandbox()
        let (repo, a) = Self.gitReplicaHoldingOneDocument(box)
        let lock = repo + "/refs/heads/main.lock"
        for (age, edit) in [(60.0, 2), (7.0, 3)] {
            try Self.leaveRefLock(lock, secondsOld: age, thenEdit: a, to: edit)
            let started = Date()
            let r = a.run("sync")
            #expect(r.exit == 0, "lock \(Int(age)) s old: \(r.comment)")
            #expect(!FileManager.default.fileExists(atPath: lock))
            if age < 10 {
                #expect(Date().timeIntervalSince(started) >= 2, "a young lock is waited for, not broken at once")
            }
            let plain = Self.shownOnMain(repo)
            #expect(plain.contains("\"v\": \(edit)"), "\(plain)")
        }
        Reliability.fsck(repo)
    }

    @Test(
        "a branch locked in a repository behind git daemon: the push says the server refused it (75), not that the remote kept changing; unlocked, it lands"
    )
    func lockedBranchBehindGitDaemon() throws {
        let box = Sandbox()
        let daemon = try GitDaemon()
        let url = try daemon.makeRepository("records")
        let a = box.replica("A")
        a.write("a.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", url, "A"], in: box.root).exit == 0)
        a.sync()
        // What a push that crashed on the server while updating the branch leaves there.
        let lock = daemon.repositoryPath("records") + "/refs/heads/main.lock"
        #expect(FileManager.default.createFile(atPath: lock, contents: Data()))
        a.write("a.json", a.read("a.json")!.replacing("\"v\": 1", with: "\"v\": 2"))
        let refused = a.run("sync")
        #expect(refused.exit == 75, refused.comment)
        #expect(
            refused.stderr.contains("failed to update ref") && refused.stderr.contains("main.lock")
                && !refused.stderr.contains("kept changing"), refused.comment)
        #expect(unlink(lock) == 0)
        a.sync()
        let plain = CLI.runTool(
            "/usr/bin/git", ["--git-dir", daemon.repositoryPath("records"), "show", "main:a.json"], in: "/",
            env: Reliability.gitEnv
        ).stdout
        #expect(plain.contains("\"v\": 2"), "\(plain)")
    }
}

extension Reliability {
    /// The first 16 hex digits of the SHA-256 of `text` (a journal line's checksum).
    static func sha256Prefix(_ text: String) -> String {
        let r = CLI.runTool(
            "/usr/bin/python3",
            ["-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])", text], in: "/")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
