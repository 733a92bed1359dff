// Machines whose clocks are off: docsync run under libfaketime (`faketime -f +1d`), its
// own clock a day ahead or behind, while the files' times come from the real one (as a
// NAS's server dates what its clients write; NO_FAKE_STAT keeps them). What is judged by age on a shared remote is
// judged by the share's clock.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Clocks a day off", .serialized)
struct ClockSkewTests {
    /// `docsync args` in `r`, its clock moved by `offset` (libfaketime's `+1d`, `-1d`).
    static func run(_ r: Replica, clock offset: String, _ args: [String]) throws -> RunResult {
        try Prerequisite.faketime.require()
        // NO_FAKE_STAT: the files keep the times the kernel gave them (libfaketime would
        // move the times some stat calls return, and not others).
        return CLI.runTool(
            "/usr/bin/faketime", ["-f", offset, CLI.binary] + args, in: r.root, env: ["NO_FAKE_STAT": "1"])
    }

    /// A remote lock as another machine's live push holds it, dated `secondsAgo` by the real clock.
    static func plantForeignLock(_ box: Sandbox, secondsAgo: Int) {
        let lock = box.remote + "/.docsync/lock"
        #expect(
            FileManager.default.createFile(
                atPath: lock,
                contents: Data(#"{"host":"elsewhere.example","pid":4242,"replica":"0123456789ab","time":0}"#.utf8)))
        let t = timespec(tv_sec: time(nil) - secondsAgo, tv_nsec: 0)
        var times = [t, t]
        #expect(utimensat(AT_FDCWD, lock, &times, 0) == 0)
    }

    @Test(
        "a replica a day behind never issues one changesetId twice: resolve --take remote after override takes the remote's values",
        arguments: SendOnlyTests.Kind.allCases)
    func idsIssuedAreNeverIssuedAgain(_ kind: SendOnlyTests.Kind) throws {
        let box = Sandbox("clock-behind-ids-\(kind)")
        let (_, full, exporter) = SendOnlyTests.fullAndExporter(box, kind, names: ["a"])
        SendOnlyTests.set(full, "a.json", "n", 2)
        full.sync()
        SendOnlyTests.set(exporter, "a.json", "m", 3)
        // Behind: every id it makes is dated by the newest id it saw (full's), one counter on.
        #expect(try Self.run(exporter, clock: "-1d", ["sync"]).exit == 0)
        let over = try Self.run(exporter, clock: "-1d", ["override"])
        #expect(over.exit == 0, over.comment)
        let overridden = exporter.json("a.json")?["changesetId"] as? String
        let taken = try Self.run(exporter, clock: "-1d", ["resolve", "a.json", "--take", "remote"])
        #expect(taken.exit == 0, taken.comment)
        let resolved = exporter.json("a.json")?["changesetId"] as? String
        #expect(resolved != overridden, "a new version, a new id: \(overridden ?? "-") twice")
        #expect(
            SendOnlyTests.number(exporter, "a.json", "n") == 2 && SendOnlyTests.number(exporter, "a.json", "m") == 1,
            "the remote's values taken: \(taken)")
        #expect(try Self.run(exporter, clock: "-1d", ["sync"]).exit == 0)
        full.sync()
        #expect(SendOnlyTests.number(full, "a.json", "n") == 2 && SendOnlyTests.number(full, "a.json", "m") == 1)
    }

    @Test(
        "a remote lock's age is read off the share's clock: a machine a day ahead waits for a live lock, one a day behind breaks a dead one"
    )
    func lockAgeByTheSharesClock() throws {
        let box = Sandbox()
        box.remoteFormat1 = true  // the format with one lock for every push
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 0}\n"])
        a.sync()
        a.ok("config", "remote.lockWaitSeconds", "1")
        a.ok("config", "remote.lockStaleSeconds", "600")

        // Another machine's push holds the lock, taken a second ago.
        Self.plantForeignLock(box, secondsAgo: 1)
        a.write("a.json", a.read("a.json")!.replacing("\"v\": 0", with: "\"v\": 1"))
        let ahead = try Self.run(a, clock: "+1d", ["sync"])
        #expect(ahead.exit == 75, "busy, not a lock a day old: \(ahead.comment)")
        #expect(
            FileManager.default.fileExists(atPath: box.remote + "/.docsync/lock"),
            "the live lock is still there")
        #expect(Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)?["v"] as? Int == 0, "nothing pushed")

