// `docsync watch`: the built binary runs as a child process on a real tree, with a
// folder remote or a bare git repository, and the tests edit files the way people and
// scripts do, then poll the remote (through a second replica's `pull`) with a deadline.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `docsync watch` running in the background, its stdout and stderr in files.
final class WatchProcess {
    let process = Process()
    let out: String
    let err: String

    init(_ tree: Replica, _ extra: [String] = [], prefix: [String] = []) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "docsync-watch-\(UUID().uuidString)"
        ).path
        out = scratch + ".out"
        err = scratch + ".err"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        _ = FileManager.default.createFile(atPath: err, contents: nil)
        if prefix.isEmpty {
            process.executableURL = URL(fileURLWithPath: CLI.binary)
            process.arguments = ["watch"] + extra
        } else {
            process.executableURL = URL(fileURLWithPath: prefix[0])
            process.arguments = Array(prefix.dropFirst()) + [CLI.binary, "watch"] + extra
        }
        process.currentDirectoryURL = URL(fileURLWithPath: tree.root)
        process.standardOutput = FileHandle(forWritingAtPath: out)!
        process.standardError = FileHandle(forWritingAtPath: err)!
        process.standardInput = FileHandle.nullDevice
        try! process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: out)
        try? FileManager.default.removeItem(atPath: err)
    }

    var stdout: String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    /// The lines that report a sync.
    var syncLines: [String] {
        lines.filter { $0.split(separator: " ").dropFirst().first == "sync" || $0.contains("\"event\":\"sync\"") }
    }
    var description: String { "--- watch stdout:\n\(stdout)--- watch stderr:\n\(stderr)---" }
    var comment: Comment { Comment(rawValue: description) }

    /// Waits for the `watching` line and the first sync, so that the watches are in place.
    func waitStarted() -> Bool {
        waitUntil(seconds: 60) { self.syncLines.count >= 1 || !self.process.isRunning }
    }

    /// Sends `signal` and waits for the exit; returns the exit code (nil: still running).
    func stop(_ signal: Int32 = SIGTERM) -> Int32? {
        kill(process.processIdentifier, signal)
        guard waitUntil(seconds: 60, { !self.process.isRunning }) else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}

