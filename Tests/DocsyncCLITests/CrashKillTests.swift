// The binary SIGKILLs itself at each named step (DOCSYNC_CRASH_AT), on both remote
// kinds; each run must really die there (exit 137), and the next runs must lose nothing
// and converge.

import DocSyncKit
import Foundation
import Testing

/// The named steps each command reaches on each remote kind, written out here so that a
/// step the engine stops reaching turns a test red instead of silently testing nothing.
enum CrashTable {
    /// `dir` is a folder remote in the drive layout (the default), `dir1` one in format 1.
    enum Kind: String, CaseIterable, Sendable { case dir, dir1, git }

    /// `docsync sync` with local edits and a remote change waiting. A folder remote writes
    /// the documents before its feed; a git push writes its objects, then moves the branch in one ref update
    /// (`git.before-ref-update` between the two; no `remote.after-documents`).
    static let sync: [Kind: [String]] = [
        .dir: [
            "record.after-stamp", "record.after-journal", "pull.after-records", "pull.after-journal",
            "pull.after-files",
            "remote.after-documents", "remote.after-feed", "push.after-remote-commit"
        ],
        .dir1: [
            "record.after-stamp", "record.after-journal", "pull.after-records", "pull.after-journal",
            "pull.after-files",
            "remote.after-documents", "remote.after-feed", "push.after-remote-commit"
        ],
        .git: [
            "record.after-stamp", "record.after-journal", "pull.after-records", "pull.after-journal",
            "pull.after-files",
            "git.before-ref-update", "remote.after-feed", "push.after-remote-commit"
        ]
    ]

    /// Steps only a large change reaches (a git commit of more than 100 new files writes a
    /// pack), each killed by a test of its own: `git.pack-appended` by
    /// `CorruptionTests.partialPackInTheGitCache`.
    static let large: [Kind: [String]] = [.dir: [], .dir1: [], .git: ["git.pack-appended"]]

    /// A fetch from a repository on a local path, between its objects and its tracking
    /// ref: held and killed there by `GitLocalPullTests`.
    static let localFetch = ["git.fetch-before-tracking-ref"]

    /// Reading the sync state, between the state and the base file it names: held there
    /// and killed there by `BaseFileTests`.
    static let stateRead = ["state.before-base-file"]
    /// Where a test holds a run to edit a file under it (see `CrashPoint.editWindowPoints`).
    static let editWindows = [
        "record.after-walk", "record.before-stamp", "record.before-swap", "pull.before-swap", "pull.after-swap"
    ]

    /// `docsync gc` with a tombstone to purge. Only a format-1 folder remote writes a
    /// compacted feed; the drive layout and git write one commit.
    static let gc: [Kind: [String]] = [
        .dir: [
            "gc.after-remote-commit", "gc.after-state-reset", "gc.after-journal", "gc.after-state", "gc.after-objects"
        ],
        .dir1: [
            "gc.after-remote-feed", "gc.after-remote-commit", "gc.after-state-reset", "gc.after-journal",
            "gc.after-state", "gc.after-objects"
        ],
        .git: [
            "gc.after-remote-commit", "gc.after-state-reset", "gc.after-journal", "gc.after-state",
            "gc.after-objects"
        ]
    ]

    /// `docsync resolve --take`, on either kind (it does not talk to the remote).
    static let resolve = ["resolve.after-journal"]

    /// `docsync revert`, killed after it journaled its file operations (RevertTests).
    static let revert = ["revert.after-journal"]

    /// `docsync override`, killed after it journaled the new bases and versions
    /// (SendOnlyTests).
    static let override = ["override.after-journal"]

    /// `docsync sparse` (and a sync of a sparse replica), killed after it journaled the
    /// documents that leave the selection (SparseTests).
    static let sparse = ["sparse.after-journal"]

    /// An upgrade of a format-1 folder remote to the drive layout (by the first sync).
    static let upgrade = ["upgrade.after-commit", "upgrade.after-format"]

