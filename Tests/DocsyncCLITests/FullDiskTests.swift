// A full disk, for real: a small tmpfs is mounted (root only; otherwise the tests are
// skipped with a `SKIPPED:` line, or fail under CI=true), filled up to leave a little
// room, and docsync syncs into it as the remote or as the working tree. Sweeping how much room is left makes the writes fail
// at different places (objects, documents, feed, journal, state, git's object store).
// Expected: exit 1 with a clear "No space left on device (the disk is full…)", nothing
// lost, the remote still readable, and the next run after freeing space succeeds.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

enum Tmpfs {
    /// Whether this process may mount a tmpfs (tried once on a scratch folder).
    static let available: Bool = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "docsync-tmpfs-probe-\(UUID().uuidString)"
        ).path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        guard mount(dir, megabytes: 1) else { return false }
        unmount(dir)
        return true
    }()

    static func mount(_ dir: String, megabytes: Int) -> Bool {
        CLI.runTool("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", dir], in: "/").exit == 0
    }

    static func unmount(_ dir: String) {
        if CLI.runTool("/usr/bin/umount", [dir], in: "/").exit == 0 { return }
        // Busy for a moment (a child still closing its files): detach it now, the kernel
        // frees it when the last file is closed.
        usleep(200_000)
        let r = CLI.runTool("/usr/bin/umount", ["-l", dir], in: "/")
        if r.exit != 0 { print("warning: could not unmount the test tmpfs \(dir): \(r)") }
    }

    static func freeBytes(_ dir: String) -> Int {
        var st = statvfs()
        guard statvfs(dir, &st) == 0 else { return 0 }
        return Int(st.f_bavail) * Int(st.f_frsize)
    }

    /// Writes `dir/filler` until only about `leave` bytes are free.
    static func fill(_ dir: String, leaving leave: Int) {
        let path = dir + "/filler"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else {
            Issue.record("could not open \(path) to fill the disk: errno \(errno)")
            return
        }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x2E, count: 4096)
        while freeBytes(dir) > leave {
            let n = min(chunk.count, max(1, freeBytes(dir) - leave))
            if chunk.withUnsafeBytes({ write(fd, $0.baseAddress, n) }) <= 0 { break }
        }
    }

    static func unfill(_ dir: String) { unlink(dir + "/filler") }
}

extension Prerequisite {
    static let tmpfs = Prerequisite(
        name: "a tmpfs of its own",
        missing: Tmpfs.available ? nil : "this process may not mount a tmpfs (run as root)")
}

/// A tmpfs mounted for one test, unmounted at the end.
final class MountedTmpfs {
    let folder = TempFolder("docsync-tmpfs")
    var path: String { folder.sub("mnt") }
    private(set) var mounted = false

    init(megabytes: Int) {
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        mounted = Tmpfs.mount(path, megabytes: megabytes)
        #expect(mounted, "mount tmpfs on \(path)")
    }

    deinit { if mounted { Tmpfs.unmount(path) } }
}

@Suite(
    "Reliability: full disk (tmpfs)", .serialized,
    .enabled(if: Prerequisite.tmpfs.runsHere, "needs permission to mount a tmpfs (run as root)"))
