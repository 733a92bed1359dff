import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Offline remotes and busy trees (exit 75)")
struct OfflineAndLockTests {
    @Test("remote folder missing: sync exits 75 and keeps the edit pending; once back, the edit is sent")
    func offlineEditReplayedLater() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["note.json": "{\n  \"text\": \"v1\"\n}\n"])
        a.sync()
        let b = box.clone("B")

        let away = box.path("remote-unmounted")
        #expect(rename(box.remote, away) == 0)
        a.write("note.json", a.read("note.json")!.replacing("v1", with: "v2 offline"))
        a.write("new.json", "{\"made\": \"offline\"}\n")
        let offline = a.run("sync")
        #expect(offline.exit == 75, offline.comment)
        #expect(!offline.stderr.isEmpty, "an unreachable remote must be explained on stderr")
        #expect(
            !FileManager.default.fileExists(atPath: box.remote), "an offline sync must not recreate the remote folder")
        let push = a.run("push")
        #expect(push.exit == 75, push.comment)
        let pull = a.run("pull")
        #expect(pull.exit == 75, pull.comment)

        let status = a.run("status")
        #expect(status.exit == 0, status.comment)
        #expect(status.stdout.contains("Pending"), status.comment)
        #expect(status.stdout.contains("note.json") && status.stdout.contains("new.json"), status.comment)
        let statusJSON = JSONHelp.parse(a.run("status", "--json").stdout) as? [String: Any]
        let pendingPaths = (statusJSON?["pending"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(Set(pendingPaths) == ["note.json", "new.json"], "status --json pending: \(pendingPaths)")

        let log = a.run("log", "--pending")
        #expect(log.exit == 0, log.comment)
        #expect(log.stdout.contains("note.json") && log.stdout.contains("new.json"), log.comment)
        #expect(log.stdout.contains("[pending]"), log.comment)

        // A second offline attempt still keeps everything, and records nothing twice.
        #expect(a.run("sync").exit == 75)
        let again = a.run("log", "--pending").stdout.split(separator: "\n")
        #expect(again.count == 2, "still exactly two pending actions: \(again)")

        #expect(rename(away, box.remote) == 0)
        let back = a.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(
            a.run("log", "--pending").stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
            "nothing pending after the replay")

        b.sync()
        #expect(b.json("note.json")?["text"] as? String == "v2 offline")
        #expect(b.json("new.json")?["made"] as? String == "offline")
        #expect(b.documents() == a.documents())
    }

    @Test("an empty folder where the remote should be (share not mounted) is unreachable, never 'everything deleted'")
    func emptyMountPoint() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n", "b.json": "{\"b\": 1}\n"])
        a.sync()
        let docs = a.documents()
        let away = box.path("remote-real")
        #expect(rename(box.remote, away) == 0)
        try! FileManager.default.createDirectory(atPath: box.remote, withIntermediateDirectories: true)
        for command in ["sync", "pull"] {
            let r = a.run(command)
            #expect(r.exit == 75, r.comment)
        }
        a.write("c.json", "{\"c\": 1}\n")
        let push = a.run("push")
        #expect(push.exit == 75, push.comment)
        a.remove("c.json")
        #expect(a.run("sync").exit == 75)
        #expect(a.documents() == docs, "nothing may be deleted locally")
        #expect(Files.listing(box.remote).isEmpty, "nothing may be written into the empty mount point")
        let pending = a.run("log", "--pending").stdout
        #expect(!pending.contains("a.json") && !pending.contains("b.json"), "no deletions may be recorded: \(pending)")
        try! FileManager.default.removeItem(atPath: box.remote)
        #expect(rename(away, box.remote) == 0)
        a.sync()
        #expect(a.documents() == docs)
    }

    @Test("push with nothing pending still reports an unreachable remote (75)")
    func pushNothingWhileOffline() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        a.sync()
        #expect(rename(box.remote, box.path("remote-away")) == 0)
        let push = a.run("push")
        #expect(push.exit == 75, push.comment)
        #expect(push.stderr.contains("unreachable"), push.comment)
    }

    @Test("clone from a folder with no remote exits 1 (a path is most likely mistyped) and leaves no half-made tree")
    func cloneUnreachable() {
        let box = Sandbox()
        let r = CLI.run(["clone", box.path("no-such-remote"), "B"], in: box.root)
        #expect(r.exit == 1 && r.stderr.contains("no docsync remote at"), r.comment)
        #expect(!FileManager.default.fileExists(atPath: box.path("B/.docsync")))
    }

    /// A process holding the tree's flock until `release()`: `/usr/bin/flock <lock> cat`, with
    /// cat reading a pipe. No deadline: a slow machine cannot make it let go early.
    final class LockHolder {
        let process = Process()
        let input = Pipe()

        init?(_ lockPath: String) {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            process.arguments = [lockPath, "/usr/bin/cat"]
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch {
                Issue.record("could not start /usr/bin/flock: \(error)")
                return nil
            }
            guard waitUntil(seconds: 60, { isFlockHeld(lockPath) }) else {
                Issue.record("flock never took \(lockPath)")
                release()
                return nil
            }
        }

        /// Closes cat's input: cat ends, flock ends, the kernel drops the lock.
        func release() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }

        deinit { if process.isRunning { release() } }
    }

    /// Whether process `pid` has `path` open (its /proc fd table).
    static func hasOpen(_ pid: Int32, _ path: String) -> Bool {
        let dir = "/proc/\(pid)/fd"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0)) == path }
    }

    @Test("a second run on a locked tree exits 75 with a clear message, and works once the holder exits")
    func lockedTree() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        a.sync()
        a.ok("config", "lock.waitSeconds", "0")
        a.write("a.json", a.read("a.json")!.replacing("\"a\": 1", with: "\"a\": 2"))
        let before = a.bytes("a.json")
        let journalBefore = Files.bytes(a.journal)

        guard let holder = LockHolder(a.path(".docsync/lock")) else { return }
        let busy = a.run("sync")
        #expect(busy.exit == 75, busy.comment)
        #expect(
            busy.stderr.lowercased().contains("another docsync run") || busy.stderr.lowercased().contains("lock"),
            "the message should say the tree is busy: \(busy)")
        #expect(busy.stdout.isEmpty, busy.comment)
        #expect(a.run("push").exit == 75)
        #expect(a.run("rm", "a.json").exit == 75)
        #expect(a.exists("a.json"))
        #expect(a.bytes("a.json") == before, "a refused run must not touch the documents")
        #expect(Files.bytes(a.journal) == journalBefore, "a refused run must not write the journal")
        // Read-only commands still work while another run holds the tree.
        #expect(a.run("status").exit == 0)

        holder.release()
        let after = a.run("sync")
        #expect(after.exit == 0, after.comment)
        let remote = Files.bytes(box.remote + "/a.json").flatMap(JSONHelp.object)
        #expect(remote?["a"] as? Int == 2)
    }

    @Test("by default a second run waits for the first (lock.waitSeconds > 0), then does its work")
    func waitsForShortHolder() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"a\": 1}\n"])
        let configured = a.ok("config", "lock.waitSeconds").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((Double(configured) ?? 0) > 0, "default lock.waitSeconds: \(configured)")
        // A long wait here, so that a slow machine cannot make the run give up first.
        a.ok("config", "lock.waitSeconds", "300")
        let lockPath = URL(fileURLWithPath: a.path(".docsync/lock")).resolvingSymlinksInPath().path
        guard let holder = LockHolder(lockPath) else { return }
        // The sync starts while the lock is held; once it has the lock file open it can only
        // be waiting for it. Then the holder lets go.
        let sync = Process()
        sync.executableURL = URL(fileURLWithPath: CLI.binary)
        sync.arguments = ["sync"]
        sync.currentDirectoryURL = URL(fileURLWithPath: a.root)
        sync.standardOutput = FileHandle.nullDevice
        sync.standardError = FileHandle.nullDevice
        try sync.run()
        #expect(waitUntil(seconds: 60) { Self.hasOpen(sync.processIdentifier, lockPath) || !sync.isRunning })
        #expect(sync.isRunning, "the sync ended while another run held the tree instead of waiting")
        holder.release()
        sync.waitUntilExit()
        #expect(sync.terminationReason == .exit && sync.terminationStatus == 0, "exit \(sync.terminationStatus)")
        #expect(FileManager.default.fileExists(atPath: box.remote + "/a.json"))
    }
}