    static func engineKind(_ kind: Kind) -> RemoteKind { kind == .git ? .git : .dir }
    static func format(_ kind: Kind) -> FolderRemoteFormat { kind == .dir1 ? .shared : .drive }
}

@Suite("The crash-point table") struct CrashTableTests {
    @Test("lists, per remote kind, exactly the steps the engine declares")
    func tableMatchesTheEngine() {
        for kind in CrashTable.Kind.allCases {
            #expect(CrashTable.sync[kind] == CrashPoint.points(for: CrashTable.engineKind(kind)), "sync, \(kind)")
            #expect(
                CrashTable.gc[kind]
                    == CrashPoint.gcPoints(for: CrashTable.engineKind(kind), format: CrashTable.format(kind)),
                "gc, \(kind)")
            #expect(
                CrashTable.large[kind] == CrashPoint.largeChangePoints(for: CrashTable.engineKind(kind)),
                "large, \(kind)")
        }
        #expect(CrashTable.resolve == CrashPoint.resolvePoints)
        #expect(CrashTable.localFetch == CrashPoint.localFetchPoints)
        #expect(CrashTable.stateRead == CrashPoint.stateReadPoints)
        #expect(CrashTable.editWindows == CrashPoint.editWindowPoints)
        #expect(CrashTable.upgrade == CrashPoint.upgradePoints)
    }

    @Test("names every CrashPoint.hit in the sources, so none goes untested")
    func everyCrashPointInTheSourcesIsListed() throws {
        let sources = CLI.packageRoot + "/Sources"
        var named = Set<String>()
        let files = FileManager.default.enumerator(atPath: sources)!.compactMap { $0 as? String }
        for relative in files where relative.hasSuffix(".swift") {
            let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
            for match in text.matches(of: #/CrashPoint\.hit\("([^"]+)"\)/#) { named.insert(String(match.1)) }
        }
        let listed = CrashTable.Kind.allCases.reduce(
            into: Set<String>(
                CrashTable.resolve + CrashTable.revert + CrashTable.override + CrashTable.sparse + CrashTable.upgrade
                    + CrashTable.localFetch
                    + CrashTable.stateRead + CrashTable.editWindows)
        ) {
            all, kind in
            all.formUnion(CrashTable.sync[kind]!)
            all.formUnion(CrashTable.gc[kind]!)
            all.formUnion(CrashTable.large[kind]!)
        }
        #expect(!named.isEmpty)
        let onlyInSources = named.subtracting(listed).sorted(), onlyListed = listed.subtracting(named).sorted()
        #expect(named == listed, "in the sources only: \(onlyInSources); listed only: \(onlyListed)")
    }
}

@Suite("Killed mid-sync at every step") struct CrashKillTests {
    typealias Kind = CrashTable.Kind

    struct Case: Sendable, CustomTestStringConvertible {
        var point: String
        var kind: Kind
        var testDescription: String { "\(kind.rawValue) remote, killed at \(point)" }
    }

    static let cases: [Case] = Kind.allCases.flatMap { kind in
        CrashTable.sync[kind]!.map { Case(point: $0, kind: kind) }
    }