struct FullDiskTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// Room left (bytes) before each sync: each one runs out somewhere else.
    static let levels: [Int] =
        Reliability.long
        ? Array(stride(from: 0, through: 400 * 1024, by: 8 * 1024))
        : [0, 4 * 1024, 16 * 1024, 40 * 1024, 96 * 1024, 200 * 1024]

    static func text(_ value: String, kilobytes: Int) -> String {
        "{\n  \"v\": \"\(value)\",\n  \"pad\": \"" + String(repeating: "p", count: kilobytes * 1024) + "\"\n}\n"
    }

    static func value(_ r: Replica, _ file: String) -> String? { r.json(file)?["v"] as? String }

    static func setValue(_ r: Replica, _ file: String, _ value: String) {
        r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
    }

    static func checkDiskFullRun(_ r: RunResult, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        #expect(r.exit == 0 || r.exit == 1, "only success or a clean error: \(r)", sourceLocation: sourceLocation)
        if r.exit == 1 {
            #expect(
                r.stderr.contains("No space left on device") && r.stderr.contains("the disk is full"),
                "a full disk is named as such: \(r)",
                sourceLocation: sourceLocation)
            #expect(
                !r.stderr.contains(".docsync-tmp-"),
                "the error names the file being written, not a temporary one: \(r)", sourceLocation: sourceLocation)
        }
        return r.exit == 1
    }

    @Test(
        "the remote's disk fills up during pushes: a clear error, nothing lost, readers unaffected, the next push after freeing space succeeds",
        arguments: Kind.allCases)
    func remoteDiskFull(_ kind: Kind) throws {
        try Prerequisite.tmpfs.require()
        let disk = MountedTmpfs(megabytes: Reliability.long ? 64 : 16)
        guard disk.mounted else { return }
        let box = Sandbox("full-remote-\(kind)")
        let remote = kind == .git ? disk.path + "/remote.git" : disk.path + "/remote"
        if kind == .git { Reliability.makeBareRepo(remote) }
        let a = box.replica("A")
        for i in 0..<4 { a.write("doc\(i).json", Self.text("doc\(i)-0", kilobytes: 20)) }
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        var failures = 0
        for (round, leave) in Self.levels.enumerated() {
            for i in 0..<3 { Self.setValue(a, "doc\(i).json", "doc\(i)-\(round + 1)") }
            a.write("new/n\(round).json", Self.text("n\(round)", kilobytes: 60))
            Tmpfs.fill(disk.path, leaving: leave)
            if Self.checkDiskFullRun(a.run("sync")) { failures += 1 }
            // Readers of the full remote see committed versions only, every one whole.
            let reader = b.run("sync")
            #expect(reader.exit == 0, "round \(round): \(reader)")
            for (path, bytes) in b.documents() {
                #expect(JSONHelp.object(bytes) != nil, "round \(round): \(path) on B is not a whole document")
            }
            Tmpfs.unfill(disk.path)
            let after = a.run("sync")
            #expect(after.exit == 0, "round \(round), room \(leave): the run after freeing space: \(after)")
            #expect(b.run("sync").exit == 0)
            #expect(b.documents() == a.documents(), "round \(round), room \(leave)")
            for i in 0..<3 { #expect(Self.value(b, "doc\(i).json") == "doc\(i)-\(round + 1)", "round \(round)") }
            #expect(Self.value(b, "new/n\(round).json") == "n\(round)")
        }
        #expect(failures > 0, "some pushes must have hit the full disk")
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment)
        }
        if kind == .git { Reliability.fsck(remote) }
        Reliability.figure("full-disk remote kind=\(kind.rawValue) levels=\(Self.levels.count) failed_runs=\(failures)")
        withExtendedLifetime(disk) {}
    }

    @Test(
        "the working tree's disk fills up during pulls and local edits: a clear error, nothing lost, the run after freeing space converges",
        arguments: Kind.allCases)
    func treeDiskFull(_ kind: Kind) throws {
        try Prerequisite.tmpfs.require()
        let disk = MountedTmpfs(megabytes: Reliability.long ? 64 : 16)
        guard disk.mounted else { return }
        let box = Sandbox("full-tree-\(kind)")
        let remote = kind == .git ? box.path("remote.git") : box.remote
        if kind == .git { Reliability.makeBareRepo(remote) }
        let b = box.replica("B")
        for i in 0..<4 { b.write("b\(i).json", Self.text("b\(i)-0", kilobytes: 20)) }
        for i in 0..<2 { b.write("a\(i).json", Self.text("a\(i)-0", kilobytes: 10)) }
        #expect(CLI.run(["init", "--remote", remote, "--name", "B", "B"], in: box.root).exit == 0)
        b.sync()
        #expect(CLI.run(["clone", "--name", "A", remote, disk.path + "/A"], in: box.root).exit == 0)
        let a = Replica(root: disk.path + "/A")
        var failures = 0
        for (round, leave) in Self.levels.enumerated() {
            // B changes its documents (A must pull them); A edits its own and makes one.
            for i in 0..<3 { Self.setValue(b, "b\(i).json", "b\(i)-\(round + 1)") }
            b.write("fromB/n\(round).json", Self.text("bn\(round)", kilobytes: 50))
            #expect(b.run("sync").exit == 0)
            for i in 0..<2 { Self.setValue(a, "a\(i).json", "a\(i)-\(round + 1)") }
            a.write("fromA/n\(round).json", Self.text("an\(round)", kilobytes: 30))
            let mine = a.documents()
            Tmpfs.fill(disk.path, leaving: leave)
            for _ in 0..<2 { if Self.checkDiskFullRun(a.run("sync")) { failures += 1 } }
            // Whatever failed, the user's files are as they were (ids aside) or updated whole.
            for (path, bytes) in a.documents() {
                #expect(JSONHelp.object(bytes) != nil, "round \(round): \(path) is not a whole document")
            }
            for i in 0..<2 {
                #expect(Self.value(a, "a\(i).json") == "a\(i)-\(round + 1)", "round \(round): A's edit is still there")
            }
            #expect(
                a.exists("fromA/n\(round).json") && mine.keys.allSatisfy { a.exists($0) },
                "round \(round): nothing of A's is gone")
            Tmpfs.unfill(disk.path)
            let after = a.run("sync")
            #expect(after.exit == 0, "round \(round), room \(leave): the run after freeing space: \(after)")
            #expect(b.run("sync").exit == 0)
            #expect(b.documents() == a.documents(), "round \(round), room \(leave)")
            for i in 0..<2 { #expect(Self.value(b, "a\(i).json") == "a\(i)-\(round + 1)", "round \(round)") }
            for i in 0..<3 { #expect(Self.value(a, "b\(i).json") == "b\(i)-\(round + 1)", "round \(round)") }
            #expect(
                Self.value(b, "fromA/n\(round).json") == "an\(round)"
                    && Self.value(a, "fromB/n\(round).json") == "bn\(round)")
            #expect(a.conflictCopies().isEmpty && b.conflictCopies().isEmpty, "round \(round): no conflicts expected")
        }
        #expect(failures > 0, "some runs must have hit the full disk")
        for r in [a, b] {
            let v = r.run("verify")
            #expect(v.exit == 0, v.comment)
        }
        Reliability.figure("full-disk tree kind=\(kind.rawValue) levels=\(Self.levels.count) failed_runs=\(failures)")
        withExtendedLifetime(disk) {}
    }
}

