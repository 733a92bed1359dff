// SIGKILL `docsync sync` at random moments of large syncs (300 documents, up to 120
// changes per run, pulls and pushes), sometimes twice in a row so recovery itself is
// killed, then check that nothing was lost and everything converges. The crash-point
// tests (CrashKillTests) stop at named steps; these stop anywhere.
//
// Short mode: 10 kills per remote kind. `DOCSYNC_RELIABILITY_LONG=1`: 200 per kind. A kill
// counts only if the run died of it (exit 137); the test runs until that many landed.
// Replay a run with `DOCSYNC_KILL_SEED=<seed>` (printed with the figures).

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Reliability: SIGKILL at random times", .serialized)
struct RandomKillTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    static var kills: Int {
        if let n = ProcessInfo.processInfo.environment["DOCSYNC_KILLS"].flatMap(Int.init) { return n }
        return Reliability.long ? 200 : 10
    }

    struct Rng {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E3779B97F4A7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
            z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    /// One document as its owner last left it.
    struct Doc {
        var path: String
        var value: String
        var owner: String
    }

    /// What a killed run got to, judged from what it appended to the journal (and, on a
    /// folder remote, whether it died holding the remote's lock).
    static func phase(journalBefore: Int, journal: String, remoteLock: Bool) -> String {
        guard let bytes = Files.bytes(journal), bytes.count > journalBefore else {
            return remoteLock ? "push-holding-remote-lock" : "scan-stamp"
        }
        let added = String(decoding: bytes[journalBefore...], as: UTF8.self)
        if remoteLock { return "push-holding-remote-lock" }
        if added.contains("\"reason\":\"pushed\"") { return "after-push" }
        if added.contains("\"kind\":\"apply\"") || added.contains("\"kind\":\"seen\"") { return "pull" }
        if added.contains("\"kind\":\"create\"") || added.contains("\"kind\":\"update\"")
            || added.contains("\"kind\":\"delete\"")
            || added.contains("\"kind\":\"rename\"")
        {
            return "recorded-before-push"
        }
        return "other"
    }

    @Test(
        "SIGKILL at random times during large syncs: nothing lost, replicas converge, verify passes",
        arguments: Kind.allCases)
    func randomKills(_ kind: Kind) {
        let seed =
            ProcessInfo.processInfo.environment["DOCSYNC_KILL_SEED"].flatMap(UInt64.init)
            ?? (kind == .dir ? 0xD0C5_0001 : 0xD0C5_0002)
        var rng = Rng(state: seed)
        let context = "seed \(seed), \(kind.rawValue) remote; replay with DOCSYNC_KILL_SEED=\(seed)"
        let box = Sandbox("random-kill-\(kind)")
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        let b = box.replica("B")
        var docs: [String: Doc] = [:]  // key → document
        let pad = String(repeating: "x", count: 400)
        func text(_ value: String, _ owner: String) -> String {
            "{\n  \"v\": \"\(value)\",\n  \"owner\": \"\(owner)\",\n  \"pad\": \"\(pad)\"\n}\n"
        }
        for i in 0..<300 {
            let owner = i < 150 ? "A" : "B"
            docs["doc\(i)"] = Doc(path: "f\(i % 10)/doc\(i).json", value: "doc\(i)-0", owner: owner)
            a.write("f\(i % 10)/doc\(i).json", text("doc\(i)-0", owner))
        }
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)

        var counter = 0
        func token(_ prefix: String) -> String {
            counter += 1
            return "\(prefix)\(counter)"
        }
        func setValue(_ r: Replica, _ key: String, _ value: String) {
            let path = docs[key]!.path
            r.write(path, r.read(path)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
            docs[key]!.value = value
        }
        /// The owner's edits: changes, a creation, a deletion and a move.
        func mutate(_ r: Replica, owner: String, edits: Int) {
            let mine = docs.filter { $0.value.owner == owner }.keys.sorted()
            guard !mine.isEmpty else { return }
            for _ in 0..<edits { setValue(r, mine[rng.below(mine.count)], token("\(owner.lowercased())v")) }
            let key = token("\(owner.lowercased())new")
            let doc = Doc(path: "f\(rng.below(10))/\(key).json", value: key, owner: owner)
            r.write(doc.path, text(doc.value, owner))
            docs[key] = doc
            if rng.chance(70) {
                let gone = mine[rng.below(mine.count)]
                try? FileManager.default.removeItem(atPath: r.path(docs[gone]!.path))
                docs[gone] = nil
            }
            if rng.chance(70), let moving = mine.filter({ docs[$0] != nil }).randomElement(using: &rng) {
                let target = "f\(rng.below(10))/m-\(token("m")).json"
                #expect(rename(r.path(docs[moving]!.path), r.path(target)) == 0)
                docs[moving]!.path = target
            }
        }

        var durations: [Double] = []
        var phases: [String: Int] = [:]
        var killed = 0, completedBeforeKill = 0, runs = 0
        var killDelays: [Double] = []
        /// Starts A's sync and SIGKILLs it after a random part of a typical run's duration;
        /// a run that died of the SIGKILL (exit 137) counts as a kill, and where it landed
        /// (time after the start, and the phase its journal shows) is recorded.
        func killedRun() {
            let typical = durations.isEmpty ? 0.4 : durations.sorted()[durations.count / 2]
            let delay = (0.15 + Double(rng.below(1000)) / 1000) * typical
            let journalBefore = Files.bytes(a.journal)?.count ?? 0
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["sync", "--quiet"]
            process.currentDirectoryURL = URL(fileURLWithPath: a.root)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try! process.run()
            runs += 1
            usleep(useconds_t(delay * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
                killed += 1
                let lock = kind == .dir && FileManager.default.fileExists(atPath: box.remote + "/.docsync/lock")
                let phase = Self.phase(journalBefore: journalBefore, journal: a.journal, remoteLock: lock)
                phases[phase, default: 0] += 1
                killDelays.append(delay)
                Reliability.figure(
                    "random-kill kind=\(kind.rawValue) n=\(killed) after_ms=\(Int(delay * 1000)) "
                        + "typical_ms=\(Int(typical * 1000)) phase=\(phase)")
            } else {
                completedBeforeKill += 1
                #expect(
                    [0, 75].contains(process.terminationStatus),
                    "a run that finished before the kill: exit \(process.terminationStatus), \(context)")
            }
        }
        func cleanSync(_ r: Replica, _ why: String) {
            let started = Date()
            let result = r.run("sync")
            runs += 1
            if r.root == a.root { durations.append(Date().timeIntervalSince(started)) }
            #expect(result.exit == 0, "\(why), \(context): \(result)")
        }

        // The first, large sync (300 new documents) is killed a few times before it may finish.
        durations.append(0.8)
        for _ in 0..<min(3, Self.kills) { killedRun() }
        cleanSync(a, "first sync after kills")
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)

        // Keep going until the announced number of kills landed; bounded, in case runs keep
        // finishing before their kill (then the count check below fails).
        var iteration = 0
        while killed < Self.kills && iteration < Self.kills * 6 + 10 {
            iteration += 1
            mutate(a, owner: "A", edits: rng.chance(25) ? 60 + rng.below(60) : 5 + rng.below(20))
            if rng.chance(40) {
                mutate(b, owner: "B", edits: 3 + rng.below(15))
                cleanSync(b, "B's sync")
            }
            killedRun()
            if rng.chance(40) { killedRun() }  // kill the recovery too
            if rng.chance(60) { cleanSync(a, "A's sync after a kill") }
        }

        let shortfall =
            "only \(killed) of \(Self.kills) runs died of the SIGKILL (\(completedBeforeKill) finished first)"
        #expect(killed >= Self.kills, "\(shortfall), \(context)")

        // Quiesce and check.
        for r in [a, b, a, b] { cleanSync(r, "final sync") }
        let first = a.documents()
        #expect(first == b.documents(), "replicas differ, \(context)")
        #expect(
            Set(first.keys) == Set(docs.values.map(\.path)),
            "documents: extra \(Set(first.keys).subtracting(docs.values.map(\.path)).sorted()), missing \(Set(docs.values.map(\.path)).subtracting(first.keys).sorted()), \(context)"
        )
        var lost: [String] = []
        for (key, doc) in docs.sorted(by: { $0.key < $1.key }) where (a.json(doc.path)?["v"] as? String) != doc.value {
            lost.append(
                "\(key) at \(doc.path): expected \(doc.value), found \(a.json(doc.path)?["v"] as? String ?? "nothing")")
        }
        #expect(lost.isEmpty, "versions lost: \(lost.prefix(10)), \(context)")
        for r in [a, b] {
            #expect(
                r.conflictCopies().isEmpty,
                "owners edit disjoint documents: no conflict expected in \(r.root), \(context)")
            #expect(
                journalProblems(r.journal).isEmpty, "\(r.root): \(journalProblems(r.journal).prefix(5)), \(context)")
            let verify = r.run("verify")
            #expect(verify.exit == 0, "\(verify), \(context)")
            let leftovers = Files.list(r.root, skipMetadata: true).filter { $0.contains(".docsync-tmp-") }
            #expect(leftovers.isEmpty, "temporary files left in the user's folders: \(leftovers.prefix(5))")
        }
        var remoteLeftovers = 0
        if kind == .dir {
            #expect(
                Files.tree(box.remote, skipMetadata: true).filter { !$0.key.contains(".docsync-tmp-") } == first,
                "the remote folder holds the documents")
            // A push removes those in the folders it writes to; count what is left.
            remoteLeftovers = Files.list(box.remote, skipMetadata: true).filter { $0.contains(".docsync-tmp-") }.count
        } else {
            Reliability.fsck(remote)
        }
        let phaseText = phases.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        let delaysMs = killDelays.sorted().map { Int($0 * 1000) }
        let delayText = delaysMs.isEmpty ? "-" : "\(delaysMs.first!)/\(delaysMs[delaysMs.count / 2])/\(delaysMs.last!)"
        Reliability.figure(
            "random-kills kind=\(kind.rawValue) seed=\(seed) kills=\(killed) wanted=\(Self.kills) "
                + "finished_before_kill=\(completedBeforeKill) runs=\(runs) docs=\(docs.count) "
                + "remote_tmp_left=\(remoteLeftovers) kill_after_ms_min/median/max=\(delayText) phases=\(phaseText)")
    }
}