    @Test(arguments: cases)
    func killedRunLosesNothing(_ c: Case) throws {
        let box = Sandbox("kill-\(c.point)-\(c.kind.rawValue)")
        let remote = Reliability.remote(box, git: c.kind == .git, format1: c.kind == .dir1)
        let a = box.replica("a")
        for name in ["both", "edit", "gone"] { a.write("\(name).json", "{\"v\": \"\(name)-0\"}") }
        #expect(CLI.run(["init", "--remote", remote, "a"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", remote, "b"], in: box.root).exit == 0)
        let b = box.replica("b")
        func edit(_ r: Replica, _ file: String, _ value: String) {
            r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
        }
        edit(b, "both.json", "both-b")
        edit(b, "edit.json", "edit-b")
        b.sync()
        edit(a, "both.json", "both-a")
        a.remove("gone.json")
        a.write("new.json", "{\"v\": \"new-a\"}")

        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": c.point])
        // 137 = 128 + SIGKILL: the run died at the step; anything else means it never got there.
        #expect(killed.exit == 137, "the sync never reached \(c.point): \(killed)")

        // Recovery: ordinary runs finish the job (a stale remote lock of the dead
        // process on this host is broken automatically).
        for r in [a, b, a] { #expect([0, 3].contains(r.run("sync").exit)) }
        #expect(a.documents() == b.documents())
        var values = Set<String>()
        for r in [a, b] {
            for (_, bytes) in r.documents() { if let v = JSONHelp.object(bytes)?["v"] as? String { values.insert(v) } }
            for (_, bytes) in r.conflictCopies() {
                if let v = JSONHelp.object(bytes)?["v"] as? String { values.insert(v) }
            }
        }
        #expect(Set(["both-a", "both-b", "edit-b", "new-a"]).isSubset(of: values), "saved versions: \(values.sorted())")
        #expect(!a.exists("gone.json"))
        for r in [a, b] {
            let verify = r.run("verify")
            #expect(verify.exit == 0, verify.comment)
        }
        Reliability.figure("crash-point kind=\(c.kind.rawValue) point=\(c.point) killed=\(killed.exit == 137 ? 1 : 0)")
    }
}

// `docsync gc` SIGKILLs itself at each of its steps, with a local action pending and a
// tombstone to purge, on both remote kinds. Running gc again and syncing must lose
// nothing, converge, pass `verify`, and leave no temporary file behind.
@Suite("gc killed at every step") struct GCCrashKillTests {
    typealias Kind = CrashTable.Kind

    struct Case: Sendable, CustomTestStringConvertible {
        var point: String
        var kind: Kind
        var testDescription: String { "\(kind.rawValue) remote, gc killed at \(point)" }
    }

    static let cases: [Case] = Kind.allCases.flatMap { kind in
        CrashTable.gc[kind]!.map { Case(point: $0, kind: kind) }
    }

    func edit(_ r: Replica, _ file: String, _ value: String) {
        r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
    }

    func temporaryFiles(_ dir: String) -> [String] {
        Files.listing(dir).filter { $0.contains(".docsync-tmp-") }
    }

