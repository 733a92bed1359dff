// Selective sync (issue 24): `docsync sparse` and `clone --sparse`, through the built binary,
// against a folder remote and a git repository. A full replica ("server") keeps everything
// and is the check of what reached the remote (on git, `git ls-tree` too, as an
// independent client); the sparse replica's tree is checked file by file.

import Foundation
import Testing

@Suite("Selective sync: docsync sparse")
struct SparseTests {
    typealias Kind = SyncModeTests.Kind

    static func doc(_ fields: [String: Int]) -> String { SyncModeTests.doc(fields) }
    /// Sets (or adds) a top-level field, the file rewritten as an editor would.
    static func set(_ r: Replica, _ file: String, _ field: String, _ value: Int) {
        guard var object = r.json(file) else {
            Issue.record("\(r.root) has no valid \(file) to edit")
            return
        }
        object[field] = value
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        r.write(file, String(decoding: data, as: UTF8.self) + "\n")
    }
    static func number(_ r: Replica, _ file: String, _ field: String) -> Int? { r.json(file)?[field] as? Int }

    /// The document files of a tree, sorted.
    static func files(_ r: Replica) -> [String] {
        Files.list(r.root, skipMetadata: true).filter { $0.hasSuffix(".json") }.sorted()
    }

    /// The document files on the remote's branch, as git lists them (docsync's own files left out).
    static func gitFiles(_ url: String) -> [String] {
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", url, "ls-tree", "-r", "--name-only", "main"], in: "/",
            env: Reliability.gitEnv)
        return r.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(".docsync") }.sorted()
    }

    static let layout = [
        "contacts/ann.json", "contacts/bob.json", "tasks/2026/t1.json", "tasks/2025/t0.json", "archive/old.json",
        "top.json"
    ]

    /// Bob moved by the user from `contacts/` (selected) to `archive/` (not selected).
    static func moveBobOut(_ laptop: Replica) throws { try moveToArchive(laptop, "bob") }

    /// `contacts/NAME.json` moved by the user to `archive/` (outside the laptop's selection).
    static func moveToArchive(_ r: Replica, _ name: String) throws {
        try FileManager.default.createDirectory(atPath: r.path("archive"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            atPath: r.path("contacts/\(name).json"), toPath: r.path("archive/\(name).json"))
    }

    /// A remote of `kind` holding `layout` (each `{"n": 1}`), made by "server", and a
    /// replica "laptop" cloned with `--sparse contacts/ tasks/2026/`.
    static func serverAndLaptop(
        _ box: Sandbox, _ kind: Kind, sparse: [String] = ["contacts/", "tasks/2026/"], format1: Bool = false
    ) -> (url: String, server: Replica, laptop: Replica) {
        let url = Reliability.remote(box, git: kind == .git, format1: format1)
        let server = box.replica("server")
        for path in layout { server.write(path, doc(["n": 1])) }
        #expect(CLI.run(["init", "--remote", url, "--name", "server", "server"], in: box.root).exit == 0)
        server.sync()
        let clone = CLI.run(
            ["clone", "--name", "laptop"] + sparse.flatMap { ["--sparse", $0] } + [url, "laptop"], in: box.root)
        #expect(clone.exit == 0, clone.comment)
        return (url, server, box.replica("laptop"))
    }

    @Test(
        "a copy made outside the selection beside its original rewritten without ids stays a file left out",
        arguments: Kind.allCases)
    func copyOutsideBesideRegenerated(_ kind: Kind) throws {
        let box = Sandbox("sparse-copy-regenerated-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let ann = laptop.refId("contacts/ann.json")!
        laptop.write("archive/ann-copy.json", laptop.read("contacts/ann.json")!)
        // The original rewritten by a script, without its ids: still ann, a new version.
        laptop.write("contacts/ann.json", Self.doc(["n": 5]))
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(!sync.stdout.contains("ann-copy"), "the copy is neither recorded nor sent: \(sync)")
        #expect(laptop.exists("archive/ann-copy.json"), "a copy outside the selection is left alone: \(sync)")
        #expect(laptop.refId("contacts/ann.json") == ann, sync.comment)
        server.sync()
        #expect(Self.files(server) == Self.layout.sorted(), "nothing new on the remote")
        #expect(Self.number(server, "contacts/ann.json", "n") == 5 && server.refId("contacts/ann.json") == ann)
    }

    @Test(
        "a replica's own pushed version that loses to its own write-back is the remote side: resolve --take remote takes it (folder seed 30118)",
        arguments: Kind.allCases)
    func ownPushLosesToOwnWriteBack(_ kind: Kind) throws {
        let box = Sandbox("sparse-own-push-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let before = laptop.read("contacts/ann.json")!
        Self.set(laptop, "contacts/ann.json", "c", 1)
        #expect(laptop.run("sync").exit == 0)
        // Moved out of the laptop's selection elsewhere: the laptop lets it go.
        server.sync()
        try Self.moveToArchive(server, "ann")
        server.sync()
        #expect(laptop.run("sync").exit == 0)
        #expect(!laptop.exists("contacts/ann.json"))
        // The user puts back the file from before its edit (a backup), and changes c.
        laptop.write("contacts/ann.json", before)
        Self.set(laptop, "contacts/ann.json", "c", 2)
        let sync = laptop.run("sync")
        #expect(sync.exit == 3, "c collided: the laptop's pushed 1 against its later 2: \(sync)")
        #expect(Self.number(laptop, "contacts/ann.json", "c") == 2, sync.comment)
        let conflicts = laptop.run("conflicts").stdout
        #expect(conflicts.contains("the remote's version"), "the stored version was the remote's: \(conflicts)")
        let resolve = laptop.run("resolve", "contacts/ann.json", "--take", "remote")
        #expect(resolve.exit == 0, resolve.comment)
        #expect(Self.number(laptop, "contacts/ann.json", "c") == 1, "the remote's value taken: \(resolve)")
    }

    @Test(
        "clone --sparse pulls only the selection; status shows it; a push from the sparse replica changes nothing outside it on the remote",
        arguments: Kind.allCases)
    func cloneSparse(_ kind: Kind) throws {
        let box = Sandbox("sparse-clone-\(kind)")
        let (url, server, laptop) = Self.serverAndLaptop(box, kind)
        #expect(Self.files(laptop) == ["contacts/ann.json", "contacts/bob.json", "tasks/2026/t1.json"])
        let list = laptop.ok("sparse", "list")
        #expect(list.stdout == "/contacts/\n/tasks/2026/\n", list.comment)
        // A new file outside the selection is neither recorded nor sent: status names it.
        laptop.write("archive/draft.json", Self.doc(["n": 9]))
        // A copy of a document it holds, made outside the selection: a new file there too.
        laptop.write("archive/ann-copy.json", laptop.read("contacts/ann.json")!)
        Self.set(laptop, "contacts/ann.json", "n", 2)
        let status = JSONHelp.parse(laptop.run("status", "--json").stdout) as? [String: Any] ?? [:]
        #expect(status["selection"] as? [String] == ["/contacts/", "/tasks/2026/"], "\(status)")
        #expect(status["outsideSelection"] as? [String] == ["archive/ann-copy.json", "archive/draft.json"], "\(status)")
        let text = laptop.run("status").stdout
        #expect(text.contains("Sparse:    keeps only /contacts/ /tasks/2026/"), "\(text)")
        #expect(text.contains("Outside the selection, not synced: 2"), "\(text)")
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(sync.stdout.contains("push    update  contacts/ann.json"), sync.comment)
        #expect(!sync.stdout.contains("draft"), sync.comment)
        #expect(!sync.stdout.contains("ann-copy"), sync.comment)
        #expect(laptop.exists("archive/draft.json"), "a file outside the selection is left alone")
        #expect(laptop.exists("archive/ann-copy.json"), "a copy outside the selection is left alone")
        server.sync()
        #expect(Self.files(server) == Self.layout.sorted(), "the remote keeps everything")
        #expect(Self.number(server, "contacts/ann.json", "n") == 2)
        if kind == .git {
            #expect(Self.gitFiles(url) == Self.layout.sorted())
            Reliability.fsck(url)
        }
    }

    @Test(
        "a document moved out of the selection, then status, then sync: still a rename, never a deletion (status and --dry-run leave the index's outside entries as they were)",
        arguments: Kind.allCases)
    func moveOutThenStatus(_ kind: Kind) throws {
        let box = Sandbox("sparse-move-status-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let bob = laptop.refId("contacts/bob.json")
        try Self.moveBobOut(laptop)
        // Looked at first, as a user does: each says rename.
        let status = laptop.run("status")
        #expect(status.stdout.contains("rename  archive/bob.json  (from contacts/bob.json)"), status.comment)
        let dry = laptop.run("sync", "--dry-run")
        #expect(dry.stdout.contains("rename  archive/bob.json"), dry.comment)
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(
            sync.stdout.contains("push    rename  archive/bob.json  (from contacts/bob.json)"),
            "\(kind): \(sync.comment)")
        #expect(!sync.stdout.contains("delete"), "\(kind): \(sync.comment)")
        server.sync()
        #expect(server.refId("archive/bob.json") == bob, "\(kind): the server still has Bob, moved")
    }

    @Test(
        "a document moved out of the selection, its sync killed once its file and emptied folder were removed: the next run finishes, nothing is deleted anywhere",
        arguments: Kind.allCases)
    func moveOutKilledAfterRemoval(_ kind: Kind) throws {
        let box = Sandbox("sparse-move-killed-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let bob = laptop.refId("contacts/bob.json")
        try Self.moveBobOut(laptop)
        let killed = laptop.run(["sync"], env: ["DOCSYNC_CRASH_AT": "sparse.after-journal"])
        #expect(killed.exit == 137, "\(kind): \(killed.comment)")
        // Killed a moment later: the file removed, and the folder it left empty.
        try FileManager.default.removeItem(atPath: laptop.path("archive"))
        let next = laptop.run("sync")
        #expect(next.exit == 0, "\(kind): \(next.comment)")
        #expect(!next.stdout.contains("delete") && !next.stderr.contains("could not"), "\(kind): \(next.comment)")
        server.sync()
        #expect(server.refId("archive/bob.json") == bob, "\(kind): the server still has Bob, moved")
    }

    @Test(
        "a document moved out of the selection is a rename on the remote and leaves this tree; one moved in from outside is a new document",
        arguments: Kind.allCases)
    func moveOutAndIn(_ kind: Kind) throws {
        let box = Sandbox("sparse-move-\(kind)")
        let (url, server, laptop) = Self.serverAndLaptop(box, kind)
        let bob = laptop.refId("contacts/bob.json")
        try Self.moveBobOut(laptop)
        // Moved in from elsewhere (no refId yet): a new document.
        laptop.write("contacts/carol.json", Self.doc(["n": 5]))
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(sync.stdout.contains("push    rename  archive/bob.json  (from contacts/bob.json)"), sync.comment)
        #expect(sync.stdout.contains("leave   archive/bob.json"), sync.comment)
        #expect(!laptop.exists("archive/bob.json") && !laptop.exists("contacts/bob.json"))
        #expect(Self.files(laptop) == ["contacts/ann.json", "contacts/carol.json", "tasks/2026/t1.json"])
        server.sync()
        #expect(server.refId("archive/bob.json") == bob, "a rename, the same document")
        #expect(!server.exists("contacts/bob.json"))
        #expect(server.exists("contacts/carol.json"))
        // Nothing was deleted on the remote.
        if kind == .dir {
            #expect(Reliability.folderTombstones(url).isEmpty)
        } else {
            #expect(Self.gitFiles(url).contains("archive/bob.json"))
        }
        // The next sync leaves it alone: it is no deletion.
        #expect(laptop.run("sync").stdout.contains("0 recorded, 0 pulled, 0 pushed"))
        server.sync()
        #expect(server.exists("archive/bob.json"))
    }

    @Test(
        "another replica moves a document into the selection: it arrives; moves one out: it leaves, and a local edit that crosses the move is merged and pushed",
        arguments: Kind.allCases)
    func movedByAnotherReplica(_ kind: Kind) throws {
        let box = Sandbox("sparse-moved-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        try FileManager.default.moveItem(
            atPath: server.path("archive/old.json"), toPath: server.path("contacts/old.json"))
        try FileManager.default.createDirectory(atPath: server.path("archive/2"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            atPath: server.path("contacts/ann.json"), toPath: server.path("archive/2/ann.json"))
        Self.set(server, "archive/2/ann.json", "m", 7)
        server.sync()
        Self.set(laptop, "contacts/ann.json", "n", 3)  // not synced yet: crosses the move
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(sync.stdout.contains("pull    create  contacts/old.json"), sync.comment)
        #expect(sync.stdout.contains("leave   archive/2/ann.json"), sync.comment)
        #expect(Self.files(laptop) == ["contacts/bob.json", "contacts/old.json", "tasks/2026/t1.json"])
        server.sync()
        #expect(Self.number(server, "archive/2/ann.json", "n") == 3, "the local edit was lost")
        #expect(Self.number(server, "archive/2/ann.json", "m") == 7, "the remote edit was lost")
        #expect(Self.files(server).count == Self.layout.count)
    }

    @Test(
        "sparse add pulls the new part; sparse remove takes away synced unchanged files only, keeping edited and invalid ones until they are synced; reapply --force drops them, their versions restorable",
        arguments: Kind.allCases)
    func widenAndNarrow(_ kind: Kind) throws {
        let box = Sandbox("sparse-widen-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let add = laptop.run("sparse", "add", "archive/", "top.json")
        #expect(add.exit == 0, add.comment)
        #expect(add.stdout.contains("pull    create  archive/old.json"), add.comment)
        #expect(add.stdout.contains("pull    create  top.json"), add.comment)
        #expect(!laptop.exists(".docsync/sparse-widen"), "the widening mark outlived its pull")
        #expect(
            Self.files(laptop) == [
                "archive/old.json", "contacts/ann.json", "contacts/bob.json", "tasks/2026/t1.json", "top.json"
            ])

        // Narrowing: ann edited (not synced), bob invalid, the rest synced.
        Self.set(laptop, "contacts/ann.json", "n", 4)
        let annEdited = laptop.changesetId("contacts/ann.json")
        laptop.write("contacts/bob.json", "{ not json")
        let remove = laptop.run("sparse", "remove", "contacts/", "top.json")
        #expect(remove.exit == 1, remove.comment)  // bob is not a valid document
        #expect(remove.stdout.contains("contacts/ann.json: outside the selection, kept here"), remove.comment)
        #expect(remove.stdout.contains("contacts/bob.json: outside the selection, kept here"), remove.comment)
        #expect(remove.stdout.contains("leave   top.json"), remove.comment)
        #expect(laptop.exists("contacts/ann.json") && laptop.exists("contacts/bob.json") && !laptop.exists("top.json"))
        #expect(laptop.ok("sparse", "list").stdout == "/tasks/2026/\n/archive/\n")
        // ann's edit goes with the next sync, and then ann leaves; bob stays while invalid.
        let sync = laptop.run("sync")
        #expect(sync.exit == 1, sync.comment)
        #expect(sync.stdout.contains("push    update  contacts/ann.json"), sync.comment)
        #expect(sync.stdout.contains("leave   contacts/ann.json"), sync.comment)
        #expect(!laptop.exists("contacts/ann.json") && laptop.exists("contacts/bob.json"))
        server.sync()
        #expect(Self.number(server, "contacts/ann.json", "n") == 4)
        #expect(server.exists("top.json"), "narrowing deleted on the remote")
        #expect(annEdited != nil)

        // --force: bob's invalid file is kept under .docsync/rejected/ and leaves; nothing
        // is deleted on the remote.
        let force = laptop.run("sparse", "reapply", "--force")
        #expect(force.exit == 0, force.comment)
        #expect(!laptop.exists("contacts/bob.json"))
        let rejected = (try? FileManager.default.contentsOfDirectory(atPath: laptop.path(".docsync/rejected"))) ?? []
        #expect(rejected.count == 1 && rejected[0].hasPrefix("bob."), "\(rejected)")
        server.sync()
        #expect(server.exists("contacts/bob.json"))
        // Outside the selection, restore says so.
        let restore = laptop.run("restore", "contacts/bob.json")
        #expect(restore.exit == 1)
        #expect(restore.stderr.contains("outside this replica's selection"), restore.comment)
        #expect(restore.stderr.contains("docsync sparse add contacts/"), restore.comment)
        // A change not sent, forced out, is restorable once the part is selected again.
        Self.set(laptop, "archive/old.json", "n", 6)
        let forced = laptop.run("sparse", "remove", "--force", "archive/")
        #expect(forced.exit == 0, forced.comment)
        #expect(!laptop.exists("archive/old.json"))
        server.sync()
        #expect(Self.number(server, "archive/old.json", "n") == 1, "a change forced out reached the remote")
        // The dropped version is in this replica's journal (`log` names it).
        let log = laptop.run("log", "archive/old.json", "--json")
        let local = (JSONHelp.parse(log.stdout) as? [String: Any])?["local"] as? [[String: Any]] ?? []
        let lostVersion = local.last { $0["kind"] as? String == "update" }?["changesetId"] as? String
        #expect(lostVersion != nil, log.comment)
        let back = laptop.run("sparse", "add", "archive/")
        #expect(back.exit == 0, back.comment)
        #expect(Self.number(laptop, "archive/old.json", "n") == 1)
        if let lostVersion {
            let restored = laptop.run("restore", "archive/old.json", "--at", lostVersion)
            #expect(restored.exit == 0, restored.comment)
            #expect(Self.number(laptop, "archive/old.json", "n") == 6, "the forced-out version is not restorable")
        }
    }

    @Test(
        "restore names a kept document by its refId as well as by its path (found by the model check, folder seed 46)",
        arguments: Kind.allCases)
    func restoreByRefId(_ kind: Kind) throws {
        let box = Sandbox()
        let (_, _, laptop) = Self.serverAndLaptop(box, kind)
        let refId = try #require(laptop.json("contacts/ann.json")?["refId"] as? String)
        let first = try #require(laptop.changesetId("contacts/ann.json"))
        Self.set(laptop, "contacts/ann.json", "n", 2)
        laptop.sync()
        let restored = laptop.run("restore", refId, "--at", first)
        #expect(restored.exit == 0, restored.comment)
        #expect(Self.number(laptop, "contacts/ann.json", "n") == 1, restored.comment)
    }

    @Test(
        "sparse disable pulls the rest of the remote; set replaces the selection; bad patterns and removing what is not selected are clear errors",
        arguments: [Kind.dir])
    func setAndDisable(_ kind: Kind) throws {
        let box = Sandbox("sparse-set-\(kind)")
        let (_, _, laptop) = Self.serverAndLaptop(box, kind)
        // --dry-run says what would be pulled and removed, and changes nothing.
        let before = laptop.documents(), selectionBefore = laptop.read(".docsync/sparse")
        let wouldAdd = laptop.run("sparse", "add", "--dry-run", "archive/")
        #expect(wouldAdd.exit == 0, wouldAdd.comment)
        #expect(wouldAdd.stdout.contains("would pull    create  archive/old.json"), wouldAdd.comment)
        #expect(wouldAdd.stdout.contains("(selection: /contacts/ /tasks/2026/ /archive/)"), wouldAdd.comment)
        let wouldRemove = laptop.run("sparse", "remove", "--dry-run", "contacts/")
        #expect(wouldRemove.exit == 0, wouldRemove.comment)
        #expect(wouldRemove.stdout.contains("would leave   contacts/ann.json"), wouldRemove.comment)
        #expect(laptop.documents() == before && laptop.read(".docsync/sparse") == selectionBefore)
        #expect(!laptop.exists(".docsync/sparse-widen"))
        let bad = laptop.run("sparse", "add", "../elsewhere")
        #expect(bad.exit == 1 && bad.stderr.contains("'../elsewhere': not a selection pattern"), bad.comment)
        let missing = laptop.run("sparse", "remove", "archive/")
        #expect(missing.exit == 1 && missing.stderr.contains("'/archive/' is not in the selection"), missing.comment)
        let set = JSONOutputTests.check(laptop.run("sparse", "set", "--json", "tasks/"), "sparse", command: "sparse")
        #expect(set["selection"] as? [String] == ["/tasks/"], "\(set)")
        #expect(set["leftSelection"] as? [String] == ["contacts/ann.json", "contacts/bob.json"], "\(set)")
        #expect((set["pulled"] as? [[String: Any]])?.count == 1, "\(set)")
        let listed = JSONOutputTests.check(
            laptop.run("sparse", "list", "--json"), "sparse-list", command: "sparse list")
        #expect(listed["selection"] as? [String] == ["/tasks/"])
        _ = JSONOutputTests.check(laptop.run("status", "--json"), "status", command: "status")
        #expect(Self.files(laptop) == ["tasks/2025/t0.json", "tasks/2026/t1.json"])
        // Widening with the remote away: the selection is kept, the next sync pulls the part.
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.remote + ".away")
        let offline = laptop.run("sparse", "add", "archive/")
        #expect(offline.exit == 75, offline.comment)
        #expect(offline.stdout.contains("its new part is pulled by the next sync"), offline.comment)
        #expect(laptop.exists(".docsync/sparse-widen") && !laptop.exists("archive/old.json"))
        try FileManager.default.moveItem(atPath: box.remote + ".away", toPath: box.remote)
        let back = laptop.run("sync")
        #expect(back.exit == 0 && laptop.exists("archive/old.json"), back.comment)
        #expect(!laptop.exists(".docsync/sparse-widen"))
        let disable = laptop.run("sparse", "disable")
        #expect(disable.exit == 0, disable.comment)
        #expect(Self.files(laptop) == Self.layout.sorted())
        #expect(!laptop.exists(".docsync/sparse"))
        let again = laptop.run("sparse", "disable")
        #expect(again.exit == 1 && again.stderr.contains("keeps everything already"), again.comment)
        #expect(laptop.ok("sparse", "list").stdout.contains("keeps everything"))
    }

    @Test(
        "a full, a sparse and a receive-only sparse replica syncing at the same moment against one remote: every edit arrives, nothing outside a selection is touched",
        arguments: Kind.allCases)
    func concurrentReplicas(_ kind: Kind) throws {
        let box = Sandbox("sparse-concurrent-\(kind)")
        let (url, server, laptop) = Self.serverAndLaptop(box, kind)
        let made = CLI.run(
            ["clone", "--name", "report", "--receive-only", "--sparse", "tasks/", url, "report"], in: box.root)
        #expect(made.exit == 0, made.comment)
        let report = box.replica("report")
        #expect(Self.files(report) == ["tasks/2025/t0.json", "tasks/2026/t1.json"])
        for round in 1...3 {
            Self.set(server, "archive/old.json", "n", 10 + round)
            Self.set(server, "tasks/2026/t1.json", "s\(round)", round)
            Self.set(laptop, "contacts/ann.json", "n", 20 + round)
            Self.set(laptop, "tasks/2026/t1.json", "l\(round)", round)
            Self.set(report, "tasks/2025/t0.json", "r", round)  // never sent
            let runs = runConcurrently([
                (["sync"], server.root), (["sync"], laptop.root), (["sync"], report.root)
            ])
            for run in runs { #expect([0, 75].contains(run.exit), run.comment) }
        }
        for _ in 0..<2 { for r in [server, laptop, report] { _ = r.run("sync") } }
        #expect(Self.number(server, "contacts/ann.json", "n") == 23)
        #expect(Self.number(server, "archive/old.json", "n") == 13)
        for round in 1...3 {
            #expect(Self.number(server, "tasks/2026/t1.json", "s\(round)") == round)
            #expect(Self.number(server, "tasks/2026/t1.json", "l\(round)") == round)
            #expect(Self.number(laptop, "tasks/2026/t1.json", "l\(round)") == round)
            #expect(Self.number(report, "tasks/2026/t1.json", "s\(round)") == round)
        }
        #expect(Self.number(server, "tasks/2025/t0.json", "r") == nil, "receive-only sent its change")
        #expect(Self.files(server) == Self.layout.sorted())
        #expect(Self.files(laptop) == ["contacts/ann.json", "contacts/bob.json", "tasks/2026/t1.json"])
        #expect(Self.files(report) == ["tasks/2025/t0.json", "tasks/2026/t1.json"])
        if kind == .git { Reliability.fsck(url) }
    }

    @Test(
        "sparse remove killed after its journal: the files stay until the next run finishes it, and nothing is deleted on the remote",
        arguments: Kind.allCases)
    func killedNarrowingIsFinished(_ kind: Kind) throws {
        let box = Sandbox("sparse-kill-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let killed = laptop.run(["sparse", "remove", "contacts/"], env: ["DOCSYNC_CRASH_AT": "sparse.after-journal"])
        #expect(killed.exit == 137, "the narrowing died there: \(killed)")
        #expect(laptop.exists("contacts/ann.json") && laptop.exists("contacts/bob.json"), "killed before a file went")
        let next = laptop.run("sync")
        #expect(next.exit == 0, next.comment)
        #expect(!next.stdout.contains("push    delete"), "the leaving documents were sent as deletions: \(next.stdout)")
        #expect(Self.files(laptop) == ["tasks/2026/t1.json"])
        server.sync()
        #expect(Self.files(server) == Self.layout.sorted(), "the remote lost a document")
        #expect(laptop.run("sync").stdout.contains("0 recorded, 0 pulled, 0 pushed"))
    }

    static func purged(_ r: Replica, dryRun: Bool = false) -> [String] {
        let run = r.run(["gc", "--json"] + (dryRun ? ["--dry-run"] : []))
        #expect(run.exit == 0, run.comment)
        let report = JSONHelp.parse(run.stdout) as? [String: Any] ?? [:]
        return ((report["remote"] as? [String: Any])?["purged"] as? [[String: Any]] ?? []).compactMap {
            $0["path"] as? String
        }.sorted()
    }

    @Test(
        "gc does not wait for a sparse replica to read tombstones of documents it does not select, and waits for one it holds (folder remotes of both layouts, git)",
        arguments: [(Kind.dir, false), (Kind.dir, true), (Kind.git, false)])
    func gcAndSparseReplicas(_ kind: Kind, format1: Bool) throws {
        let box = Sandbox("sparse-gc-\(kind)\(format1 ? "1" : "")")
        let (url, server, laptop) = Self.serverAndLaptop(box, kind, format1: format1)
        // Known to the remote (on git, by a push; a folder remote knows it from its clone).
        Self.set(laptop, "contacts/ann.json", "n", 2)
        laptop.sync()
        server.sync()
        server.remove("archive/old.json")
        server.remove("contacts/bob.json")
        server.sync()
        // The laptop has read neither deletion: only the one it holds waits for it.
        #expect(Self.purged(server, dryRun: true) == ["archive/old.json"])
        #expect(Self.purged(server) == ["archive/old.json"])
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(!laptop.exists("contacts/bob.json"), "the deletion of a document it holds reached it")
        if kind == .git {
            // On git a replica shows it has read a deletion by pushing on top of it.
            Self.set(laptop, "contacts/ann.json", "n", 3)
            laptop.sync()
        }
        #expect(Self.purged(server) == ["contacts/bob.json"])
        server.sync()
        #expect(
            Self.files(server)
                == Self.layout.filter { !["archive/old.json", "contacts/bob.json"].contains($0) }.sorted())
        if kind == .git { Reliability.fsck(url) }
    }

    @Test(
        "a file copied into the selection that carries the refId of a document outside it is met as a document both sides made: merged, never sent over the remote's version unmerged",
        arguments: Kind.allCases)
    func copiedInWithAKnownRefId(_ kind: Kind) throws {
        let box = Sandbox("sparse-carried-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        let old = server.read("archive/old.json")!
        let refId = server.refId("archive/old.json")
        Self.set(server, "archive/old.json", "n", 5)
        Self.set(server, "archive/old.json", "s", 1)
        server.sync()
        laptop.sync()  // past the change: no pull brings the document again
        // The laptop gets the older copy from elsewhere (a backup, a mail) into contacts/.
        laptop.write("contacts/old.json", old)
        Self.set(laptop, "contacts/old.json", "x", 7)
        let sync = laptop.run("sync")
        #expect(sync.exit == 3, "the differing field is a recorded conflict: \(sync)")
        let told = server.run("sync")
        #expect([0, 3].contains(told.exit), told.comment)
        let here = try #require(
            Self.files(server).first { server.refId($0) == refId }, "the document is gone from the remote")
        #expect(Self.files(server).filter { server.refId($0) == refId }.count == 1, "one document, not two")
        #expect(Self.number(server, here, "s") == 1, "the remote's field was lost: \(server.read(here) ?? "")")
        #expect(Self.number(server, here, "x") == 7, "the laptop's field was lost")
        let conflicts = JSONHelp.parse(laptop.run("conflicts", "--json").stdout) as? [String: Any]
        let listed = (conflicts?["conflicts"] as? [[String: Any]] ?? []).compactMap { $0["refId"] as? String }
        #expect(listed == [refId], "\(conflicts ?? [:])")
    }

    @Test(
        "a copy left outside the selection stays left out when its original is deleted or moved later: never taken for the document moved out",
        arguments: Kind.allCases)
    func copyOutsideStaysLeftOut(_ kind: Kind) throws {
        let box = Sandbox("sparse-copy-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        laptop.write("archive/ann.json", laptop.read("contacts/ann.json")!)
        laptop.write("archive/bob.json", laptop.read("contacts/bob.json")!)
        #expect(laptop.run("sync").stdout.contains("0 recorded, 0 pulled, 0 pushed"))
        laptop.remove("contacts/ann.json")
        try FileManager.default.moveItem(
            atPath: laptop.path("contacts/bob.json"), toPath: laptop.path("tasks/2026/bob.json"))
        let sync = laptop.run("sync")
        #expect(sync.exit == 0, sync.comment)
        #expect(sync.stdout.contains("push    delete  contacts/ann.json"), sync.comment)
        #expect(sync.stdout.contains("push    rename  tasks/2026/bob.json  (from contacts/bob.json)"), sync.comment)
        #expect(laptop.exists("archive/ann.json") && laptop.exists("archive/bob.json"), "the copies are left alone")
        server.sync()
        #expect(!server.exists("contacts/ann.json") && !server.exists("archive/ann.json"))
        #expect(server.exists("tasks/2026/bob.json") && !server.exists("archive/bob.json"))
    }

    @Test(
        "a sync killed right after its push landed a move out of the selection: the next sync, with nothing left to send, still lets the document go",
        arguments: Kind.allCases)
    func killedAfterPushStillLeaves(_ kind: Kind) throws {
        let box = Sandbox("sparse-killed-push-\(kind)")
        let (_, server, laptop) = Self.serverAndLaptop(box, kind)
        try Self.moveBobOut(laptop)
        let killed = laptop.run(["sync"], env: ["DOCSYNC_CRASH_AT": "push.after-remote-commit"])
        #expect(killed.exit == 137, "the sync died after its push: \(killed)")
        #expect(laptop.exists("archive/bob.json"))
        let next = laptop.run("sync")
        #expect(next.exit == 0, next.comment)
        #expect(!laptop.exists("archive/bob.json"), "the document moved out stayed: \(next.stdout)")
        server.sync()
        #expect(server.exists("archive/bob.json") && !server.exists("contacts/bob.json"))
    }
}

extension SparseTests {
    @Test(
        "a conflict record shared while its document was outside the selection does not come with the document; a later read of the whole listing (a folder remote's feed compacted by gc) brings it",
        arguments: Kind.allCases)
    func recordPassedOverBeforeTheDocumentMovedIn(_ kind: Kind) throws {
        let box = Sandbox("sparse-record-\(kind)")
        let (url, server, laptop) = Self.serverAndLaptop(box, kind)
        #expect(CLI.run(["clone", "--name", "desk", url, "desk"], in: box.root).exit == 0)
        let desk = box.replica("desk")
        // server and desk both change n of top.json (outside the laptop's selection).
        Self.set(server, "top.json", "n", 2)
        server.sync()
        usleep(20_000)
        Self.set(desk, "top.json", "n", 3)
        #expect(desk.run("sync").exit == 3, "desk's later save wins, server's value is stored")
        #expect(laptop.run("sync").exit == 0)
        #expect(ConflictPointOfViewTests.conflicts(laptop).isEmpty, "passed over: the document is not the laptop's")
        // The document moves into the selection: it arrives, its old record does not.
        #expect(server.run("sync").exit == 3, "the server learns its value lost")
        try FileManager.default.moveItem(atPath: server.path("top.json"), toPath: server.path("contacts/top.json"))
        server.sync()
        #expect(laptop.run("sync").exit == 0)
        #expect(Self.number(laptop, "contacts/top.json", "n") == 3)
        #expect(ConflictPointOfViewTests.conflicts(laptop).isEmpty, "the record does not travel with the document")
        guard kind == .dir else { return }
        // A deletion everyone has seen, purged by gc: the feed is compacted, and the laptop's
        // next pull reads the whole listing, which offers every shared record.
        server.remove("contacts/ann.json")
        server.sync()
        desk.sync()
        laptop.sync()
        let gc = server.run("gc")
        #expect(gc.exit == 0, gc.comment)
        #expect(laptop.run("sync").exit == 0)
        let listed = ConflictPointOfViewTests.conflicts(laptop)
        let refId = laptop.json("contacts/top.json")?["refId"] as? String
        #expect(
            listed.count == 1 && refId != nil && listed.first?["refId"] as? String == refId,
            "the record of the document the laptop now holds: \(listed)")
    }
}