@Suite("docsync watch", .serialized)
struct WatchTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case dir, git
        var testDescription: String { rawValue }
    }

    /// A tree "w" on a new remote of `kind`, synced, with watch settings, and a second
    /// replica "probe" that shows what the remote holds.
    static func setUp(_ box: Sandbox, _ kind: Kind, debounceMs: Int = 300, pullSeconds: Int = 60) -> (
        w: Replica, probe: Replica
    ) {
        let remote = Reliability.remote(box, git: kind == .git)
        let w = box.replica("w")
        w.write("seed.json", "{\"seed\": true}\n")
        let made = CLI.run(["init", "--remote", remote, "--name", "w", "w"], in: box.root)
        #expect(made.exit == 0, made.comment)
        w.sync()
        w.ok("config", "watch.debounceMs", String(debounceMs))
        w.ok("config", "watch.pullSeconds", String(pullSeconds))
        let cloned = CLI.run(["clone", "--name", "probe", remote, "probe"], in: box.root)
        #expect(cloned.exit == 0, cloned.comment)
        return (w, box.replica("probe"))
    }

    /// Whether `path` reaches the remote within the deadline (the probe pulls until it has it).
    static func reachesRemote(_ probe: Replica, _ path: String, seconds: Double = 60) -> Bool {
        waitUntil(seconds: seconds) {
            probe.run("pull", "--quiet")
            return probe.exists(path)
        }
    }

    @Test(
        "a saved file, and a file in a folder made after watch started, reach the remote; an ignored file does not",
        arguments: Kind.allCases)
    func editsReachRemote(kind: Kind) {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, kind)
        w.write(".docsyncignore", "scratch/\nlocal-*.json\n")
        w.sync()
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)

        w.write("ada.json", "{\"name\": \"Ada\"}\n")
        #expect(Self.reachesRemote(probe, "ada.json"), watch.comment)
        #expect(probe.json("ada.json")?["name"] as? String == "Ada")

        // A new folder, two levels deep, with a file written right after it was made.
        w.write("new/deeper/grace.json", "{\"name\": \"Grace\"}\n")
        #expect(Self.reachesRemote(probe, "new/deeper/grace.json"), watch.comment)
        // A file written later into that folder: its watch was added.
        w.write("new/deeper/later.json", "{\"name\": \"Later\"}\n")
        #expect(Self.reachesRemote(probe, "new/deeper/later.json"), watch.comment)

        // A watched folder renamed: files written under its new name are seen; removed:
        // its documents' deletions reach the remote.
        #expect(rename(w.path("new"), w.path("moved")) == 0)
        #expect(Self.reachesRemote(probe, "moved/deeper/grace.json"), watch.comment)
        w.write("moved/deeper/third.json", "{\"name\": \"Third\"}\n")
        #expect(Self.reachesRemote(probe, "moved/deeper/third.json"), watch.comment)
        // (Three of six documents: more than push.maxDeleteShare's default half.)
        w.ok("config", "push.maxDeleteShare", "1")
        try? FileManager.default.removeItem(atPath: w.path("moved"))
        #expect(
            waitUntil(seconds: 60) {
                probe.run("pull", "--quiet")
                return !probe.exists("moved/deeper/third.json")
            }, watch.comment)
        w.write("local-notes.json", "{\"private\": 1}\n")
        w.write("scratch/tmp.json", "{\"private\": 2}\n")
        w.write("after.json", "{\"name\": \"After\"}\n")
        #expect(Self.reachesRemote(probe, "after.json"), watch.comment)
        #expect(!probe.exists("local-notes.json") && !probe.exists("scratch/tmp.json"), watch.comment)
        #expect(watch.process.isRunning && watch.stderr.isEmpty, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("a burst of 200 files is one sync", arguments: Kind.allCases)
    func burstIsOneSync(kind: Kind) {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, kind, debounceMs: 1500)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        let before = watch.syncLines.count
        for i in 1...200 { w.write(String(format: "burst/b%03d.json", i), "{\"n\": \(i)}\n") }
        #expect(Self.reachesRemote(probe, "burst/b200.json"), watch.comment)
        #expect(Files.list(probe.path("burst"), skipMetadata: true).count == 200)
        // The stamping the sync wrote into the files is not an edit of its own (a follow-up
        // that finds nothing prints nothing); leave it time to show if it were.
        _ = waitUntil(seconds: 3) { watch.syncLines.count > before + 1 }
        let new = Array(watch.syncLines.dropFirst(before))
        #expect(new.count == 1, watch.comment)
        #expect(
            new.first?.contains("200 recorded, 0 pulled, 200 pushed") == true
                && new.first?.contains("exit 0 ok") == true, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("an editor's rename-save and a sed -i are one sync each")
    func renameSaveIsOneSync() {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        let before = watch.syncLines.count
        let seed = w.read("seed.json")!
        editorSave(w.path("seed.json"), Array(seed.replacing("true", with: "false").utf8))
        #expect(
            waitUntil(seconds: 60) {
                probe.run("pull", "--quiet")
                return probe.json("seed.json")?["seed"] as? Bool == false
            }, watch.comment)
        _ = waitUntil(seconds: 2) { watch.syncLines.count > before + 1 }
        #expect(watch.syncLines.dropFirst(before).count == 1, watch.comment)
        #expect(watch.syncLines.last?.contains("1 recorded, 0 pulled, 1 pushed") == true, watch.comment)

        let sed = CLI.runTool("/usr/bin/sed", ["-i", "s/false/true/", "seed.json"], in: w.root)
        #expect(sed.exit == 0, sed.comment)
        #expect(
            waitUntil(seconds: 60) {
                probe.run("pull", "--quiet")
                return probe.json("seed.json")?["seed"] as? Bool == true
            }, watch.comment)
        _ = waitUntil(seconds: 2) { watch.syncLines.count > before + 2 }
        #expect(watch.syncLines.dropFirst(before).count == 2, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("a change another replica pushed arrives within watch.pullSeconds", arguments: Kind.allCases)
    func pullsRemoteChanges(kind: Kind) {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, kind, pullSeconds: 1)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        probe.write("from-probe.json", "{\"by\": \"probe\"}\n")
        probe.sync()
        #expect(waitUntil(seconds: 60) { w.exists("from-probe.json") }, watch.comment)
        // A folder remote is also watched: its push may arrive by either trigger.
        #expect(
            waitUntil(seconds: 10) {
                watch.syncLines.contains {
                    $0.contains("sync pull: 0 recorded, 1 pulled")
                        || (kind == .dir && $0.contains("sync remote: 0 recorded, 1 pulled"))
                }
            }, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("SIGTERM during a sync: it finishes, logs it and exits 0; SIGINT exits 0 too")
    func signalsStopCleanly() {
        let box = Sandbox()
        // Why 1.5 s: the 300 writes must all land before the edits settle, so that one sync
        // carries them; with 100 ms, a loaded CI machine paused mid-loop and the sync took 86.
        let (w, probe) = Self.setUp(box, .dir, debounceMs: 1500)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        let before = watch.syncLines.count
        for i in 1...300 { w.write(String(format: "s%03d.json", i), "{\"n\": \(i)}\n") }
        // Catch the sync under way: the tree lock is held only while it runs.
        let caught = waitUntil(seconds: 60) { isFlockHeld(w.path(".docsync/lock")) || watch.syncLines.count > before }
        #expect(caught, watch.comment)
        #expect(watch.stop(SIGTERM) == 0, watch.comment)
        let log = watch.lines
        #expect(log.last?.contains("stopped (SIGTERM)") == true, watch.comment)
        #expect(
            watch.syncLines.dropFirst(before).last?.contains("300 pushed") == true,
            "the last sync finished and was logged: \(watch.description)")
        probe.run("pull", "--quiet")
        #expect(
            Files.list(probe.root, skipMetadata: true).filter { $0.hasPrefix("s") && $0 != "seed.json" }.count == 300)

        let again = WatchProcess(w)
        #expect(again.waitStarted(), again.comment)
        #expect(again.stop(SIGINT) == 0, again.comment)
        #expect(again.lines.last?.contains("stopped (SIGINT)") == true, again.comment)
    }

    @Test("while watch is idle the tree lock is free: docsync sync from another process succeeds")
    func idleHoldsNoLock() {
        let box = Sandbox()
        let (w, _) = Self.setUp(box, .dir)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        w.write("x.json", "{\"x\": 1}\n")
        #expect(waitUntil(seconds: 60) { watch.syncLines.count >= 2 }, watch.comment)
        #expect(!isFlockHeld(w.path(".docsync/lock")), watch.comment)
        let r = CLI.run(["sync"], in: w.root, env: [:])
        #expect(r.exit == 0, r.comment)
        let status = w.ok("status")
        #expect(status.exit == 0)
        #expect(watch.process.isRunning, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("an unreachable remote: watch keeps running, says it once, records edits, and syncs when the remote is back")
    func unreachableRemoteIsRetried() throws {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir, debounceMs: 200)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        try FileManager.default.moveItem(atPath: box.remote, toPath: box.remote + ".away")
        w.write("offline1.json", "{\"n\": 1}\n")
        #expect(waitUntil(seconds: 60) { watch.syncLines.contains { $0.contains("exit 75") } }, watch.comment)
        // Edits while away are journaled at once.
        w.write("offline2.json", "{\"n\": 2}\n")
        #expect(
            waitUntil(seconds: 60) {
                ((try? String(contentsOfFile: w.journal, encoding: .utf8)) ?? "").contains("offline2.json")
            }, watch.comment)
        // Let retries pass (5 s, then 10 s): said once, not at every attempt.
        usleep(6_000_000)
        #expect(watch.syncLines.filter { $0.contains("exit 75") }.count == 1, watch.comment)
        #expect(watch.stderr.isEmpty, watch.comment)
        #expect(watch.process.isRunning, watch.comment)
        let status = w.ok("status")
        #expect(status.stdout.contains("Last sync attempt"), status.comment)

        try FileManager.default.moveItem(atPath: box.remote + ".away", toPath: box.remote)
        #expect(Self.reachesRemote(probe, "offline2.json", seconds: 90), watch.comment)
        #expect(probe.exists("offline1.json"))
        #expect(watch.syncLines.last?.contains("exit 0 ok") == true, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("--json: one object per line, schemaVersion 1, command watch")
    func jsonLines() {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir)
        let watch = WatchProcess(w, ["--json"])
        #expect(watch.waitStarted() || waitUntil(seconds: 30) { watch.lines.count >= 2 }, watch.comment)
        w.write("j.json", "{\"j\": 1}\n")
        #expect(Self.reachesRemote(probe, "j.json"), watch.comment)
        #expect(watch.stop() == 0, watch.comment)
        let objects = watch.lines.map { JSONHelp.parse($0) as? [String: Any] }
        #expect(objects.count >= 4 && objects.allSatisfy { $0 != nil }, watch.comment)
        #expect(
            objects.allSatisfy { $0?["schemaVersion"] as? Int == 1 && $0?["command"] as? String == "watch" },
            watch.comment)
        #expect(objects.first??["event"] as? String == "watching")
        #expect(objects.last??["event"] as? String == "stopped")
        let pushed = objects.compactMap { $0 }.filter { $0["event"] as? String == "sync" && $0["pushed"] as? Int == 1 }
        #expect(
            pushed.count == 1 && pushed.first?["exitCode"] as? Int == 0
                && pushed.first?["trigger"] as? String == "edit", watch.comment)
        if SchemaValidator.available || SchemaValidator.required {
            for line in watch.lines {
                #expect(
                    SchemaValidator.problems(line, schema: "watch") == nil,
                    "\(line) against docs/schemas/watch.schema.json")
            }
        }
    }

    @Test(
        "the inotify watch limit reached is exit 1 with a message naming max_user_watches and how to raise it",
        .enabled(if: Prerequisite.userNamespaces.runsHere))
    func watchLimit() throws {
        try Prerequisite.userNamespaces.require()
        let unshare = "/usr/bin/unshare"
        let box = Sandbox()
        let (w, _) = Self.setUp(box, .dir)
        for folder in ["a", "b", "c", "d/e"] { w.write(folder + "/f.json", "{}\n") }
        // A user namespace of its own whose limit is 3 watches (the real, per-namespace
        // kernel limit; nothing outside the test is touched).
        let probe = CLI.runTool(unshare, ["-Ur", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches"], in: w.root)
        #expect(probe.exit == 0, "a user namespace may set its own inotify limit: \(probe)")
        let r = CLI.runTool(
            unshare,
            ["-Ur", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches && exec \"$0\" watch", CLI.binary],
            in: w.root)
        #expect(r.exit == 1, r.comment)
        #expect(
            r.stderr.contains("max_user_watches") && r.stderr.contains("sysctl fs.inotify.max_user_watches="), r.comment
        )
        #expect(r.stderr.contains("= 3"), "the message shows the limit in force: \(r)")
    }

    @Test("examples/systemd/docsync-watch.service runs docsync watch and verifies")
    func systemdUnit() throws {
        let unit = try String(contentsOfFile: Example.folder + "/systemd/docsync-watch.service", encoding: .utf8)
        let exec = unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart=") }
        #expect(exec == ["ExecStart=/usr/local/bin/docsync -C %h/records watch"], "\(exec)")
        #expect(unit.contains("Type=exec") || unit.contains("Type=simple"))
        #expect(unit.contains("WantedBy=default.target"))
        let analyze = "/usr/bin/systemd-analyze"
        guard Prerequisite.systemdAnalyze.runsHere else { return }
        try Prerequisite.systemdAnalyze.require()
        let box = Sandbox()
        let units = box.path("units")
        try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
        try unit.replacingOccurrences(of: "/usr/local/bin/docsync", with: CLI.binary)
            .write(toFile: units + "/docsync-watch.service", atomically: true, encoding: .utf8)
        let verify = CLI.runTool(analyze, ["verify", "--man=no", units + "/docsync-watch.service"], in: units)
        #expect(verify.exit == 0 && verify.stderr.isEmpty && verify.stdout.isEmpty, "systemd-analyze verify: \(verify)")
    }

    @Test(
        "a sync's own writes (ids stamped) do not start another sync: one edit is one sync, even with -v logging every sync",
        arguments: Kind.allCases)
    func ownWritesAreNotEdits(kind: Kind) {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, kind)
        let watch = WatchProcess(w, ["-v"])
        #expect(watch.waitStarted(), watch.comment)
        let before = watch.syncLines.count
        w.write("one.json", "{\"n\": 1}\n")  // no ids: the sync stamps them into the file
        #expect(Self.reachesRemote(probe, "one.json"), watch.comment)
        _ = waitUntil(seconds: 3) { watch.syncLines.count > before + 1 }
        #expect(watch.syncLines.dropFirst(before).count == 1, "exactly one sync for one edit: \(watch.description)")
        #expect(w.refId("one.json") != nil)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test("an edit made while a sync runs is synced after it")
    func editDuringSync() {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir, debounceMs: 100)
        let watch = WatchProcess(w)
        #expect(watch.waitStarted(), watch.comment)
        for i in 1...1500 { w.write(String(format: "burst/b%04d.json", i), "{\"n\": \(i)}\n") }
        // Wait until the sync holds the tree lock, then edit a file it has already stamped or is about to.
        let locked = waitUntil(seconds: 60) { isFlockHeld(w.path(".docsync/lock")) }
        #expect(locked, "the sync of the burst was seen running: \(watch.description)")
        w.write("during.json", "{\"made\": \"during the sync\"}\n")
        #expect(
            Self.reachesRemote(probe, "during.json", seconds: 120),
            "the edit made during the sync reached the remote: \(watch.description)")
        #expect(Self.reachesRemote(probe, "burst/b1500.json"), watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test(
        "a folder remote on this machine is watched: another replica's push is pulled at once, not at watch.pullSeconds"
    )
    func folderRemoteIsWatched() {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir, pullSeconds: 3600)
        let watch = WatchProcess(w, ["--json"])
        #expect(watch.waitStarted(), watch.comment)
        probe.write("from-probe.json", "{\"by\": \"probe\"}\n")
        probe.ok("sync")
        #expect(
            waitUntil(seconds: 30) { w.exists("from-probe.json") },
            "pulled within seconds, though the pull interval is an hour: \(watch.description)")
        // The file is in place just before the sync's line is printed.
        #expect(
            waitUntil(seconds: 10) {
                watch.lines.contains { $0.contains("\"trigger\":\"remote\"") && $0.contains("\"pulled\":1") }
            }, watch.comment)
        // Its own pushes are not news: an edit here is one sync, with no remote-triggered one after it.
        let before = watch.syncLines.count
        w.write("mine.json", "{\"by\": \"w\"}\n")
        #expect(Self.reachesRemote(probe, "mine.json"), watch.comment)
        _ = waitUntil(seconds: 3) { watch.syncLines.count > before + 1 }
        #expect(!watch.syncLines.dropFirst(before).contains { $0.contains("\"trigger\":\"remote\"") }, watch.comment)
        #expect(watch.stop() == 0, watch.comment)
    }

    @Test(
        "inotify's queue overflowing (events lost while watch was stopped) falls back to a full sync that finds every file"
    )
    func queueOverflow() throws {
        let box = Sandbox()
        let (w, probe) = Self.setUp(box, .dir, debounceMs: 200)
        let watch = WatchProcess(w, ["--json"])
        #expect(watch.waitStarted(), watch.comment)
        let limit =
            Int(
                try String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 16384
        // Each new file is at least 3 events (create, modify, close): more than the queue holds.
        let files = limit / 3 + 500
        #expect(kill(watch.process.processIdentifier, SIGSTOP) == 0)
        for i in 1...files { w.write(String(format: "flood/f%05d.json", i), "{\"n\": \(i)}\n") }
        #expect(kill(watch.process.processIdentifier, SIGCONT) == 0)
        #expect(
            waitUntil(seconds: 240) { watch.lines.contains { $0.contains("\"trigger\":\"overflow\"") } },
            "the overflow of a \(limit)-event queue by \(files * 3)+ events was seen: \(watch.description)")
        #expect(
            waitUntil(seconds: 240) {
                probe.run("pull", "--quiet")
                return Files.list(probe.path("flood"), skipMetadata: true).count == files
            },
            "every one of \(files) files reached the remote")
        #expect(watch.stop() == 0, watch.comment)
    }
}