    @Test(arguments: cases)
    func killedGCLosesNothing(_ c: Case) throws {
        let box = Sandbox("gckill-\(c.point)-\(c.kind.rawValue)")
        let remote = Reliability.remote(box, git: c.kind == .git, format1: c.kind == .dir1)
        let a = box.replica("a")
        for name in ["keep", "both", "gone", "pending"] { a.write("\(name).json", "{\"v\": \"\(name)-0\"}") }
        #expect(CLI.run(["init", "--remote", remote, "a"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", remote, "b"], in: box.root).exit == 0)
        let b = box.replica("b")
        for i in 1...3 {
            edit(a, "keep.json", "keep-\(i)")
            a.sync()
        }
        a.remove("gone.json")
        a.sync()
        b.sync()
        edit(b, "both.json", "both-b")
        b.sync()
        // A local action that has not reached the remote (recorded by a pull), and an
        // old enough tombstone to purge.
        edit(a, "pending.json", "pending-a")
        #expect([0, 3].contains(a.run("pull").exit))
        a.ok("config", "gc.tombstoneMaxAgeDays", "0.000001")
        Thread.sleep(forTimeInterval: 0.2)

        let killed = a.run("gc", env: ["DOCSYNC_CRASH_AT": c.point])
        #expect(killed.exit == 137, "gc never reached \(c.point): \(killed)")

        // Recovery: gc again (a stale remote lock of the dead process is broken), then syncs.
        let again = a.run("gc", "--json")
        #expect(again.exit == 0, again.comment)
        #expect(a.ok("log", "--pending").stdout.contains("pending.json"), "the pending action survived")
        for r in [a, b, a] { #expect([0, 3].contains(r.run("sync").exit)) }
        #expect(a.documents() == b.documents())
        #expect(b.json("pending.json")?["v"] as? String == "pending-a")
        #expect(b.json("both.json")?["v"] as? String == "both-b")
        #expect(b.json("keep.json")?["v"] as? String == "keep-3")
        #expect(!a.exists("gone.json") && !b.exists("gone.json"))
        #expect(a.conflictCopies().isEmpty && b.conflictCopies().isEmpty)
        if c.kind == .git {
            Reliability.fsck(remote)
            let tree = CLI.runTool(
                "/usr/bin/git", ["--git-dir", remote, "ls-tree", "-r", "--name-only", "main"], in: "/",
                env: Reliability.gitEnv
            ).stdout
            #expect(!tree.contains(".docsync/tombstones/"), "\(tree)")
        } else {
            #expect(Reliability.folderTombstones(remote).isEmpty)
            #expect(temporaryFiles(remote).isEmpty, "\(temporaryFiles(remote))")
        }
        for r in [a, b] {
            let verify = r.run("verify")
            #expect(verify.exit == 0, verify.comment)
            #expect(temporaryFiles(r.root).isEmpty, "\(temporaryFiles(r.root))")
        }
        // A fresh replica sees the same.
        #expect(CLI.run(["clone", remote, "c"], in: box.root).exit == 0)
        #expect(box.replica("c").documents() == a.documents())
        Reliability.figure("crash-point kind=\(c.kind.rawValue) point=\(c.point) killed=\(killed.exit == 137 ? 1 : 0)")
    }
}

@Suite("A push killed between its document writes and its commit (folder remote)") struct InterruptedPushTests {
    @Test(
        "the next push, by anyone, puts the remote folder back to what was committed: no ghost copy at a path the document left"
    )
    func deadPushLeavesNoGhostCopies() {
        let box = Sandbox()
        box.remoteFormat1 = true  // about format 1's own files
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n", "other.json": "{\"o\": 1}\n"])
        a.sync()
        let b = box.clone("B")

        // A moves the document; its push dies after writing b.json and removing a.json.
        #expect(rename(a.path("a.json"), a.path("b.json")) == 0)
        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": "remote.after-documents"])
        #expect(killed.exit == 137, killed.comment)
        #expect(
            FileManager.default.fileExists(atPath: box.remote + "/b.json"),
            "the uncommitted write is there (else this tests nothing)")

        // Another replica pushes first: the remote folder is put back to its committed state.
        b.write("other.json", b.read("other.json")!.replacing("\"o\": 1", with: "\"o\": 2"))
        #expect(b.run("sync").exit == 0)
        let remoteNow = Files.tree(box.remote, skipMetadata: true)
        #expect(Set(remoteNow.keys) == ["a.json", "other.json"])
        #expect(remoteNow["a.json"] == b.documents()["a.json"])

        // A moves it again before its next sync: the intermediate path must not stay behind.
        #expect(rename(a.path("b.json"), a.path("c.json")) == 0)
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        b.sync()
        #expect(a.documents() == b.documents())
        #expect(
            Files.tree(box.remote, skipMetadata: true) == a.documents(), "the remote folder holds exactly the documents"
        )
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/.docsync/intent"))
        #expect(a.run("verify").exit == 0)
    }

    @Test("killed again and resumed by the same replica: the document lands at its last path only")
    func sameReplicaResumes() {
        let box = Sandbox()
        box.remoteFormat1 = true  // about format 1's own files
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        #expect(rename(a.path("a.json"), a.path("b.json")) == 0)
        #expect(a.run("sync", env: ["DOCSYNC_CRASH_AT": "remote.after-documents"]).exit == 137)
        #expect(rename(a.path("b.json"), a.path("c.json")) == 0)
        #expect(a.run("sync").exit == 0)
        #expect(Set(Files.tree(box.remote, skipMetadata: true).keys) == ["c.json"])
        #expect(a.run("verify").exit == 0)
    }
}

