// Two replicas pushing to one git repository at the same moment, made deterministic: one
// replica is held (DOCSYNC_PAUSE_AT) after the repository told it where the branch is and
// before the branch moves, while the other pushes in full. The held push must then be
// refused and retried, never land on top and erase the other one.
//
// And the second line of defence: a replica whose own pushed commit is gone from the
// remote (a lost push, or `git push --force`) sends its versions again and deletes nothing.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A docsync run started in the background, to be waited for later.
final class BackgroundRun {
    let process = Process()
    let out: String
    let err: String
    let args: [String]

    init(_ args: [String], in dir: String, env: [String: String]) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("docsync-bg-\(UUID().uuidString)")
            .path
        out = scratch + ".out"
        err = scratch + ".err"
        self.args = args
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: out)
        process.standardError = FileHandle(forWritingAtPath: err)
        process.standardInput = FileHandle.nullDevice
        try! process.run()
    }

    func wait() -> RunResult {
        process.waitUntilExit()
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        let code = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return RunResult(
            args: args, stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "", exit: code)
    }
}

@Suite("Concurrent pushes to one git repository", .serialized)
struct ConcurrentPushTests {
    enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case path, fileURL, daemon
        var testDescription: String {
            switch self {
            case .path: "a bare repository by path"
            case .fileURL: "a bare repository by file:// URL"
            case .daemon: "git daemon on 127.0.0.1"
            }
        }
    }

    /// A new bare repository reached by `transport`, and where it is on disk.
    static func repository(_ box: Sandbox, _ transport: Transport) throws -> (
        url: String, path: String, daemon: GitDaemon?
    ) {
        switch transport {
        case .path, .fileURL:
            let path = box.path("remote.git")
            Reliability.makeBareRepo(path)
            return (transport == .path ? path : "file://" + path, path, nil)
        case .daemon:
            let daemon = try GitDaemon()
            _ = try daemon.makeRepository("records")
            return (daemon.url("records"), daemon.repositoryPath("records"), daemon)
        }
    }

    static func clone(_ box: Sandbox, _ name: String, _ url: String, sourceLocation: SourceLocation = #_sourceLocation)
        -> Replica
    {
        let r = CLI.run(["clone", "--name", name, url, name], in: box.root)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        return box.replica(name)
    }

    /// `docsync sync` on `r`, held just before it moves the branch (after its pull and its
    /// commit); `release` lets it go on. Named by `gate` so two can be held at once.
    static func heldSync(
        _ r: Replica, _ box: Sandbox, gate name: String = "gate",
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> (run: BackgroundRun, release: () -> Void) {
        let gate = box.path(name)
        let run = BackgroundRun(
            ["sync"], in: r.root, env: ["DOCSYNC_PAUSE_AT": "git.before-ref-update", "DOCSYNC_PAUSE_FILE": gate])
        #expect(
            waitUntil(seconds: 60) { FileManager.default.fileExists(atPath: gate + ".reached") },
            "\(r.root) reached the ref update",
            sourceLocation: sourceLocation)
        return (run, { #expect(FileManager.default.createFile(atPath: gate, contents: nil), "the gate file opens") })
    }

    /// r0 makes the remote with `d.json` `{"a": "base", "b": "base"}` saved `savedAgo`
    /// seconds ago and syncs; r1 and r2 clone it.
    static func threeReplicas(_ box: Sandbox, _ url: String, savedAgo: Int = 90) -> (Replica, Replica, Replica) {
        let r0 = box.replica("r0")
        r0.write("d.json", "{\n  \"a\": \"base\",\n  \"b\": \"base\"\n}\n")
        setSaveTime(r0.path("d.json"), Int(Date().timeIntervalSince1970) - savedAgo)
        #expect(CLI.run(["init", "--remote", url, "--name", "r0", "r0"], in: box.root).exit == 0)
        r0.sync()
        return (r0, clone(box, "r1", url), clone(box, "r2", url))
    }

    /// Sets field `key` of `r`'s `d.json` from "base" to `value`, saved `savedAgo` seconds
    /// ago (nil: now), the rest of the file as it is.
    static func save(_ r: Replica, _ key: String, _ value: String, from old: String = "base", savedAgo: Int? = nil) {
        r.write(
            "d.json",
            r.read("d.json")!.replacingOccurrences(of: "\"\(key)\": \"\(old)\"", with: "\"\(key)\": \"\(value)\""))
        if let savedAgo { setSaveTime(r.path("d.json"), Int(Date().timeIntervalSince1970) - savedAgo) }
    }

    static func gitFiles(_ repo: String) -> Set<String> {
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", repo, "ls-tree", "-r", "--name-only", "main"], in: "/",
            env: Reliability.gitEnv)
        return Set(r.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(".docsync/") })
    }

    @Test(
        "a push held after the branch was read, while another replica pushes: both documents land, on every replica",
        arguments: Transport.allCases)
    func heldPushDoesNotOverwrite(_ transport: Transport) throws {
        let box = Sandbox("held-\(transport)")
        let (url, repo, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let a = box.replica("A")
        a.write("seed.json", "{\"v\": \"seed\"}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let b = Self.clone(box, "B", url)

        a.write("from-a.json", "{\"v\": \"a\"}\n")
        b.write("from-b.json", "{\"v\": \"b\"}\n")
        let held = Self.heldSync(a, box)
        let other = b.run("sync")
        #expect(other.exit == 0, other.comment)
        #expect(Self.gitFiles(repo).contains("from-b.json"), "B's push landed")
        held.release()
        let first = held.run.wait()
        #expect(first.exit == 0, first.comment)

        #expect(
            Self.gitFiles(repo) == ["seed.json", "from-a.json", "from-b.json"],
            "neither push was overwritten: \(Self.gitFiles(repo))")
        for r in [b, a, b] { r.sync() }
        for r in [a, b] {
            #expect(
                Set(r.documents().keys) == ["seed.json", "from-a.json", "from-b.json"],
                "\(r.root): \(r.documents().keys.sorted())")
        }
        Reliability.fsck(repo)
    }

    @Test(
        "two replicas merge a third one's change at the same moment; the one whose push loses the race merges again from its user's save, so the later save wins",
        arguments: Transport.allCases)
    func retryMergesFromTheSave(_ transport: Transport) throws {
        let box = Sandbox("retry-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let (r0, r1, r2) = Self.threeReplicas(box, url, savedAgo: 60)
        // r2 saves `a` first, r1 later; r0 changes `b` and syncs before either.
        Self.save(r2, "a", "r2, earlier", savedAgo: 30)
        Self.save(r1, "a", "r1, later", savedAgo: 20)
        Self.save(r0, "b", "r0", savedAgo: 40)
        r0.sync()
        // r1 merges first and is held before its ref update; r2 merges after it and is
        // held too; r1 lands, then r2 finds the branch moved and merges again.
        let first = Self.heldSync(r1, box, gate: "gate1")
        let second = Self.heldSync(r2, box, gate: "gate2")
        first.release()
        let one = first.run.wait()
        #expect(one.exit == 0, one.comment)
        second.release()
        let two = second.run.wait()
        #expect(two.exit == 3, "r2's value of a lost: a recorded conflict: \(two)")
        for r in [r0, r1, r2, r0, r1] { _ = r.run("sync") }
        for r in [r0, r1, r2] {
            #expect(
                r.json("d.json")?["a"] as? String == "r1, later",
                "\(r.root): the later save wins: \(r.read("d.json") ?? "-")")
            #expect(r.json("d.json")?["b"] as? String == "r0")
        }
        let copies = r2.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(
            copies.contains { $0["a"] as? String == "r2, earlier" },
            "r2's save is kept in the conflict store: \(copies)")
    }

    @Test(
        "a deletion that lost to an edit, then lost its push race, is decided again against the newer edit: one record, not one per try",
        arguments: Transport.allCases)
    func retryTakesBackItsFirstDecision(_ transport: Transport) throws {
        let box = Sandbox("retry-deletion-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let (r0, r1, r2) = Self.threeReplicas(box, url)
        r1.remove("d.json")
        Self.save(r2, "a", "r2")
        Self.save(r0, "a", "r0")
        #expect(r2.run("sync").exit == 0)
        // r1 finds its deletion lost to r2's edit and is held before its ref update; r0
        // lands its edit meanwhile, so r1's push is refused and r1 pulls again.
        let held = Self.heldSync(r1, box)
        let other = r0.run("sync")
        #expect(other.exit == 0 || other.exit == 3, other.comment)
        let r0Version = r0.json("d.json")?["changesetId"] as? String
        held.release()
        let retried = held.run.wait()
        #expect(retried.exit == 3, "r1's deletion lost: \(retried)")
        let listed = r1.run("conflicts", "--json")
        let records = ((JSONHelp.parse(listed.stdout) as? [String: Any])?["conflicts"] as? [[String: Any]] ?? []).filter
        { $0["deleted"] as? Bool == true }
        #expect(records.count == 1, "one record of r1's deletion, not one per pull of the run: \(listed.stdout)")
        #expect(
            records.first?["winner"] as? String == r0Version,
            "the deletion lost to the version the remote holds now (\(r0Version ?? "-")): \(listed.stdout)")
        #expect(
            r1.json("d.json")?["a"] as? String == r0.json("d.json")?["a"] as? String,
            "r1 holds what the remote holds: \(r1.read("d.json") ?? "-")")
        let deletionLines = retried.stdout.components(separatedBy: "\n").filter {
            $0.hasPrefix("conflict") && $0.contains("d.json")
        }
        #expect(deletionLines.count == 1, "the run reports the deletion's loss once: \(retried.stdout)")
    }

    @Test(
        "two replicas each find a third one's deletion lost to their edit; the one whose push loses the race takes back its record: one record of the deletion",
        arguments: Transport.allCases)
    func retryTakesBackItsDeletionRecord(_ transport: Transport) throws {
        let box = Sandbox("retry-found-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let (r0, r1, r2) = Self.threeReplicas(box, url)
        Self.save(r2, "a", "r2")
        Self.save(r1, "a", "r1")
        r0.remove("d.json")
        #expect(r0.run("sync").exit == 0)
        let held = Self.heldSync(r2, box)
        let first = r1.run("sync")
        #expect(first.exit == 3, "r1 records that r0's deletion lost to its edit: \(first)")
        let r1Version = r1.json("d.json")?["changesetId"] as? String
        held.release()
        let retried = held.run.wait()
        #expect(retried.exit == 3, "r2's value of a lost to r1's later one: \(retried)")
        for r in [r2, r0, r1, r2] { _ = r.run("sync") }
        for r in [r0, r1, r2] {
            let listed = r.run("conflicts", "--json")
            let records = ((JSONHelp.parse(listed.stdout) as? [String: Any])?["conflicts"] as? [[String: Any]] ?? [])
                .filter { $0["deleted"] as? Bool == true }
            #expect(
                records.count == 1,
                "\(r.root): one record of r0's deletion, made by r1 (whose push landed): \(listed.stdout)")
            #expect(
                records.first?["winner"] as? String == r1Version,
                "\(r.root): the record r1 shared (\(r1Version ?? "-")): \(listed.stdout)")
        }
    }

    @Test(
        "a fix of an invalid file meets the held remote version, then the push loses the race: the retry merges from the fix's save, so another replica's later save wins",
        arguments: [Transport.path])
    func retryMergesFromTheFix(_ transport: Transport) throws {
        let box = Sandbox("retry-fix-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let now = Int(Date().timeIntervalSince1970)
        let (r0, r1, r2) = Self.threeReplicas(box, url, savedAgo: 90)
        // r2's file is invalid while r0's edit arrives: held aside until the fix.
        let valid = r2.read("d.json")!
        r2.write("d.json", "{ \"a\": ")
        Self.save(r0, "b", "r0", savedAgo: 60)
        r0.sync()
        #expect(r2.run("sync").exit == 1, "r2's file is invalid")
        // r1 has r0's edit before it saves: its version is its save, not a merge.
        r1.sync()
        r2.write("d.json", valid.replacingOccurrences(of: "\"a\": \"base\"", with: "\"a\": \"r2's fix, earlier\""))
        setSaveTime(r2.path("d.json"), now - 30)
        Self.save(r1, "a", "r1, later", savedAgo: 20)
        let held = Self.heldSync(r2, box)
        let first = r1.run("sync")
        #expect(first.exit == 0, first.comment)
        held.release()
        let retried = held.run.wait()
        #expect(retried.exit == 3, "r2's value of a lost to r1's later save: \(retried)")
        for r in [r0, r1, r2, r0, r1] { _ = r.run("sync") }
        for r in [r0, r1, r2] {
            #expect(
                r.json("d.json")?["a"] as? String == "r1, later",
                "\(r.root): the later save wins: \(r.read("d.json") ?? "-")")
            #expect(r.json("d.json")?["b"] as? String == "r0")
        }
        let copies = r2.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(
            copies.contains { $0["a"] as? String == "r2's fix, earlier" },
            "r2's fix is kept in the conflict store: \(copies)")
    }

    @Test(
        "two replicas make the same edit and each records that a third one's version lost; the one whose push loses the race takes back its record and lists the other's",
        arguments: [Transport.path])
    func retryListsTheRecordAnotherShared(_ transport: Transport) throws {
        let box = Sandbox("retry-same-record-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let (r0, r1, r2) = Self.threeReplicas(box, url, savedAgo: 90)
        Self.save(r2, "a", "r2, earlier", savedAgo: 60)
        r2.sync()
        let lost = try #require(r2.changesetId("d.json"))
        Self.save(r0, "a", "same")
        Self.save(r0, "b", "r0", savedAgo: 30)
        Self.save(r1, "a", "same", savedAgo: 30)
        let held = Self.heldSync(r1, box)
        let first = r0.run("sync")
        #expect(first.exit == 3, "r0 records that r2's a lost to its later save: \(first)")
        held.release()
        let retried = held.run.wait()
        #expect(retried.exit == 0 || retried.exit == 3, retried.comment)
        let listed = r1.run("conflicts", "--json")
        let records = ((JSONHelp.parse(listed.stdout) as? [String: Any])?["conflicts"] as? [[String: Any]] ?? []).filter
        { $0["changesetId"] as? String == lost }
        #expect(records.count == 1, "r1 lists the record of r2's lost version that r0 shared: \(listed.stdout)")
        #expect(
            r1.json("d.json")?["a"] as? String == "same" && r1.json("d.json")?["b"] as? String == "r0",
            "\(r1.read("d.json") ?? "-")")
    }

    @Test(
        "a replica hears that its version lost, then its push loses the race to the resolution of that record: the retry ends as a run after the resolution would, exit 0",
        arguments: [Transport.path])
    func retryForgetsARecordSettledMeanwhile(_ transport: Transport) throws {
        let box = Sandbox("retry-settled-\(transport)")
        let (url, _, daemon) = try Self.repository(box, transport)
        defer { daemon?.stop() }
        let (r0, r1, r2) = Self.threeReplicas(box, url, savedAgo: 90)
        Self.save(r2, "a", "r2, earlier", savedAgo: 60)
        r2.sync()
        Self.save(r0, "a", "r0, later", savedAgo: 30)
        #expect(r0.run("sync").exit == 3, "r0 records that r2's value lost")
        // r2 has something to push; its pull sees the open record (its own version lost).
        r2.write("e.json", "{\"e\": 1}\n")
        let held = Self.heldSync(r2, box)
        // Meanwhile r1 settles the record and pushes the resolution.
        #expect(r1.run("sync").exit == 0)
        let resolved = r1.run("resolve", "d.json", "--take", "r2")
        #expect(resolved.exit == 0, resolved.comment)
        #expect(r1.run("sync").exit == 0)
        held.release()
        let retried = held.run.wait()
        #expect(retried.exit == 0, "the record arrived settled in the retry: nothing for r2 to hear: \(retried)")
        #expect(r2.json("d.json")?["a"] as? String == "r2, earlier", "r1 took r2's value: \(r2.read("d.json") ?? "-")")
        let open =
            ((JSONHelp.parse(r2.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
                ?? [])
        #expect(open.isEmpty, "no open record on r2: \(open)")
    }

    /// Moves the repository's branch back to `commit`, as `git push --force` of an older
    /// history (or a push that another one overwrote) leaves it.
    static func rewind(_ repo: String, to commit: String) {
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", repo, "update-ref", "refs/heads/main", commit], in: "/",
            env: Reliability.gitEnv)
        #expect(r.exit == 0, r.comment)
    }

    static func head(_ repo: String) -> String {
        CLI.runTool("/usr/bin/git", ["--git-dir", repo, "rev-parse", "main"], in: "/", env: Reliability.gitEnv)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "the remote lost this replica's pushed commit (branch rewound): it says so, sends its versions again and deletes nothing"
    )
    func lostPushIsSentAgain() throws {
        let box = Sandbox()
        let (url, repo, _) = try Self.repository(box, .path)
        let a = box.replica("A")
        a.write("seed.json", "{\n  \"v\": \"seed-0\"\n}\n")
        a.write("gone.json", "{\n  \"v\": \"gone\"\n}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let before = Self.head(repo)
        // After `before`: a new document, an edit and a deletion, all pushed.
        a.write("new.json", "{\"v\": \"new\"}\n")
        a.write("seed.json", a.read("seed.json")!.replacingOccurrences(of: "seed-0", with: "seed-1"))
        a.remove("gone.json")
        let pushed = a.sync()
        #expect(pushed.stdout.contains("pushed"), pushed.comment)
        // Someone else's history replaces it: the branch is back at `before`, plus a commit
        // made with plain git.
        Self.rewind(repo, to: before)
        let b = Self.clone(box, "B", url)
        b.write("other.json", "{\"v\": \"other\"}\n")
        b.sync()

        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect((r.stdout + r.stderr).contains("no longer holds"), "the user is told: \(r)")
        #expect(a.json("new.json")?["v"] as? String == "new", "never read as a deletion")
        #expect(a.json("seed.json")?["v"] as? String == "seed-1")
        #expect(!a.exists("gone.json"), "the deletion stays a deletion")
        #expect(a.json("other.json")?["v"] as? String == "other", "what the other history brought is pulled")
        #expect(Self.gitFiles(repo) == ["seed.json", "new.json", "other.json"], "sent again: \(Self.gitFiles(repo))")
        b.sync()
        #expect(b.documents() == a.documents())
        #expect(b.json("seed.json")?["v"] as? String == "seed-1")
        // Settled: nothing more to send.
        let again = a.run("sync")
        #expect(again.exit == 0 && !again.stdout.contains("no longer holds"), again.comment)
        Reliability.fsck(repo)
    }
}
