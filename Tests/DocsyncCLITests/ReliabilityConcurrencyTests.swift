// Many docsync processes at once: on one tree (the tree lock), and from several trees
// into one remote (the remote lock on a folder, non-fast-forward retries on git served by
// `git daemon` on 127.0.0.1). Nothing may be lost or recorded twice, every run must exit
// 0 or 75, and everything must converge.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Reliability: concurrent runs", .serialized)
struct ReliabilityConcurrencyTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// A remote of this kind inside the sandbox: a folder, or a local bare repository.
    static func localRemote(_ box: Sandbox, _ kind: Kind) -> String {
        guard kind == .git else { return box.remote }
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        return repo
    }

    /// Makes replica `name` with `files` on `remote` (init) and syncs it.
    static func initAndSync(_ box: Sandbox, _ name: String, remote: String, files: [String: String]) -> Replica {
        let r = box.replica(name)
        for (path, text) in files { r.write(path, text) }
        let made = CLI.run(["init", "--remote", remote, "--name", name, name], in: box.root)
        #expect(made.exit == 0, made.comment)
        r.sync()
        return r
    }

    static func clone(_ box: Sandbox, _ name: String, remote: String) -> Replica {
        let made = CLI.run(["clone", "--name", name, remote, name], in: box.root)
        #expect(made.exit == 0, made.comment)
        return box.replica(name)
    }

    static func setField(_ r: Replica, _ file: String, _ key: String, _ value: String) {
        let pattern = try! Regex("\"\(key)\": \"[^\"]*\"")
        r.write(file, r.read(file)!.replacing(pattern, with: "\"\(key)\": \"\(value)\""))
    }

    // MARK: - 8 runs on one tree

    @Test(
        "8 syncs started at once on one tree with edits pending: each exits 0 or 75, every edit is recorded and sent exactly once",
        arguments: Kind.allCases)
    func eightSyncsOnOneTree(_ kind: Kind) {
        let box = Sandbox("eight-\(kind)")
        let remote = Self.localRemote(box, kind)
        var files: [String: String] = [:]
        for i in 0..<20 { files["doc\(i).json"] = "{\n  \"v\": \"doc\(i)-0\"\n}\n" }
        let a = Self.initAndSync(box, "A", remote: remote, files: files)
        var totalRuns = 0, exit75 = 0

        // Round 1 waits for the lock as cron would (lock.waitSeconds 5); round 2 does not
        // wait at all, so most runs find the tree busy and must exit 75.
        for (round, wait) in [(1, "30"), (2, "0")] {
            a.ok("config", "lock.waitSeconds", wait)
            var expectedActions = 0
            for i in 0..<6 {
                Self.setField(a, "doc\(i + round * 6).json", "v", "doc\(i + round * 6)-\(round)")
                expectedActions += 1
            }
            for i in 0..<4 {
                a.write("new\(round)-\(i).json", "{\"v\": \"new\(round)-\(i)\"}\n")
                expectedActions += 1
            }
            a.remove("doc\(round).json")
            expectedActions += 1
            #expect(rename(a.path("doc\(round + 17).json"), a.path("moved\(round).json")) == 0)
            expectedActions += 1

            let results = launchTogether(Array(repeating: (["sync", "--json"], a.root), count: 8))
            totalRuns += results.count
            for r in results { #expect(r.exit == 0 || r.exit == 75, "round \(round): \(r)") }
            exit75 += results.filter { $0.exit == 75 }.count
            let worked = results.filter { $0.exit == 0 }
            #expect(!worked.isEmpty, "round \(round): at least one run must get the tree")
            let recorded = worked.map { Reliability.count($0, "recorded") }.reduce(0, +)
            let pushed = worked.map { Reliability.count($0, "pushed") }.reduce(0, +)
            #expect(recorded == expectedActions, "round \(round): each change is recorded exactly once: \(results)")
            #expect(pushed == expectedActions, "round \(round): each change is pushed exactly once: \(results)")
            for r in results where r.exit == 75 {
                #expect(r.stderr.contains("another docsync run"), "a busy tree says so: \(r)")
            }
        }

        #expect(journalProblems(a.journal).isEmpty, "journal: \(journalProblems(a.journal))")
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)
        #expect(a.run("log", "--pending").stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
        if kind == .dir {
            #expect(Files.tree(box.remote, skipMetadata: true) == a.documents(), "the remote holds every edit")
        }
        let b = Self.clone(box, "B", remote: remote)
        #expect(b.documents() == a.documents(), "a fresh clone holds every edit")
        #expect(b.json("new2-3.json")?["v"] as? String == "new2-3")
        #expect(b.json("doc17.json")?["v"] as? String == "doc17-2")
        #expect(!b.exists("doc2.json") && b.exists("moved2.json"))
        if kind == .git { Reliability.fsck(remote) }
        Reliability.figure("concurrency one-tree kind=\(kind.rawValue) runs=\(totalRuns) exit75=\(exit75)")
    }

    // MARK: - 4 replicas, one remote, several rounds

    enum RemoteSetup: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case dir, gitPath, gitDaemon
        var testDescription: String {
            switch self {
            case .dir: "folder remote"
            case .gitPath: "bare git repository by path"
            case .gitDaemon: "git daemon on 127.0.0.1"
            }
        }
    }

    @Test(
        "4 replicas (8 in long mode) syncing into one remote at the same moment, 5 rounds (20): no update lost, all identical, remote sound",
        arguments: RemoteSetup.allCases)
    func fourReplicasAtOnce(_ setup: RemoteSetup) throws {
        let box = Sandbox("four-\(setup)")
        var daemon: GitDaemon? = nil
        defer { daemon?.stop() }
        var remote = box.remote
        var gitRepository: String? = nil
        if setup == .gitDaemon {
            daemon = try GitDaemon()
            remote = try daemon!.makeRepository("records")
            gitRepository = daemon!.repositoryPath("records")
        } else if setup == .gitPath {
            remote = box.path("remote.git")
            Reliability.makeBareRepo(remote)
            gitRepository = remote
        }
        let rounds = Reliability.long ? 20 : 5
        let n = Reliability.long ? 8 : 4
        var shared = "{\n  \"title\": \"shared\""
        for i in 0..<n { shared += ",\n  \"f\(i)\": \"r\(i)-0\"" }
        shared += "\n}\n"
        var files = ["shared.json": shared]
        for i in 0..<n { files["own\(i).json"] = "{\n  \"v\": \"own\(i)-0\"\n}\n" }
        var replicas = [Self.initAndSync(box, "r0", remote: remote, files: files)]
        for i in 1..<n { replicas.append(Self.clone(box, "r\(i)", remote: remote)) }

        var exits: [Int32: Int] = [:]
        for round in 1...rounds {
            for (i, r) in replicas.enumerated() {
                Self.setField(r, "shared.json", "f\(i)", "r\(i)-\(round)")
                Self.setField(r, "own\(i).json", "v", "own\(i)-\(round)")
                r.write("round\(round)/new\(i).json", "{\"v\": \"new\(i)-\(round)\"}\n")
            }
            let results = launchTogether(replicas.map { (["sync"], $0.root) })
            for r in results {
                exits[r.exit, default: 0] += 1
                #expect(r.exit == 0 || r.exit == 75, "round \(round): \(r)")
            }
            // Nobody's local edit was overwritten by what came in.
            for (i, r) in replicas.enumerated() {
                #expect(r.json("own\(i).json")?["v"] as? String == "own\(i)-\(round)", "round \(round), \(r.root)")
                #expect(
                    r.json("shared.json")?["f\(i)"] as? String == "r\(i)-\(round)",
                    "round \(round), \(r.root): \(r.read("shared.json") ?? "-")")
            }
        }
        // A final round, one replica after the other, twice: everyone has everything.
        for _ in 0..<2 { for r in replicas { r.sync() } }

        let first = replicas[0].documents()
        for r in replicas.dropFirst() { #expect(r.documents() == first, "\(r.root) differs from \(replicas[0].root)") }
        let final = replicas[0]
        for i in 0..<n {
            #expect(
                final.json("shared.json")?["f\(i)"] as? String == "r\(i)-\(rounds)",
                "shared field of replica \(i): \(final.read("shared.json") ?? "-")")
            #expect(final.json("own\(i).json")?["v"] as? String == "own\(i)-\(rounds)")
            for round in 1...rounds {
                #expect(final.json("round\(round)/new\(i).json")?["v"] as? String == "new\(i)-\(round)")
            }
        }
        #expect(first.count == 1 + n + n * rounds, "documents: \(first.keys.sorted())")
        for r in replicas {
            #expect(r.conflictCopies().isEmpty, "different fields of one document merge without conflicts: \(r.root)")
            #expect(journalProblems(r.journal).isEmpty, "\(r.root): \(journalProblems(r.journal))")
        }
        let verify = final.run("verify")
        #expect(verify.exit == 0, verify.comment)
        if let repo = gitRepository {
            Reliability.fsck(repo)
            let commits = Reliability.commitCount(repo)
            for r in replicas { r.sync() }
            #expect(Reliability.commitCount(repo) == commits, "a sync with nothing to do makes no commit")
        } else {
            #expect(Files.tree(box.remote, skipMetadata: true) == first)
        }
        let total = exits.values.reduce(0, +)
        Reliability.figure(
            "concurrency replicas kind=\(setup.rawValue) replicas=\(n) rounds=\(rounds) runs=\(total) exit0=\(exits[0] ?? 0) exit75=\(exits[75] ?? 0)"
        )
    }

    // MARK: - Stale locks after SIGKILL

    @Test(
        "a sync SIGKILLed while holding both locks: the tree lock is free at once and the remote lock is broken on the next run"
    )
    func staleLocksAfterKill() {
        let box = Sandbox()
        box.remoteFormat1 = true  // about format 1's own files
        let a = box.initReplica("A", files: ["a.json": "{\"v\": \"a-0\"}\n"])
        a.sync()
        a.ok("config", "lock.waitSeconds", "0")
        a.write("a.json", a.read("a.json")!.replacing("\"a-0\"", with: "\"a-1\""))
        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": "remote.after-documents"])
        #expect(killed.exit == 137, killed.comment)

        // What the dead process left: its remote lock (this host, its pid), no tree lock.
        let lock = Files.bytes(box.remote + "/.docsync/lock").flatMap(JSONHelp.object)
        #expect(
            lock?["host"] as? String == ProcessInfo.processInfo.hostName,
            "the killed push left its remote lock: \(String(describing: lock))")
        #expect(lock?["pid"] as? Int != nil)
        #expect(!isFlockHeld(a.path(".docsync/lock")), "the kernel dropped the tree lock")

        let started = Date()
        let next = a.run("sync")
        #expect(next.exit == 0, next.comment)
        // Waiting for the lock would take the full 50 s; 40 s leaves a loaded machine room.
        #expect(
            Date().timeIntervalSince(started) < 40,
            "a lock of a dead process on this host is broken at once, not after the 50 s wait")
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/.docsync/lock"))
        #expect(Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)?["v"] as? String == "a-1")
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)

        // Another machine's lock, older than remote.lockStaleSeconds: broken too.
        a.ok("config", "remote.lockStaleSeconds", "60")
        let foreign = box.remote + "/.docsync/lock"
        try! Data(#"{"host":"elsewhere.example","pid":4242,"replica":"0123456789ab","time":0}"#.utf8).write(
            to: URL(fileURLWithPath: foreign))
        var old = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        utimensat(AT_FDCWD, foreign, &old, 0)
        a.write("a.json", a.read("a.json")!.replacing("\"a-1\"", with: "\"a-2\""))
        let again = a.run("sync")
        #expect(again.exit == 0, again.comment)
        #expect(Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)?["v"] as? String == "a-2")
    }
}
