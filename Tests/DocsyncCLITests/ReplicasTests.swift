// `docsync replicas` and `docsync replicas forget`: who the remote knows, what each last
// saw, and who holds back tombstone purge; forgetting a machine that is gone lets gc
// purge what it held back. Both remote kinds, the built binary.

import Foundation
import Testing

@Suite("docsync replicas") struct ReplicasTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    func makeRemote(_ kind: Kind, _ box: Sandbox) -> String {
        guard kind == .git else { return box.remote }
        let url = box.path("remote.git")
        Reliability.makeBareRepo(url)
        return url
    }

    func clone(_ box: Sandbox, _ url: String, _ name: String) -> Replica {
        let r = CLI.run(["clone", "--name", name, url, name], in: box.root)
        #expect(r.exit == 0, r.comment)
        return box.replica(name)
    }

    func edit(_ r: Replica, _ file: String, _ value: String) {
        r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
    }

    /// `docsync replicas --json`, expecting exit 0: the replicas by name.
    func replicas(_ r: Replica, sourceLocation: SourceLocation = #_sourceLocation) -> [String:
        [String: Any]]
    {
        let run = r.run("replicas", "--json")
        #expect(run.exit == 0, run.comment, sourceLocation: sourceLocation)
        let report = JSONHelp.parse(run.stdout) as? [String: Any] ?? [:]
        #expect(report["schemaVersion"] as? Int == 1, run.comment, sourceLocation: sourceLocation)
        let list = report["replicas"] as? [[String: Any]] ?? []
        return Dictionary(
            list.map { ($0["name"] as? String ?? "?", $0) }, uniquingKeysWith: { a, _ in a })
    }

    func gcPurged(_ r: Replica, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        let run = r.run("gc", "--json")
        #expect(run.exit == 0, run.comment, sourceLocation: sourceLocation)
        let report = JSONHelp.parse(run.stdout) as? [String: Any] ?? [:]
        let purged = (report["remote"] as? [String: Any])?["purged"] as? [[String: Any]] ?? []
        return purged.compactMap { $0["path"] as? String }.sorted()
    }

    func tombstones(_ kind: Kind, _ url: String) -> [String] {
        if kind == .dir { return Reliability.folderTombstones(url).keys.sorted() }
        let r = CLI.runTool(
            "/usr/bin/git",
            ["--git-dir", url, "ls-tree", "-r", "--name-only", "main", ".docsync/tombstones/"], in: "/",
            env: Reliability.gitEnv)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// Milliseconds since the epoch of an RFC 3339 UTC time as docsync prints it.
    func millis(_ text: Any?) -> Int64? {
        guard let text = text as? String, text.hasSuffix("Z") else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int64($0.timeIntervalSince1970 * 1000) }
    }

    @Test(arguments: Kind.allCases)
    func listsReplicasAndForgettingOneLetsGCPurge(_ kind: Kind) throws {
        let box = Sandbox("replicas-\(kind.rawValue)")
        let url = makeRemote(kind, box)
        // Whole seconds: a git commit's time has no fraction.
        let start = Int64(Date().timeIntervalSince1970) * 1000
        let version = CLI.run(["--version"], in: box.root).stdout.trimmingCharacters(
            in: .whitespacesAndNewlines)
        #expect(!version.isEmpty)

        let a = box.replica("a")
        for name in ["keep", "gone", "other"] { a.write("\(name).json", "{\"v\": \"\(name)-0\"}") }
        #expect(CLI.run(["init", "--remote", url, "--name", "a", "a"], in: box.root).exit == 0)
        a.sync()
        let b = clone(box, url, "b")
        let away = clone(box, url, "away")
        // A git remote knows the replicas that commit: b and away push once.
        edit(b, "other.json", "other-b")
        b.sync()
        edit(away, "keep.json", "keep-away")
        away.sync()
        a.sync()
        b.sync()
        a.remove("gone.json")
        a.sync()
        b.sync()
        #expect(!b.exists("gone.json"))
        if kind == .git {
            // On git, b shows it has seen the deletion by committing on top of it.
            edit(b, "other.json", "other-b2")
            b.sync()
        }
        let end = Int64(Date().timeIntervalSince1970 + 1) * 1000

        // Every replica, by name, with its id, last sync, what it saw and its version;
        // `away` has not seen the deletion and holds its tombstone back.
        let listed = replicas(a)
        #expect(Set(listed.keys) == ["a", "b", "away"], "\(listed)")
        for (name, replica) in listed {
            #expect((replica["id"] as? String)?.isEmpty == false, "\(name)")
            #expect(replica["version"] as? String == version, "\(name): \(replica)")
            #expect((replica["seen"] as? String)?.isEmpty == false, "\(name): \(replica)")
            let synced = try #require(millis(replica["lastSync"]), "\(name): \(replica)")
            #expect(synced >= start && synced <= end, "\(name): \(replica)")
            #expect(replica["self"] as? Bool == (name == "a"))
        }
        #expect(listed["away"]?["holdsBackPurge"] as? Bool == true, "\(listed)")
        #expect(listed["away"]?["holdsBackTombstones"] as? Int == 1)
        #expect(listed["a"]?["holdsBackPurge"] as? Bool == false)
        #expect(listed["b"]?["holdsBackPurge"] as? Bool == false)
        let awayId = try #require(listed["away"]?["id"] as? String)
        let text = a.run("replicas")
        #expect(text.exit == 0, text.comment)
        let awayLine = text.stdout.split(separator: "\n").first { $0.hasPrefix("away ") }
        #expect(
            awayLine?.contains(awayId) == true && awayLine?.contains("1 tombstone") == true, text.comment)
        #expect(text.stdout.contains("1 holds back tombstone purge"), text.comment)

        // Held back: gc keeps the tombstone.
        #expect(gcPurged(a).isEmpty)
        #expect(tombstones(kind, url).count == 1)

        // Refused: this tree's own replica, and a name nobody has.
        let own = a.run("replicas", "forget", "a")
        #expect(
            own.exit == 1 && own.stderr.contains("this replica") && own.stderr.contains("--force"),
            own.comment)
        let unknown = a.run("replicas", "forget", "nosuchmachine")
        #expect(unknown.exit == 1 && unknown.stderr.contains("nosuchmachine"), unknown.comment)
        let dry = a.run("replicas", "forget", "away", "--dry-run")
        #expect(dry.exit == 0 && dry.stdout.contains("would forget replica away"), dry.comment)
        #expect(Set(replicas(a).keys) == ["a", "b", "away"], "a dry run forgets nothing")

        let forgot = a.run("--json", "replicas", "forget", "away")
        #expect(forgot.exit == 0, forgot.comment)
        let forgotten =
            (JSONHelp.parse(forgot.stdout) as? [String: Any])?["forgotten"] as? [String: Any]
        #expect(forgotten?["id"] as? String == awayId, forgot.comment)
        #expect(Set(replicas(a).keys) == ["a", "b"])
        #expect(Set(replicas(b).keys) == ["a", "b"], "every replica sees the same list")
        if kind == .git {
            let log = CLI.runTool(
                "/usr/bin/git", ["--git-dir", url, "log", "-1", "--format=%B", "main"], in: "/",
                env: Reliability.gitEnv)
            #expect(log.stdout.contains("Retired-Replica: \(awayId)"), log.comment)
            #expect(log.stdout.contains("Docsync-Version: \(version)"), log.comment)
            Reliability.fsck(url)
        } else {
            // Said in the remote by the forgetting replica's own record (the drive layout
            // writes no other replica's file); no reader counts the forgotten one any more.
            let records = Files.tree(url + "/.docsync/replicas", skipMetadata: false)
            #expect(
                records.contains {
                    $0.key.hasSuffix("info.json") && String(decoding: $0.value, as: UTF8.self).contains("\"forgets\"")
                },
                "\(records.keys.sorted())")
        }

        // Forgotten: gc purges what it held back.
        #expect(gcPurged(a) == ["gone.json"])
        #expect(tombstones(kind, url).isEmpty)

        // The machine was not gone after all: it syncs, ends up right, and is known again
        // (on git once it commits).
        away.sync()
        #expect(!away.exists("gone.json"), "the purged deletion still reaches it")
        if kind == .git {
            #expect(
                Set(replicas(a).keys) == ["a", "b"], "a git remote learns a replica from its commits")
            edit(away, "keep.json", "keep-away2")
            away.sync()
        }
        #expect(Set(replicas(a).keys) == ["a", "b", "away"])
        for r in [a, b] { r.sync() }
        #expect(a.documents() == away.documents() && b.documents() == away.documents())
        for r in [a, b, away] { #expect(r.run("verify").exit == 0, r.run("verify").comment) }
    }

    @Test("forget --force forgets this tree's own replica (until its next sync); forget by id")
    func forgetSelfWithForceAndById() throws {
        let box = Sandbox()
        let a = box.initReplica("a", files: ["x.json": "{\"v\": 1}"])
        a.sync()
        let b = box.clone("b")
        b.sync()
        let aId = try #require(replicas(a)["a"]?["id"] as? String)
        let forced = a.run("replicas", "forget", "--force", aId)
        #expect(forced.exit == 0, forced.comment)
        #expect(Set(replicas(b).keys) == ["b"])
        a.sync()
        #expect(Set(replicas(b).keys) == ["a", "b"], "a forgotten replica that syncs again reappears")
    }

    @Test("a replica record written before versions were kept is listed, without a version")
    func oldRecordWithoutVersion() throws {
        let box = Sandbox()
        let a = box.initReplica("a", files: ["x.json": "{\"v\": 1}"])
        a.sync()
        let old =
            "{\"name\":\"oldbox\",\"replicaId\":\"0123456789ab\",\"seen\":\"elsewhere:0:0\",\"time\":1700000000000}\n"
        try old.write(
            toFile: box.remote + "/.docsync/replicas/0123456789ab.json", atomically: true, encoding: .utf8
        )
        let listed = replicas(a)
        #expect(listed["oldbox"]?["id"] as? String == "0123456789ab", "\(listed)")
        #expect(listed["oldbox"]?["version"] == nil)
        #expect(listed["oldbox"]?["lastSync"] as? String == "2023-11-14T22:13:20Z")
        let text = a.run("replicas")
        #expect(text.stdout.contains("oldbox") && text.stdout.contains("unknown"), text.comment)
    }
}
