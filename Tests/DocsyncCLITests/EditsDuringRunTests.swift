// Files saved, renamed or deleted while a sync of the same tree runs (issue 42: the model
// check's `editDuringSync` found both defects). Each run is held at a named point
// (DOCSYNC_PAUSE_AT) while the test plays the user, so the race happens every time:
// - a file renamed into a folder the walk had already listed, between the walk and the
//   read: the document was "cannot read" (exit 1); now the tree is walked again and the
//   rename goes out with this run;
// - a file saved while the pull meant to write it: the pull left it (right) and the cursor
//   stayed, so every push attempt found the remote "moved" and the run gave up with exit
//   75 blaming other replicas; now the run records the save and merges it, and exits 0;
// - an edited file moved between its read and its stamp: the stamp left it alone (right)
//   but the run went on without the change, pushing neither the edit nor the move, and
//   the file kept its old changesetId (model check, git seed 6003); now the tree is
//   recorded again and both go out with this run;
// - a file deleted while the pull meant to write a merge into it: the run recorded the
//   deletion, then decided the document again from the file as it was before, so the
//   deletion lost silently and the first pull's field conflict stayed (model check, folder
//   seed 5010); now that pull's decision is forgotten and the deletion is decided;
// - a file renamed while the pull meant to write it: the pull wrote the remote's version
//   at the old path, beside the renamed file (one document in two files; model check,
//   folder seed 55); now it is left alone, and the rename and the remote's edit both apply.

import Foundation
import Testing

@Suite("Edits while a sync runs")
struct EditsDuringRunTests {
    /// `sync` in `r`, held at `point` until the returned closure opens the gate.
    static func held(_ r: Replica, _ box: Sandbox, at point: String) -> (run: BackgroundRun, release: () -> Void) {
        let gate = box.path("gate-\(point)")
        let run = BackgroundRun(["sync"], in: r.root, env: ["DOCSYNC_PAUSE_AT": point, "DOCSYNC_PAUSE_FILE": gate])
        #expect(
            waitUntil(seconds: 60) { FileManager.default.fileExists(atPath: gate + ".reached") },
            "the sync reached \(point)")
        return (run, { #expect(FileManager.default.createFile(atPath: gate, contents: nil), "the gate opens") })
    }

    /// Whether `status --json` of `r` lists no unrecorded change (false if it cannot be
    /// read), and what it said.
    static func nothingUnrecorded(_ r: Replica) -> (Bool, String) {
        let out = r.run("status", "--json").stdout
        let status = JSONHelp.parse(out) as? [String: Any]
        return ((status?["unrecorded"] as? [Any])?.isEmpty ?? false, out)
    }

    /// A with `files`, synced to a new remote of the kind; B cloned from it.
    static func pair(_ box: Sandbox, git: Bool, _ files: [String: String]) -> (a: Replica, b: Replica) {
        let url = Reliability.remote(box, git: git)
        let a = box.replica("A")
        for (path, text) in files { a.write(path, text) }
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        return (a, ReliabilityConcurrencyTests.clone(box, "B", remote: url))
    }

    /// `pair` with `d.json` `{"x": "base", "y": "base"}` (and `files`), then B's edit of `x`
    /// to "fromB" synced: a remote change for A's next pull to write.
    static func remoteEditedX(_ box: Sandbox, git: Bool, _ files: [String: String] = [:]) -> (a: Replica, b: Replica) {
        var all = files
        all["d.json"] = "{\n  \"x\": \"base\",\n  \"y\": \"base\"\n}\n"
        let (a, b) = pair(box, git: git, all)
        b.write("d.json", b.read("d.json")!.replacingOccurrences(of: "\"x\": \"base\"", with: "\"x\": \"fromB\""))
        #expect(b.run("sync").exit == 0)
        return (a, b)
    }

    @Test(
        "a file renamed between the walk and its read goes out as a rename in the same run, nothing reported unreadable",
        arguments: [false, true])
    func renamedWhileScanning(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["top.json": "{\"n\": 1}\n", "sub/other.json": "{\"n\": 2}\n"])
        // Changed, so the scan reads it (not vouched for by the stat cache).
        a.write("top.json", "{\"n\": 10}\n")
        let (run, release) = Self.held(a, box, at: "record.after-walk")
        #expect(rename(a.path("top.json"), a.path("sub/top.json")) == 0)
        release()
        let result = run.wait()
        #expect(result.exit == 0, "\(git ? "git" : "folder"): \(result.comment)")
        #expect(!result.stderr.contains("cannot read"), result.comment)
        #expect(b.run("sync").exit == 0)
        #expect(b.json("sub/top.json")?["n"] as? Int == 10, "B got the moved, edited document")
        #expect(!b.exists("top.json"), "and not at its old path")
        let (recorded, status) = Self.nothingUnrecorded(a)
        #expect(recorded, "nothing left unrecorded: \(status)")
    }