extension FullDiskTests {
    /// The packs folder's names that are neither a complete pack (a `.pack` with its
    /// `.idx`) nor one of the temporary files `allowing` lets through.
    static func incompletePacks(_ folder: String, allowing allowed: Set<String> = []) -> [String] {
        let names = Set((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
        return names.filter { name in
            if allowed.contains(name) { return false }
            if name.hasSuffix(".pack") { return !names.contains(String(name.dropLast(5)) + ".idx") }
            if name.hasSuffix(".idx") { return !names.contains(String(name.dropLast(4)) + ".pack") }
            return true
        }.sorted()
    }

    @Test(
        "a push that fills the remote while writing a pack leaves nothing under a final name; the next run removes a dead push's leftover and succeeds",
        arguments: ["drive", "format1"])
    func packWriteDiskFull(_ layout: String) throws {
        try Prerequisite.tmpfs.require()
        let disk = MountedTmpfs(megabytes: 16)
        guard disk.mounted else { return }
        let box = Sandbox("full-pack-\(layout)")
        let remote = disk.path + "/remote"
        let a = box.replica("A")
        a.write("first.json", "{\"v\": \"first\"}\n")
        #expect(
            CLI.run(
                ["init", "--remote", remote, "--name", "A", "A"]
                    + (layout == "format1" ? ["--remote-format", "1"] : []),
                in: box.root
            ).exit == 0)
        a.sync()
        // 60 new documents of 20 KB: the first 16 objects are loose files (320 KB), the
        // other 44 go into one pack (880 KB), which the room left cannot hold.
        for i in 0..<60 { a.write("batch/d\(i).json", Self.text("d\(i)", kilobytes: 20)) }
        let packs = remote + "/.docsync/objects/packs"
        Tmpfs.fill(disk.path, leaving: 700 * 1024)
        let full = a.run("sync")
        #expect(full.exit == 1, "the push fails on the full disk: \(full)")
        _ = Self.checkDiskFullRun(full)
        #expect(Self.incompletePacks(packs).isEmpty, "nothing under a final name: \(Self.incompletePacks(packs))")
        Tmpfs.unfill(disk.path)
        // What a push killed while writing its pack leaves (a dead process's temporary
        // file, two days old): the next push removes it.
        let leftover = ".docsync-tmp-999999999-1-pack-1-2-3.pack"
        try? FileManager.default.createDirectory(atPath: packs, withIntermediateDirectories: true)
        try Data(repeating: 0x2E, count: 64 * 1024).write(to: URL(fileURLWithPath: packs + "/" + leftover))
        var old = [
            timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0), timespec(tv_sec: time(nil) - 2 * 86_400, tv_nsec: 0)
        ]
        #expect(utimensat(AT_FDCWD, packs + "/" + leftover, &old, 0) == 0)
        let after = a.run("sync")
        #expect(after.exit == 0, "the run after freeing space: \(after)")
        #expect(
            !FileManager.default.fileExists(atPath: packs + "/" + leftover), "the dead push's temporary pack is gone")
        #expect(Self.incompletePacks(packs).isEmpty, "\(Self.incompletePacks(packs))")
        #expect(CLI.run(["clone", "--name", "B", remote, "B"], in: box.root).exit == 0)
        let b = box.replica("B")
        #expect(b.documents() == a.documents(), "B gets every document")
        #expect(b.documents().count == 61)
        #expect(a.run("verify").exit == 0)
        withExtendedLifetime(disk) {}
    }
}