        // Left an hour ago by a push that died: stale by the share's clock, whatever this one says.
        Self.plantForeignLock(box, secondsAgo: 3600)
        let behind = try Self.run(a, clock: "-1d", ["sync"])
        #expect(behind.exit == 0, "the dead lock is broken: \(behind.comment)")
        #expect(Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)?["v"] as? Int == 1)
        #expect(a.run("verify").exit == 0)
    }

    @Test(
        "a collision between a correct clock and one a day off goes by the clocks: ahead wins, behind loses, the loser is kept and both converge",
        arguments: ["+1d", "-1d"])
    func collisionUnderSkew(offset: String) throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["d.json": "{\n  \"x\": \"base\"\n}\n"])
        a.sync()
        let b = ReliabilityConcurrencyTests.clone(box, "B", remote: box.remote)
        // A saves first (real time), B a moment later, its clock a day off.
        a.write("d.json", a.read("d.json")!.replacing("\"x\": \"base\"", with: "\"x\": \"fromA\""))
        usleep(20_000)
        b.write("d.json", b.read("d.json")!.replacing("\"x\": \"base\"", with: "\"x\": \"fromB\""))
        #expect(a.run("sync").exit == 0)
        let skewed = try Self.run(b, clock: offset, ["sync"])
        #expect(skewed.exit == 3, "a recorded conflict: \(skewed.comment)")
        // SPEC: the physical part of a changesetId is when the file was saved, never later
        // than now: a day ahead, B's save is the later one; a day behind, its "now" is
        // before A's save and B's save sorts right after the version it was edited from.
        let winner = offset.hasPrefix("+") ? "fromB" : "fromA", loser = offset.hasPrefix("+") ? "fromA" : "fromB"
        #expect(b.json("d.json")?["x"] as? String == winner, "\(offset): \(b.read("d.json") ?? "")")
        let listed =
            (JSONHelp.parse(b.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(listed.count == 1, "\(offset): \(listed)")
        let stored = (listed.first?["file"] as? String).flatMap { b.json($0) }
        #expect(stored?["x"] as? String == loser, "\(offset): the losing save is kept: \(String(describing: stored))")
        #expect(a.run("sync").exit == 3 || a.json("d.json")?["x"] as? String == winner)
        #expect(try Self.run(b, clock: offset, ["sync"]).exit == 0)
        #expect(a.run("sync").exit == 0)
        #expect(a.json("d.json")?["x"] as? String == winner && b.json("d.json")?["x"] as? String == winner)
        #expect(a.run("verify").exit == 0)
    }

    @Test(
        "a branch lock a killed push left in a git remote by path is aged by the share's clock: broken by a machine a day behind, waited for by one a day ahead"
    )
    func refLockAgeByTheSharesClock() throws {
        let box = Sandbox()
        let (repo, a) = CorruptionTests.gitReplicaHoldingOneDocument(box)
        let lock = repo + "/refs/heads/main.lock"
        for (offset, age, edit) in [("-1d", 60.0, 2), ("+1d", 5.0, 3)] {
            try CorruptionTests.leaveRefLock(lock, secondsOld: age, thenEdit: a, to: edit)
            let started = Date()
            let r = try Self.run(a, clock: offset, ["sync"])
            #expect(r.exit == 0, "\(offset), lock \(Int(age)) s old: \(r.comment)")
            if offset.hasPrefix("+") {
                #expect(Date().timeIntervalSince(started) >= 2, "a young lock is waited for, not taken for a day old")
            }
            let shown = CorruptionTests.shownOnMain(repo)
            #expect(shown.contains("\"v\": \(edit)"), "\(offset): \(shown)")
        }
        let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: repo)) ?? []).filter {
            $0.hasPrefix(".docsync-tmp")
        }
        #expect(leftovers.isEmpty, "the clock probe is removed: \(leftovers)")
        Reliability.fsck(repo)
    }
}