    @Test(
        "an edited file moved between its read and its stamp goes out in the same run, edit and rename, stamped at its new path",
        arguments: [false, true])
    func movedBeforeItsStamp(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["top.json": "{\"n\": 1}\n", "sub/other.json": "{\"n\": 2}\n"])
        // Edited before the run: the run reads it, then stamps it.
        a.write("top.json", a.read("top.json")!.replacingOccurrences(of: "\"n\": 1", with: "\"n\": 10"))
        let (run, release) = Self.held(a, box, at: "record.before-stamp")
        #expect(rename(a.path("top.json"), a.path("sub/moved.json")) == 0)
        release()
        let result = run.wait()
        let kind = git ? "git" : "folder"
        #expect(result.exit == 0, "\(kind): \(result.comment)")
        #expect(!a.exists("top.json"), "nothing written back at the old path: \(result.comment)")
        let (recorded, status) = Self.nothingUnrecorded(a)
        #expect(recorded, "\(kind): the edit and the move were recorded by the run: \(status)")
        #expect(b.run("sync").exit == 0)
        #expect(b.json("sub/moved.json")?["n"] as? Int == 10, "\(kind): B got the edit at the new path")
        #expect(!b.exists("top.json"), "\(kind): and not the old path")
        // One changesetId, one content: A's file carries the version B received.
        let mine = a.json("sub/moved.json"), theirs = b.json("sub/moved.json")
        #expect(mine?["changesetId"] as? String != nil)
        #expect(mine?["changesetId"] as? String == theirs?["changesetId"] as? String, "\(kind): A's file is stamped")
    }

    @Test(
        "a file saved between the stamp's check and its replacement keeps the save, which goes out in the same run",
        arguments: [false, true], [false, true])
    func savedWhileStamping(git: Bool, byRename: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["top.json": "{\"n\": 1}\n"])
        a.write("top.json", a.read("top.json")!.replacingOccurrences(of: "\"n\": 1", with: "\"n\": 10"))
        let (run, release) = Self.held(a, box, at: "record.before-swap")
        // The editor's save, in the instant the stamp has checked the file and not yet
        // replaced it (model check, folder seed 20261121 step 53).
        let saved = a.read("top.json")!.replacingOccurrences(of: "\"n\": 10", with: "\"n\": 20")
        if byRename {
            a.write("top.json.swp", saved)
            #expect(rename(a.path("top.json.swp"), a.path("top.json")) == 0)
        } else {
            a.write("top.json", saved)
        }
        release()
        let result = run.wait()
        let kind = "\(git ? "git" : "folder"), \(byRename ? "saved by rename" : "saved in place")"
        #expect(result.exit == 0, "\(kind): \(result.comment)")
        #expect(a.json("top.json")?["n"] as? Int == 20, "\(kind): the save is kept: \(a.read("top.json") ?? "")")
        let (recorded, status) = Self.nothingUnrecorded(a)
        #expect(recorded, "\(kind): the save was recorded by the run: \(status)")
        #expect(b.run("sync").exit == 0)
        #expect(b.json("top.json")?["n"] as? Int == 20, "\(kind): B got the save")
        let leftovers = ((try? FileManager.default.contentsOfDirectory(atPath: a.root)) ?? []).filter {
            $0.hasPrefix(".docsync-tmp") || $0.contains("docsync-kept")
        }
        #expect(leftovers.isEmpty, "\(kind): nothing left beside the file: \(leftovers)")
    }

    @Test(
        "a file saved between the pull's check of it and the swap that writes or removes it keeps the save",
        arguments: [false, true], [false, true])
    func savedWhilePullSwaps(git: Bool, remoteRenamed: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.remoteEditedX(box, git: git)
        if remoteRenamed {
            // The pull removes d.json (and writes e.json): the removal is what races the save.
            #expect(rename(b.path("d.json"), b.path("e.json")) == 0)
            #expect(b.run("sync").exit == 0)
        }
        let (run, release) = Self.held(a, box, at: "pull.before-swap")
        let saved = a.read("d.json")!.replacingOccurrences(of: "\"y\": \"base\"", with: "\"y\": \"fromA\"")
        a.write("d.json.swp", saved)
        #expect(rename(a.path("d.json.swp"), a.path("d.json")) == 0)
        release()
        let result = run.wait()
        let kind = "\(git ? "git" : "folder"), \(remoteRenamed ? "renamed" : "edited") on the remote"
        #expect(result.exit == 0, "\(kind): \(result.comment)")
        let path = remoteRenamed ? "e.json" : "d.json"
        #expect(a.json(path)?["y"] as? String == "fromA", "\(kind): A's save kept: \(result.comment)")
        #expect(a.json(path)?["x"] as? String == "fromB", "\(kind): B's edit merged in: \(result.comment)")
        #expect(!remoteRenamed || !a.exists("d.json"), "\(kind): one file for the document")
        #expect(b.run("sync").exit == 0)
        #expect(b.json(path)?["y"] as? String == "fromA", "\(kind): A's save went out")
    }

    @Test(
        "a pulled file moved away the instant it was written, then its old folder not looked at: the move keeps the identity",
        arguments: [false, true])
    func movedJustAfterThePullWroteIt(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["tasks/x/d.json": "{\"n\": 1}\n", "tasks/x/o.json": "{\"n\": 2}\n"])
        let refId = a.json("tasks/x/d.json")?["refId"] as? String
        b.write("tasks/x/d.json", b.read("tasks/x/d.json")!.replacing("\"n\": 1", with: "\"n\": 5"))
        #expect(b.run("sync").exit == 0)
        let (run, release) = Self.held(a, box, at: "pull.after-swap")
        try FileManager.default.createDirectory(atPath: a.path("notes"), withIntermediateDirectories: true)
        #expect(rename(a.path("tasks/x/d.json"), a.path("notes/e.json")) == 0)
        release()
        let kind = git ? "git" : "folder"
        let moved = run.wait()
        #expect(moved.exit == 0, "\(kind): \(moved.comment)")
        // tasks/ moved to another disk, a symlink in its place: not looked at.
        #expect(rename(a.path("tasks"), box.path("elsewhere")) == 0)
        #expect(symlink(box.path("elsewhere"), a.path("tasks")) == 0)
        let blind = a.run("sync")
        #expect(blind.exit == 1, "\(kind): tasks/ not looked at: \(blind.comment)")
        #expect(a.json("notes/e.json")?["refId"] as? String == refId, "\(kind): moved, not copied: \(blind.comment)")
        #expect(unlink(a.path("tasks")) == 0 && rename(box.path("elsewhere"), a.path("tasks")) == 0)
        #expect(a.run("sync").exit == 0)
        #expect(b.run("sync").exit == 0)
        #expect(b.json("notes/e.json")?["refId"] as? String == refId, "\(kind): B sees the move: one document")
        #expect(b.json("notes/e.json")?["n"] as? Int == 5)
        #expect(!b.exists("tasks/x/d.json") && b.exists("tasks/x/o.json"))
    }

    @Test(
        "a file saved while the pull meant to write it is merged in the same run: exit 0, not 75, both edits everywhere",
        arguments: [false, true])
    func savedWhilePulling(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.remoteEditedX(box, git: git, ["e.json": "{\"n\": 1}\n"])
        // A has something of its own to push, so the run pushes after its pull.
        a.write("e.json", a.read("e.json")!.replacingOccurrences(of: "1", with: "2"))
        let (run, release) = Self.held(a, box, at: "pull.after-journal")
        // The user saves d.json from an editor buffer read before the pull wrote it.
        a.write("d.json", a.read("d.json")!.replacingOccurrences(of: "\"y\": \"base\"", with: "\"y\": \"fromA\""))
        release()
        let result = run.wait()
        #expect(result.exit == 0, "\(git ? "git" : "folder"): \(result.comment)")
        #expect(!result.stderr.contains("kept changing"), result.comment)
        #expect(a.json("d.json")?["x"] as? String == "fromB", "B's edit merged in: \(a.read("d.json") ?? "")")
        #expect(a.json("d.json")?["y"] as? String == "fromA", "A's save kept: \(a.read("d.json") ?? "")")
        #expect(b.run("sync").exit == 0)
        #expect(b.json("d.json")?["y"] as? String == "fromA", "A's save went out in the same run")
        #expect(b.json("e.json")?["n"] as? Int == 2)
        #expect(a.run("status", "--json").exit == 0)
    }

    @Test(
        "a file deleted while the pull meant to merge it into it: one record, the deletion's, not also the field conflict the pull left unapplied",
        arguments: [false, true])
    func deletedWhileMerging(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["d.json": "{\n  \"x\": \"base\",\n  \"y\": \"base\"\n}\n"])
        let ref = try #require(a.refId("d.json"))
        // A's edit of x, saved before B's: the pull merges the two, B's x wins (a field
        // conflict, A's version stored) and the merge is written over A's file.
        a.write("d.json", a.read("d.json")!.replacingOccurrences(of: "\"x\": \"base\"", with: "\"x\": \"fromA\""))
        usleep(20_000)
        b.write("d.json", b.read("d.json")!.replacingOccurrences(of: "\"x\": \"base\"", with: "\"x\": \"fromB\""))
        #expect(b.run("sync").exit == 0)
        let (run, release) = Self.held(a, box, at: "pull.after-journal")
        a.remove("d.json")
        release()
        let result = run.wait()
        let kind = git ? "git" : "folder"
        // As if the deletion came first: deletion against B's edit, the edit kept (SPEC).
        #expect(a.json("d.json")?["x"] as? String == "fromB", "\(kind): B's edit kept: \(result.comment)")
        let listed =
            (JSONHelp.parse(a.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        let mine = listed.filter { $0["refId"] as? String == ref }
        #expect(
            mine.count == 1 && mine.first?["deleted"] as? Bool == true,
            "\(kind): one record, the deletion's: \(mine) \(result.comment)")
        #expect(b.run("sync").exit == 0)
        #expect(b.json("d.json")?["x"] as? String == "fromB")
    }

    @Test(
        "a file renamed while the pull meant to write it is not written back at its old path: the rename and the remote's edit both apply",
        arguments: [false, true])
    func renamedWhilePulling(git: Bool) throws {
        let box = Sandbox()
        let (a, b) = Self.remoteEditedX(box, git: git)
        let (run, release) = Self.held(a, box, at: "pull.after-journal")
        #expect(rename(a.path("d.json"), a.path("e.json")) == 0)
        release()
        let result = run.wait()
        #expect(result.exit == 0, "\(git ? "git" : "folder"): \(result.comment)")
        #expect(!a.exists("d.json"), "not written back at the old path: \(result.comment)")
        #expect(a.json("e.json")?["x"] as? String == "fromB", "the remote's edit reached the renamed file")
        #expect(b.run("sync").exit == 0)
        #expect(!b.exists("d.json") && b.json("e.json")?["x"] as? String == "fromB", "B sees the rename")
    }
}

