// `docsync gc`, remote half: tombstones are purged once every replica known to the remote
// has seen them, or once older than gc.tombstoneMaxAgeDays. A replica that was offline
// longer than that must still end up right. Both remote kinds, the built binary.

import Foundation
import Testing

@Suite("docsync gc: remote tombstones") struct GCTombstoneTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// A remote of `kind` in a fresh sandbox, and its URL.
    func makeRemote(_ kind: Kind, _ box: Sandbox) -> String {
        guard kind == .git else { return box.remote }
        let url = box.path("remote.git")
        Reliability.makeBareRepo(url)
        return url
    }

    func edit(_ r: Replica, _ file: String, _ value: String) {
        r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
    }

    func gc(_ r: Replica, _ args: String..., sourceLocation: SourceLocation = #_sourceLocation) -> [String: Any] {
        let run = r.run(["gc", "--json"] + args)
        #expect(run.exit == 0, run.comment, sourceLocation: sourceLocation)
        return JSONHelp.parse(run.stdout) as? [String: Any] ?? [:]
    }

    func purged(_ report: [String: Any]) -> [String] {
        ((report["remote"] as? [String: Any])?["purged"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
            .sorted()
    }

    /// Tombstone files on the remote (folder, or the branch's tree).
    func tombstones(_ kind: Kind, _ url: String) -> [String] {
        if kind == .dir { return Reliability.folderTombstones(url).keys.sorted() }
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", url, "ls-tree", "-r", "--name-only", "main", ".docsync/tombstones/"], in: "/",
            env: Reliability.gitEnv)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    func setUp(_ kind: Kind, _ box: Sandbox, files: [String]) -> (url: String, a: Replica) {
        let url = makeRemote(kind, box)
        let a = box.replica("a")
        for name in files { a.write("\(name).json", "{\"v\": \"\(name)-0\"}") }
        let made = CLI.run(["init", "--remote", url, "--name", "a", "a"], in: box.root)
        #expect(made.exit == 0, made.comment)
        a.sync()
        return (url, a)
    }

    func clone(_ box: Sandbox, _ url: String, _ name: String) -> Replica {
        let r = CLI.run(["clone", "--name", name, url, name], in: box.root)
        #expect(r.exit == 0, r.comment)
        return box.replica(name)
    }

    @Test(arguments: Kind.allCases)
    func purgedOnceEveryReplicaSawIt(_ kind: Kind) throws {
        let box = Sandbox("seen-\(kind.rawValue)")
        let (url, a) = setUp(kind, box, files: ["keep", "gone", "also"])
        let b = clone(box, url, "b")
        // A git remote knows the replicas that push (a folder remote every one that syncs).
        edit(b, "also.json", "also-b")
        b.sync()
        a.sync()
        a.remove("gone.json")
        a.sync()
        // b has not seen the deletion: the tombstone stays.
        let early = gc(a)
        #expect(purged(early).isEmpty, "\(early)")
        #expect((early["remote"] as? [String: Any])?["kept"] as? Int == 1)
        #expect(tombstones(kind, url).count == 1)
        b.sync()
        #expect(!b.exists("gone.json"))
        if kind == .git {
            // On git, b shows it has seen the deletion by pushing on top of it.
            #expect(purged(gc(a, "--dry-run")).isEmpty)
            edit(b, "also.json", "also-b2")
            b.sync()
        }

        let dry = gc(a, "--dry-run")
        #expect(purged(dry) == ["gone.json"], "\(dry)")
        #expect(tombstones(kind, url).count == 1, "a dry run purges nothing")
        let report = gc(a)
        #expect(purged(report) == ["gone.json"], "\(report)")
        let reason = ((report["remote"] as? [String: Any])?["purged"] as? [[String: Any]])?.first?["reason"] as? String
        #expect(reason == "seen by every replica")
        #expect(tombstones(kind, url).isEmpty)
        // Right after, a second gc finds nothing to do and rewrites nothing in the tree.
        let journalAfter = a.bytes(".docsync/journal"), stateAfter = a.bytes(".docsync/state")
        let second = gc(a)
        #expect(purged(second).isEmpty && second["journalEntriesDropped"] as? Int == 0, "\(second)")
        #expect(a.bytes(".docsync/journal") == journalAfter && a.bytes(".docsync/state") == stateAfter)
        if kind == .git {
            Reliability.fsck(url)
            let log = CLI.runTool(
                "/usr/bin/git", ["--git-dir", url, "log", "-1", "--format=%s%n%b", "main"], in: "/",
                env: Reliability.gitEnv
            ).stdout
            #expect(log.hasPrefix("docsync: gc, 1 tombstone purged from a"), "\(log)")
            #expect(log.contains("purge gone.json"), "\(log)")
        } else {
            #expect(Reliability.folderTombstones(url).isEmpty)
        }
        // Everyone carries on: no-op syncs, a new replica, further edits.
        for r in [a, b] { r.sync() }
        let c = clone(box, url, "c")
        #expect(!c.exists("gone.json"))
        edit(c, "keep.json", "keep-c")
        c.sync()
        for r in [a, b] { r.sync() }
        #expect(a.documents() == b.documents() && b.documents() == c.documents())
        #expect(a.json("keep.json")?["v"] as? String == "keep-c")
        for r in [a, b, c] { #expect(r.run("verify").exit == 0, r.run("verify").comment) }
        // Nothing left to purge: a second gc changes nothing on the remote.
        let before = kind == .dir ? Files.tree(url, skipMetadata: false).filter { !Files.isTransient($0.key) } : [:]
        let commits = kind == .git ? Reliability.commitCount(url) : 0
        #expect(purged(gc(a)).isEmpty)
        if kind == .dir {
            #expect(Files.tree(url, skipMetadata: false).filter { !Files.isTransient($0.key) } == before)
        }
        if kind == .git { #expect(Reliability.commitCount(url) == commits) }
    }

    @Test(arguments: Kind.allCases)
    func aReplicaOfflinePastTheAgeLimitEndsUpRight(_ kind: Kind) throws {
        let box = Sandbox("offline-\(kind.rawValue)")
        let (url, a) = setUp(kind, box, files: ["plain", "edited", "other", "keep1", "keep2"])
        let away = clone(box, url, "away")
        // While `away` is offline: a deletes two documents and edits another one.
        a.remove("plain.json")
        a.remove("edited.json")
        edit(a, "other.json", "other-a")
        a.sync()
        // `away` edits one of the deleted documents, and makes a new one, offline.
        edit(away, "edited.json", "edited-offline")
        away.write("new.json", "{\"v\": \"new-offline\"}")
        // The age limit passes; `away` never saw the tombstones, they are purged anyway.
        a.ok("config", "gc.tombstoneMaxAgeDays", "0.000001")
        Thread.sleep(forTimeInterval: 0.2)
        let report = gc(a)
        #expect(purged(report) == ["edited.json", "plain.json"], "\(report)")
        #expect(tombstones(kind, url).isEmpty)
        if kind == .git { Reliability.fsck(url) }

        let back = away.run("sync")
        #expect(back.exit == 3, "the purged deletion that lost to the edit is recorded: \(back)")
        #expect(!away.exists("plain.json"), "an unchanged copy of a purged deletion stays deleted")
        #expect(away.json("edited.json")?["v"] as? String == "edited-offline", "a local edit is kept")
        #expect(
            back.stdout.contains("edited.json: deleted on the remote but edited here: kept the local edit"),
            back.comment)
        #expect(away.json("other.json")?["v"] as? String == "other-a")
        // The deleter hears its deletion lost: a git purge commit names the deleter, a
        // compacted folder feed keeps a `purged:` line naming it.
        let told = a.run("sync")
        #expect(told.exit == 3, told.comment)
        #expect(a.json("edited.json")?["v"] as? String == "edited-offline", "the kept edit is pushed back")
        #expect(a.json("new.json")?["v"] as? String == "new-offline")
        #expect(!a.exists("plain.json"))
        #expect(a.documents() == away.documents())
        for r in [a, away] { #expect(r.run("verify").exit == 0, r.run("verify").comment) }
        if kind == .git { Reliability.fsck(url) }
    }

    @Test(arguments: Kind.allCases)
    func aPushFromBeforeTheCompactionPullsFirst(_ kind: Kind) throws {
        let box = Sandbox("stalepush-\(kind.rawValue)")
        let (url, a) = setUp(kind, box, files: ["x", "y", "z", "w"])
        let b = clone(box, url, "b")
        a.remove("x.json")
        a.sync()
        a.ok("config", "gc.tombstoneMaxAgeDays", "0.000001")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(purged(gc(a)) == ["x.json"])
        // b never pulled since: its push is refused, it pulls (a snapshot on a folder
        // remote), deletes its unchanged x.json, and pushes its edit on top.
        edit(b, "y.json", "y-b")
        let pushed = b.run("push")
        #expect(pushed.exit == 0, pushed.comment)
        #expect(!b.exists("x.json"))
        a.sync()
        #expect(a.json("y.json")?["v"] as? String == "y-b")
        #expect(a.documents() == b.documents())
        for r in [a, b] { #expect(r.run("verify").exit == 0, r.run("verify").comment) }
    }

    @Test func aFolderRemoteDryRunChangesNothing() throws {
        let box = Sandbox()
        let (url, a) = setUp(.dir, box, files: ["x", "y", "z"])
        a.remove("x.json")
        a.sync()
        a.ok("config", "gc.tombstoneMaxAgeDays", "0.000001")
        Thread.sleep(forTimeInterval: 0.2)
        let before = Files.tree(url, skipMetadata: false)
        let dry = gc(a, "--dry-run")
        #expect(purged(dry) == ["x.json"])
        #expect(Files.tree(url, skipMetadata: false) == before)
    }

    @Test func theAgeLimitIsValidated() throws {
        let box = Sandbox()
        let a = box.initReplica("a")
        for bad in ["0", "-1", "soon", "inf"] {
            let r = a.run("config", "gc.tombstoneMaxAgeDays", bad)
            #expect(r.exit != 0, r.comment)
        }
        a.ok("config", "gc.tombstoneMaxAgeDays", "30")
        #expect(a.ok("config", "gc.tombstoneMaxAgeDays").stdout.contains("30"))
    }

    @Test func anUnreachableRemoteStillCompactsLocally() throws {
        let box = Sandbox()
        let (_, a) = setUp(.dir, box, files: ["x"])
        edit(a, "x.json", "1")
        a.sync()
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.path("away"))
        let r = a.run("gc")
        #expect(r.exit == 75, r.comment)
        #expect(r.stdout.contains("entries dropped"), r.comment)
        #expect(a.run("verify", "--local-only").exit == 0)
    }
}