@Suite("A journal batch cut short") struct TornBatchTests {
    @Test(
        "a pull whose journal batch kept its 'seen' line but lost its 'apply' line does not push the old file over the newer version"
    )
    func halfAPullBatchIsNotReplayed() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["d.json": "{\n  \"v\": 1\n}\n"])
        a.sync()
        let b = box.clone("B")
        b.write("d.json", b.read("d.json")!.replacing("\"v\": 1", with: "\"v\": 2"))
        #expect(b.run("sync").exit == 0)

        // A's pull journals its batch and dies; then the batch is cut between its lines,
        // as a crash or a full disk can leave it: the base moved, the file write is gone.
        #expect(a.run("pull", env: ["DOCSYNC_CRASH_AT": "pull.after-journal"]).exit == 137)
        let journalPath = a.path(".docsync/journal")
        let text = try String(contentsOfFile: journalPath, encoding: .utf8)
        guard
            let apply = text.range(
                of: "{\"", options: .backwards,
                range: text
                    .startIndex..<(text.range(of: "\"kind\":\"apply\"", options: .backwards)?.lowerBound
                    ?? text.startIndex))
        else {
            Issue.record("no apply entry in \(text)")
            return
        }
        #expect(text[..<apply.lowerBound].contains("\"kind\":\"seen\""))
        try String(text[..<apply.lowerBound]).write(toFile: journalPath, atomically: false, encoding: .utf8)

        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(b.run("sync").exit == 0)
        #expect(a.json("d.json")?["v"] as? Int == 2, "A has B's edit")
        #expect(b.json("d.json")?["v"] as? Int == 2, "B's edit was not overwritten by A's old file")
        #expect(a.conflictCopies().isEmpty)
        #expect(a.run("verify").exit == 0)
    }
}

// The first sync of a format-1 folder remote upgrades it to the drive layout; killed at
// each step of the upgrade, the next runs finish it (or start again) and lose nothing.
@Suite("upgrade killed at every step") struct UpgradeCrashKillTests {
    @Test(arguments: CrashTable.upgrade)
    func killedUpgradeLosesNothing(_ point: String) throws {
        let box = Sandbox("upgradekill-\(point)")
        Reliability.makeFormat1Remote(box.remote)
        let a = box.initReplica(
            "a",
            files: [
                "keep.json": "{\"v\": \"keep-0\"}", "gone.json": "{\"v\": \"gone-0\"}",
                "other.json": "{\"v\": \"other-0\"}"
            ])
        a.sync()
        let b = box.clone("b")
        b.write("keep.json", b.read("keep.json")!.replacing("keep-0", with: "keep-b"))
        b.remove("gone.json")
        b.sync()
        a.write("other.json", a.read("other.json")!.replacing("other-0", with: "other-a"))
        // Release the hold: the next sync that may write upgrades the remote.
        let formatFile = box.remote + "/.docsync/format"
        let held = try String(contentsOfFile: formatFile, encoding: .utf8)
        try held.replacing("hold-format 1\n", with: "").write(toFile: formatFile, atomically: true, encoding: .utf8)

        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": point])
        #expect(killed.exit == 137, "the upgrade never reached \(point): \(killed)")
        for r in [a, b, a] { #expect(r.run("sync").exit == 0) }
        let format = try String(contentsOfFile: formatFile, encoding: .utf8)
        #expect(format.hasPrefix("docsync-remote 2\n"), "\(format)")
        #expect(a.documents() == b.documents())
        #expect(a.json("keep.json")?["v"] as? String == "keep-b")
        #expect(a.json("other.json")?["v"] as? String == "other-a")
        #expect(!a.exists("gone.json"))
        for r in [a, b] { #expect(r.run("verify").exit == 0) }
        #expect(!FileManager.default.fileExists(atPath: box.remote + "/.docsync/generation"))
        let c = box.clone("c")
        #expect(c.documents() == a.documents())
    }
}