extension EditsDuringRunTests {
    @Test(
        "a file with its own edit renamed while the pull meant to write the merge into it: the merge reaches the renamed file",
        arguments: [false, true], ["pull.after-journal", "pull.before-swap"])
    func editedFileRenamedWhileMerging(git: Bool, point: String) throws {
        let box = Sandbox()
        let (a, b) = Self.remoteEditedX(box, git: git)
        // A's own edit of y, not synced: the pull merges it with B's edit of x (no collision).
        a.write("d.json", a.read("d.json")!.replacingOccurrences(of: "\"y\": \"base\"", with: "\"y\": \"fromA\""))
        let (run, release) = Self.held(a, box, at: point)
        #expect(rename(a.path("d.json"), a.path("e.json")) == 0)
        release()
        let result = run.wait()
        let kind = "\(git ? "git" : "folder") at \(point)"
        #expect(result.exit == 0, "\(kind): \(result.comment)")
        #expect(!a.exists("d.json"), "\(kind): not written back at the old path: \(result.comment)")
        let merged = a.json("e.json")
        #expect(
            merged?["x"] as? String == "fromB" && merged?["y"] as? String == "fromA",
            "\(kind): \(a.read("e.json") ?? "")")
        #expect(b.run("sync").exit == 0)
        #expect(!b.exists("d.json"), "\(kind): B sees the rename")
        #expect(b.read("e.json") == a.read("e.json"), "\(kind): B has the same file")
    }

    @Test(
        "a file with an earlier edit moved into an lww folder while the pull meant to merge it (or after a run killed there): the later save wins whole, the moved one is not dated anew",
        arguments: [false, true], ["pull.after-journal", "pull.before-swap", "killed"])
    func earlierEditMovedIntoLWWWhileMerging(git: Bool, point: String) throws {
        let box = Sandbox()
        let (a, b) = Self.pair(box, git: git, ["d.json": "{\n  \"x\": \"base\",\n  \"y\": \"base\"\n}\n"])
        #expect(a.run("config", "merge.policyFor.notes/**", "lww").exit == 0)
        try FileManager.default.createDirectory(atPath: a.path("notes"), withIntermediateDirectories: true)
        // A saves y first; B saves x later and syncs: under lww B's save is the later one.
        a.write("d.json", a.read("d.json")!.replacingOccurrences(of: "\"y\": \"base\"", with: "\"y\": \"fromA\""))
        usleep(20_000)
        b.write("d.json", b.read("d.json")!.replacingOccurrences(of: "\"x\": \"base\"", with: "\"x\": \"fromB\""))
        #expect(b.run("sync").exit == 0)
        // The user moves the file (as it was before the merge) into notes/ in that instant
        // (model check, daemon seed 20261122 step 44: the moved file was recorded as an edit
        // made after the merge, dated anew, and won over the later save), or after a run
        // killed once it had journaled the merge (the next run finds the file moved).
        let result: RunResult
        var saved: String?
        if point == "killed" {
            let killed = a.run(["sync"], env: ["DOCSYNC_CRASH_AT": "pull.after-journal"])
            #expect(killed.exit == 137, "killed at pull.after-journal: \(killed.comment)")
            #expect(rename(a.path("d.json"), a.path("notes/e.json")) == 0)
            saved = a.json("notes/e.json")?["changesetId"] as? String
            result = a.run("sync")
        } else {
            let (run, release) = Self.held(a, box, at: point)
            #expect(rename(a.path("d.json"), a.path("notes/e.json")) == 0)
            saved = a.json("notes/e.json")?["changesetId"] as? String
            release()
            result = run.wait()
        }
        let kind = "\(git ? "git" : "folder") at \(point)"
        // A's save lost whole and is stored under the id it was stamped with: the pull put
        // A's own update back in the journal as it was, not a new version of the moved file.
        let listed =
            (JSONHelp.parse(a.run("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(saved != nil, "\(kind): A's file was stamped before the move")
        #expect(
            listed.map { $0["changesetId"] as? String } == [saved],
            "\(kind): one record, of A's version \(saved ?? "?") as stamped: \(listed) \(result.comment)")
        #expect(!a.exists("d.json"), "\(kind): not written back at the old path: \(result.comment)")
        let kept = a.json("notes/e.json")
        #expect(
            kept?["x"] as? String == "fromB" && kept?["y"] as? String == "base",
            "\(kind): B's later save wins whole under lww: \(a.read("notes/e.json") ?? "") \(result.comment)")
        #expect(b.run("sync").exit == 0)
        #expect(b.read("notes/e.json") == a.read("notes/e.json"), "\(kind): B has the same file")
    }
}