extension RandomKillTests.Rng: RandomNumberGenerator {}

/// What the random kills found: a run killed after the remote took its push but before it
/// journaled that, then an edit (here: undoing the pushed one) before the next run.
@Suite("Reliability: an edit after a push that landed but was not journaled")
struct LandedPushTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var kind: RandomKillTests.Kind
        var point: String
        var testDescription: String { "\(kind.rawValue) remote, killed at \(point)" }
    }

    static let cases = [
        Case(kind: .dir, point: "push.after-remote-commit"), Case(kind: .git, point: "push.after-remote-commit"),
        Case(kind: .git, point: "remote.after-feed")
    ]

    @Test(
        "the next sync takes the landed version as the base: a revert is kept, a further edit is no conflict",
        arguments: cases)
    func editAfterLandedPush(_ c: Case) {
        let box = Sandbox("landed-\(c.kind.rawValue)-\(c.point)")
        let remote = Reliability.remote(box, git: c.kind == .git)
        let a = box.replica("A")
        a.write("d.json", "{\n  \"a\": 1,\n  \"b\": 1\n}\n")
        a.write("e.json", "{\n  \"v\": \"e0\"\n}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        a.write("d.json", a.read("d.json")!.replacing("\"a\": 1", with: "\"a\": 2"))
        a.write("e.json", a.read("e.json")!.replacing("\"v\": \"e0\"", with: "\"v\": \"e1\""))
        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": c.point])
        #expect(killed.exit == 137, killed.comment)
        // The user undoes one edit and makes another before the next run.
        a.write("d.json", a.read("d.json")!.replacing("\"a\": 2", with: "\"a\": 1"))
        a.write("e.json", a.read("e.json")!.replacing("\"v\": \"e1\"", with: "\"v\": \"e2\""))
        let next = a.run("sync")
        #expect(next.exit == 0, "no conflict with our own landed push: \(next)")
        #expect(a.json("d.json")?["a"] as? Int == 1, "the revert must survive: \(a.read("d.json") ?? "-")")
        #expect(a.json("e.json")?["v"] as? String == "e2")
        #expect(a.conflictCopies().isEmpty)
        #expect(b.run("sync").exit == 0)
        #expect(b.json("d.json")?["a"] as? Int == 1 && b.json("e.json")?["v"] as? String == "e2")
        #expect(b.documents() == a.documents())
        #expect(journalProblems(a.journal).isEmpty, "\(journalProblems(a.journal))")
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment)
        }
    }
}
