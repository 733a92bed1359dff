// The state's base in a file of its own (`.docsync/base-<checksum>`, docs/FORMATS.md),
// through the built binary: a no-op `status` or `sync` never reads it (strace(1) sees
// every read of it), a run that needs it does, and a `status` held between reading the
// state and opening its base file while a sync saves a newer state reads the newer one;
// a sync killed there loses nothing.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The base file")
struct BaseFileTests {
    /// Every file of `r`'s tree (not `.docsync/`) made a minute old, so the scan trusts
    /// the index for it (outside the racy window), then one `status` to refresh the index.
    static func settle(_ r: Replica) throws {
        let old = Date(timeIntervalSinceNow: -60)
        let files = FileManager.default.enumerator(atPath: r.root)!
        while let relative = files.nextObject() as? String {
            if relative.hasPrefix(".docsync") { continue }
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: r.path(relative))
        }
        r.ok("status")
    }

    /// The base files in `r`'s `.docsync/`.
    static func baseFiles(_ r: Replica) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: r.path(".docsync"))) ?? []).filter {
            $0.hasPrefix("base-")
        }
    }

    /// A: `one.json` (`"n": 1`) synced to a folder remote; B: its clone.
    static func syncedPair(_ box: Sandbox) -> (a: Replica, b: Replica) {
        let a = box.initReplica("A", files: ["one.json": "{\"n\": 1}\n"])
        a.sync()
        return (a, box.clone("B"))
    }

    /// `one.json` in `r` edited as a text editor would, its ids kept: `"n": 1` becomes `n`.
    static func editOne(_ r: Replica, to n: Int) {
        r.write("one.json", r.read("one.json")!.replacing("\"n\": 1", with: "\"n\": \(n)"))
    }

    /// Runs `args` in `r` under strace; the number of reads of a base file it made.
    static func baseReads(_ r: Replica, _ args: [String], box: Sandbox) throws -> (RunResult, Int) {
        try Prerequisite.strace.require()
        let trace = box.path("trace-\(UUID().uuidString)")
        let run = CLI.runTool(
            "/usr/bin/strace", ["-f", "-qq", "-y", "-e", "trace=read,pread64", "-o", trace, CLI.binary] + args,
            in: r.root)
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        let reads = text.split(separator: "\n").filter { $0.contains("/.docsync/base-") }.count
        return (run, reads)
    }

    @Test(
        "a no-op status and sync read no base file; a status that finds an edit does",
        .enabled(if: Prerequisite.strace.runsHere))
    func aNoOpReadsNoBaseFile() throws {
        let box = Sandbox("base-file-noop")
        let a = box.initReplica(
            "A", files: Dictionary(uniqueKeysWithValues: (0..<30).map { ("d/\($0).json", "{\"n\": \($0)}\n") }))
        a.sync()
        #expect(Self.baseFiles(a).count == 1, "\(Self.baseFiles(a))")
        try Self.settle(a)
        for command in [["status"], ["sync"], ["status"]] {
            let (run, reads) = try Self.baseReads(a, command, box: box)
            #expect(run.exit == 0, run.comment)
            #expect(reads == 0, "a no-op `\(command[0])` read the base file \(reads) times")
        }
        a.write("d/3.json", a.read("d/3.json")!.replacing("\"n\": 3", with: "\"n\": 33"))
        let (run, reads) = try Self.baseReads(a, ["status"], box: box)
        #expect(run.exit == 0 && run.stdout.contains("d/3.json"), run.comment)
        #expect(reads > 0, "a status that found an edit did not read the base")
    }

    @Test("a sync killed between reading the state and its base file: the next one sends the edit it left")
    func aSyncKilledWhileReadingTheState() throws {
        let box = Sandbox("base-file-kill")
        let (a, b) = Self.syncedPair(box)
        Self.editOne(a, to: 11)
        let killed = a.run(["sync"], env: ["DOCSYNC_CRASH_AT": "state.before-base-file"])
        #expect(killed.exit == 137, killed.comment)
        #expect(a.sync().stdout.contains("1 pushed"))
        b.sync()
        #expect(b.read("one.json")?.contains("11") == true)
    }

    @Test("a damaged base file found while finishing a killed pull is an error naming it, not a crash")
    func aDamagedBaseFileFoundByRecovery() throws {
        let box = Sandbox("base-file-recovery")
        let (a, b) = Self.syncedPair(box)
        Self.editOne(b, to: 2)
        b.sync()
        // A's pull journals what it saw and dies before its checkpoint: the next run folds
        // those entries into the base.
        let killed = a.run(["sync"], env: ["DOCSYNC_CRASH_AT": "pull.after-journal"])
        #expect(killed.exit == 137, killed.comment)
        let name = try #require(Self.baseFiles(a).first)
        var bytes = try #require(Files.bytes(a.path(".docsync/" + name)))
        bytes[bytes.count / 2] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: a.path(".docsync/" + name)))
        for command in ["status", "sync"] {
            let r = a.run(command)
            #expect(r.exit == 1, r.comment)
            #expect(r.stderr.contains(".docsync/" + name) && r.stderr.contains("reset-base"), r.comment)
        }
    }

    @Test("a status held between the state and its base file while a sync saves a newer state: it reads the newer one")
    func aStatusRacingASyncReadsTheNewerState() throws {
        let box = Sandbox("base-file-race")
        let a = box.initReplica("A", files: ["one.json": "{\"n\": 1}\n", "two.json": "{\"n\": 2}\n"])
        a.sync()
        Self.editOne(a, to: 11)
        let before = Self.baseFiles(a)
        #expect(before.count == 1)
        let gate = box.path("gate")
        let held = BackgroundRun(
            ["status"], in: a.root, env: ["DOCSYNC_PAUSE_AT": "state.before-base-file", "DOCSYNC_PAUSE_FILE": gate])
        #expect(waitUntil(seconds: 60) { FileManager.default.fileExists(atPath: gate + ".reached") })
        a.sync()
        #expect(Self.baseFiles(a).count == 1 && Self.baseFiles(a) != before, "the sync replaced the base file")
        #expect(FileManager.default.createFile(atPath: gate, contents: nil), "the gate file opens")
        let result = held.wait()
        #expect(result.exit == 0, result.comment)
        #expect(!result.stdout.contains("one.json"), "the status read the older state: \(result.comment)")
    }
}
