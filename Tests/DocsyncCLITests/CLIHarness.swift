// Helpers for the end-to-end tests: they run the BUILT `docsync` binary the way a user
// (or cron) does, in real temp folders, and look at stdout, stderr, the exit code and the
// files on disk. Modelled on swift-argument-parser's ArgumentParserExampleTests.
//
// The binary is `<package root>/.build/debug/docsync` (build it with `swift build` or
// `swift build --build-tests`), or whatever the DOCSYNC_BIN environment variable names.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Running the binary

struct RunResult: CustomStringConvertible {
    var args: [String]
    var stdout: String
    var stderr: String
    var exit: Int32

    var description: String {
        "docsync \(args.joined(separator: " ")) → exit \(exit)\n--- stdout:\n\(stdout)--- stderr:\n\(stderr)---"
    }

    var comment: Comment { Comment(rawValue: description) }
}

enum CLI {
    /// The package root, found from this file's location (Tests/DocsyncCLITests/…).
    static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    static let binary: String = {
        if let override = ProcessInfo.processInfo.environment["DOCSYNC_BIN"], !override.isEmpty { return override }
        return packageRoot + "/.build/debug/docsync"
    }()

    /// Runs `docsync args…` with `dir` as the working directory. Output goes to temp files
    /// (no pipe can fill up and block), stderr is not a terminal, so no colour codes.
    static func run(_ args: [String], in dir: String, env: [String: String] = [:]) -> RunResult {
        runTool(binary, args, in: dir, env: env)
    }

    /// Folders whose docsync runs on a machine whose clock is off: every docsync process
    /// started in one, by `runTool` or the model check's `launch`, runs under libfaketime
    /// with that offset (`clockEnvironment`).
    struct MovedClock {
        var offsetMs: Int64
        /// libfaketime's semaphore and shared memory (`FAKETIME_SHARED`), made and kept by a
        /// `faketime` process that lives as long as the folder's clock is moved.
        var shared: String
        var keeper: Process
        /// The keeper's input: closing it ends its program (`cat`), and `faketime` then
        /// removes the pair.
        var input: Pipe
    }
    nonisolated(unsafe) private static var movedClocks: [String: MovedClock] = [:]
    private static let movedClocksLock = NSLock()

    /// Moves the clock of every docsync process started in `root` by `ms` (nil: back).
    /// Why a keeper: libfaketime (0.9.10) preloaded without `FAKETIME_SHARED` left a Swift
    /// program without its arguments, and with names it could not open it made its own,
    /// racing with the other processes of a concurrent step over them. `faketime` makes
    /// the pair and removes it when its program ends; the pair is opened to every user,
    /// for the runs made as another user (the model check's unreadable folders).
    static func setClockOffset(_ ms: Int64?, forFolder root: String) {
        if let old = movedClocksLock.withLock({ movedClocks.removeValue(forKey: root) }) {
            try? old.input.fileHandleForWriting.close()
            old.keeper.waitUntilExit()
        }
        guard let ms else { return }
        let keeper = Process()
        keeper.executableURL = URL(fileURLWithPath: "/usr/bin/faketime")
        keeper.arguments = ["-f", "+0", "/bin/sh", "-c", "echo \"$FAKETIME_SHARED\"; exec cat"]
        let out = Pipe(), input = Pipe()
        keeper.standardOutput = out
        keeper.standardInput = input
        keeper.standardError = FileHandle.nullDevice
        precondition((try? keeper.run()) != nil, "faketime did not start")
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            precondition(!chunk.isEmpty, "faketime named no shared memory")
            line += chunk
        }
        let shared = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        for name in shared.split(separator: " ") {
            let file = "/dev/shm/" + (name.hasPrefix("/faketime_sem") ? "sem." : "") + name.dropFirst()
            chmod(file, 0o666)
        }
        movedClocksLock.withLock {
            movedClocks[root] = MovedClock(offsetMs: ms, shared: shared, keeper: keeper, input: input)
        }
    }

    /// The environment that moves the clock of a docsync process started in `dir` (empty
    /// when its folder's machine keeps time). NO_FAKE_STAT: files keep the times the kernel
    /// gives them (the stamp's compare-and-swap reads them); the tests that move a file's
    /// mtime set it as that machine would have.
    static func clockEnvironment(for dir: String) -> [String: String] {
        let moved = movedClocksLock.withLock {
            movedClocks.first { dir == $0.key || dir.hasPrefix($0.key + "/") }?.value
        }
        guard let moved else { return [:] }
        let offset = moved.offsetMs
        return [
            "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
            "FAKETIME": (offset >= 0 ? "+" : "-") + String(format: "%.3f", Double(abs(offset)) / 1000),
            "FAKETIME_SHARED": moved.shared,
            "NO_FAKE_STAT": "1"
        ]
    }

    static func runTool(_ executable: String, _ args: [String], in dir: String, env: [String: String] = [:])
        -> RunResult
    {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "docsync-cli-out-\(UUID().uuidString)"
        ).path
        _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: scratch + ".out")
            try? FileManager.default.removeItem(atPath: scratch + ".err")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        var environment = ProcessInfo.processInfo.environment
        // docsync itself only: a tool that starts docsync (setpriv) passes it on with `env`
        // (libfaketime preloaded into it would make a pair of its own).
        if executable == binary { for (k, v) in clockEnvironment(for: dir) { environment[k] = v } }
        for (k, v) in env { environment[k] = v }
        process.environment = environment
        let out = FileHandle(forWritingAtPath: scratch + ".out")!
        let err = FileHandle(forWritingAtPath: scratch + ".err")!
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return RunResult(args: args, stdout: "", stderr: "could not start \(executable): \(error)", exit: -1)
        }
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let stdout = (try? String(contentsOfFile: scratch + ".out", encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: scratch + ".err", encoding: .utf8)) ?? ""
        let code = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return RunResult(args: args, stdout: stdout, stderr: stderr, exit: code)
    }
}

// MARK: - Temp folders, replicas, files

/// A fresh folder for one test: a remote and any number of replicas. Removed at the end.
final class Sandbox {
    let root: String
    var remote: String { root + "/remote" }
    /// Set by tests of format 1's own files (its lock, feed, generation, tombstone files):
    /// `initReplica` makes the remote in format 1, held there (see DriveFolderRemote.upgrade).
    var remoteFormat1 = false

    init(_ name: String = #function) {
        let clean = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent("docsync-cli-\(clean)-\(UUID().uuidString)")
            .path
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// `DOCSYNC_KEEP_SANDBOX=1` keeps every test's folders (to look into a failure a
    /// timing-dependent run met once).
    deinit {
        guard ProcessInfo.processInfo.environment["DOCSYNC_KEEP_SANDBOX"] != "1" else { return }
        try? FileManager.default.removeItem(atPath: root)
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// A replica handle for `root/name` (nothing is created).
    func replica(_ name: String) -> Replica { Replica(root: path(name)) }

    /// `docsync init --remote <remote> <name>` with `files` written first (so they are
    /// new, id-less documents). Expects success.
    @discardableResult
    func initReplica(_ name: String, files: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation)
        -> Replica
    {
        let replica = self.replica(name)
        for (path, text) in files { replica.write(path, text) }
        let r = CLI.run(
            ["init", "--remote", remote, "--name", name, name] + (remoteFormat1 ? ["--remote-format", "1"] : []),
            in: root)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        return replica
    }

    /// `docsync clone <remote> <name>`. Expects success.
    @discardableResult
    func clone(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> Replica {
        let r = CLI.run(["clone", "--name", name, remote, name], in: root)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        return replica(name)
    }
}

struct Replica {
    let root: String

    func path(_ relative: String) -> String { root + "/" + relative }

    // Running docsync in this tree.

    @discardableResult
    func run(_ args: String..., env: [String: String] = [:]) -> RunResult {
        CLI.run(args, in: root, env: env)
    }

    @discardableResult
    func run(_ args: [String], env: [String: String] = [:]) -> RunResult {
        CLI.run(args, in: root, env: env)
    }

    /// Runs and expects exit 0.
    @discardableResult
    func ok(_ args: String..., sourceLocation: SourceLocation = #_sourceLocation) -> RunResult {
        let r = CLI.run(args, in: root)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        return r
    }

    /// `docsync sync`, expecting exit 0.
    @discardableResult
    func sync(sourceLocation: SourceLocation = #_sourceLocation) -> RunResult {
        let r = CLI.run(["sync"], in: root)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        return r
    }

    // Files.

    func write(_ relative: String, _ text: String) { writeBytes(relative, Array(text.utf8)) }

    func writeBytes(_ relative: String, _ bytes: [UInt8]) {
        let full = path(relative)
        try! FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(bytes).write(to: URL(fileURLWithPath: full))
    }

    func bytes(_ relative: String) -> [UInt8]? { Files.bytes(path(relative)) }

    func read(_ relative: String) -> String? { bytes(relative).map { String(decoding: $0, as: UTF8.self) } }

    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: path(relative)) }

    func remove(_ relative: String) { try! FileManager.default.removeItem(atPath: path(relative)) }

    /// The document at `relative` parsed as a JSON object (nil if missing or invalid).
    func json(_ relative: String) -> [String: Any]? { bytes(relative).flatMap(JSONHelp.object) }

    func refId(_ relative: String) -> String? { json(relative)?["refId"] as? String }
    func changesetId(_ relative: String) -> String? { json(relative)?["changesetId"] as? String }

    /// Every file of the tree outside `.docsync/`, with its bytes.
    func documents() -> [String: [UInt8]] { Files.tree(root, skipMetadata: true) }

    var journal: String { path(".docsync/journal") }

    /// The losing versions kept under `.docsync/conflicts/` (document files only).
    func conflictCopies() -> [String: [UInt8]] {
        Files.tree(path(".docsync/conflicts"), skipMetadata: false).filter { !$0.key.hasSuffix(".meta.json") }
    }
}

enum Files {
    static func bytes(_ path: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map(Array.init)
    }

    /// Relative path → bytes of every regular file under `dir` (top-level `.docsync/`
    /// skipped when `skipMetadata`).
    static func tree(_ dir: String, skipMetadata: Bool) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for relative in list(dir, skipMetadata: skipMetadata) {
            result[relative] = bytes(dir + "/" + relative)
        }
        return result
    }

    /// Relative paths of the regular files under `dir`, sorted.
    static func list(_ dir: String, skipMetadata: Bool) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: dir) else { return [] }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if skipMetadata && (relative == ".docsync" || relative.hasPrefix(".docsync/")) { continue }
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir + "/" + relative, isDirectory: &isDir), !isDir.boolValue {
                paths.append(relative)
            }
        }
        return paths.sorted()
    }

    struct Stamp: Equatable, CustomStringConvertible {
        var inode: UInt64
        var mtimeSec: Int
        var mtimeNsec: Int
        var size: Int64
        var description: String { "ino \(inode) mtime \(mtimeSec).\(mtimeNsec) size \(size)" }
    }

    static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return Stamp(
            inode: UInt64(st.st_ino), mtimeSec: Int(st.st_mtim.tv_sec), mtimeNsec: Int(st.st_mtim.tv_nsec),
            size: Int64(st.st_size))
    }

    /// Inode, mtime and size of every file under `dir`.
    static func stamps(_ dir: String, skipMetadata: Bool) -> [String: Stamp] {
        var result: [String: Stamp] = [:]
        for relative in list(dir, skipMetadata: skipMetadata) { result[relative] = stamp(dir + "/" + relative) }
        return result
    }

    /// Every path under `dir`, folders included (for "the listing did not change").
    static func listing(_ dir: String) -> [String] {
        (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).sorted()
    }

    /// Lock files, temp files and other transient entries a remote may hold between runs.
    static func isTransient(_ relative: String) -> Bool {
        let name = (relative as NSString).lastPathComponent
        return name == "lock" || name.hasPrefix("lock.") || name.hasPrefix(".tmp") || name.hasSuffix(".tmp")
    }
}

enum JSONHelp {
    static func object(_ bytes: [UInt8]) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any]
    }

    /// Any JSON value from a command's stdout.
    static func parse(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }
}

// MARK: - Byte-exact stamping check

enum Stamping {
    /// True if `stamped` is `original` with only the members `"refId": <refId>` and
    /// `"changesetId": <changesetId>` inserted (each together with the separator
    /// whitespace and comma the tool added): removing at most two contiguous spans made
    /// only of those members, whitespace and commas gives back `original` byte for byte.
    static func onlyIdsInserted(original: [UInt8], stamped: [UInt8], refId: String, changesetId: String) -> Bool {
        guard let ref = memberRange(in: stamped, key: "refId", value: refId),
            let cs = memberRange(in: stamped, key: "changesetId", value: changesetId)
        else { return false }
        let isFiller: (UInt8) -> Bool = {
            $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == UInt8(ascii: ",")
        }
        func spans(_ r: Range<Int>) -> [Range<Int>] {
            var lo = r.lowerBound, hi = r.upperBound
            while lo > 0, isFiller(stamped[lo - 1]) { lo -= 1 }
            while hi < stamped.count, isFiller(stamped[hi]) { hi += 1 }
            var out: [Range<Int>] = []
            for s in lo...r.lowerBound { for e in r.upperBound...hi { out.append(s..<e) } }
            return out
        }
        let removedTotal = stamped.count - original.count
        let (first, second) = ref.lowerBound < cs.lowerBound ? (ref, cs) : (cs, ref)
        // The two members side by side: one span covering both.
        if stamped[first.upperBound..<second.lowerBound].allSatisfy(isFiller) {
            for span in spans(first.lowerBound..<second.upperBound) where span.count == removedTotal {
                if Array(stamped[..<span.lowerBound]) + stamped[span.upperBound...] == original { return true }
            }
        }
        for a in spans(first) {
            for b in spans(second) where a.upperBound <= b.lowerBound && a.count + b.count == removedTotal {
                if Array(stamped[..<a.lowerBound]) + stamped[a.upperBound..<b.lowerBound] + stamped[b.upperBound...]
                    == original
                {
                    return true
                }
            }
        }
        return false
    }

    /// The bytes of `"key" <ws> : <ws> "value"` in `text`.
    static func memberRange(in text: [UInt8], key: String, value: String) -> Range<Int>? {
        let keyBytes = Array("\"\(key)\"".utf8), valueBytes = Array("\"\(value)\"".utf8)
        var i = 0
        while i + keyBytes.count <= text.count {
            if Array(text[i..<i + keyBytes.count]) == keyBytes {
                var j = i + keyBytes.count
                while j < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[j]) { j += 1 }
                if j < text.count, text[j] == UInt8(ascii: ":") {
                    j += 1
                    while j < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[j]) { j += 1 }
                    if j + valueBytes.count <= text.count, Array(text[j..<j + valueBytes.count]) == valueBytes {
                        return i..<j + valueBytes.count
                    }
                }
            }
            i += 1
        }
        return nil
    }
}

// MARK: - Small utilities

/// Runs several docsync commands at the same time (each `(args, dir)`), returns their results in order.
func runConcurrently(_ runs: [([String], String)]) -> [RunResult] {
    final class Box: @unchecked Sendable {
        let lock = NSLock()
        var results: [Int: RunResult] = [:]
    }
    let box = Box()
    DispatchQueue.concurrentPerform(iterations: runs.count) { i in
        let r = CLI.run(runs[i].0, in: runs[i].1)
        box.lock.lock()
        box.results[i] = r
        box.lock.unlock()
    }
    return (0..<runs.count).map { box.results[$0]! }
}

/// Sets a file's modification (and access) time, seconds after the epoch: new
/// changesetIds take their time from it, so a test can say which save is later.
func setSaveTime(_ path: String, _ seconds: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
    #expect(utimensat(AT_FDCWD, path, &times, 0) == 0, sourceLocation: sourceLocation)
}

/// Waits (up to `seconds`) until `condition` holds.
func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// True if another process holds an flock on `path` (probed with a non-blocking lock).
func isFlockHeld(_ path: String) -> Bool {
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    if flock(fd, LOCK_EX | LOCK_NB) == 0 {
        flock(fd, LOCK_UN)
        return false
    }
    return true
}

/// Rewrites a file in place: open, truncate to 0, write (same inode, like many scripts).
func rewriteInPlace(_ path: String, _ bytes: [UInt8]) {
    let handle = FileHandle(forWritingAtPath: path)!
    try! handle.truncate(atOffset: 0)
    try! handle.write(contentsOf: Data(bytes))
    try! handle.close()
}

/// Gives files saved one after another strictly increasing mtimes (at least 2 ms apart,
/// never before now), so that "the later save wins" follows the order a test edits in,
/// even when two edits fall in the same millisecond.
final class SaveClock: @unchecked Sendable {
    static let shared = SaveClock()
    private let lock = NSLock()
    private var last: Double = 0

    func stamp(_ path: String) {
        lock.lock()
        last = max(Date().timeIntervalSince1970, last + 0.002)
        let when = last
        lock.unlock()
        let ts = timespec(tv_sec: Int(when), tv_nsec: Int((when - when.rounded(.down)) * 1e9))
        var times = [ts, ts]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0, "set the mtime of \(path)")
    }
}

/// The way editors save: write a temp file next to it, then rename it over the original.
func editorSave(_ path: String, _ bytes: [UInt8]) {
    let temp = (path as NSString).deletingLastPathComponent + "/.\((path as NSString).lastPathComponent).swp"
    try! Data(bytes).write(to: URL(fileURLWithPath: temp))
    #expect(rename(temp, path) == 0)
}

extension String {
    /// The string with `old` replaced by `new`, asserting that `old` occurs exactly once
    /// (so an edit can never hit the stamped ids by accident).
    func replacing(_ old: String, with new: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let count = components(separatedBy: old).count - 1
        #expect(count == 1, "expected \(old) exactly once in \(self)", sourceLocation: sourceLocation)
        return replacingOccurrences(of: old, with: new)
    }
}

// MARK: - Self-check of the helpers the other tests rely on

@Suite("CLI harness self-check")
struct HarnessSelfCheck {
    @Test("the byte-exact stamping check accepts pure insertions and rejects any other change")
    func stampingCheck() {
        let original = Array("{\n\t\"b\" : 1,\n  \"a\":[1, 2]\n}\n".utf8)
        let good = Array("{\n\t\"refId\" : \"R\",\n\t\"changesetId\" : \"C\",\n\t\"b\" : 1,\n  \"a\":[1, 2]\n}\n".utf8)
        let compact = Array("{\"b\":1}".utf8)
        let compactGood = Array("{\"refId\":\"R\",\"changesetId\":\"C\",\"b\":1}".utf8)
        let reindented = Array(
            "{\n  \"refId\": \"R\",\n  \"changesetId\": \"C\",\n  \"b\": 1,\n  \"a\": [1, 2]\n}\n".utf8)
        let reordered = Array(
            "{\n\t\"refId\" : \"R\",\n\t\"changesetId\" : \"C\",\n  \"a\":[1, 2],\n\t\"b\" : 1\n}\n".utf8)
        let valueChanged = Array(
            "{\n\t\"refId\" : \"R\",\n\t\"changesetId\" : \"C\",\n\t\"b\" : 2,\n  \"a\":[1, 2]\n}\n".utf8)
        let newlineLost = Array(
            "{\n\t\"refId\" : \"R\",\n\t\"changesetId\" : \"C\",\n\t\"b\" : 1,\n  \"a\":[1, 2]\n}".utf8)
        #expect(Stamping.onlyIdsInserted(original: original, stamped: good, refId: "R", changesetId: "C"))
        #expect(Stamping.onlyIdsInserted(original: compact, stamped: compactGood, refId: "R", changesetId: "C"))
        #expect(!Stamping.onlyIdsInserted(original: original, stamped: reindented, refId: "R", changesetId: "C"))
        #expect(!Stamping.onlyIdsInserted(original: original, stamped: reordered, refId: "R", changesetId: "C"))
        #expect(!Stamping.onlyIdsInserted(original: original, stamped: valueChanged, refId: "R", changesetId: "C"))
        #expect(!Stamping.onlyIdsInserted(original: original, stamped: newlineLost, refId: "R", changesetId: "C"))
        #expect(!Stamping.onlyIdsInserted(original: original, stamped: good, refId: "R", changesetId: "X"))
    }

    @Test("the docsync binary exists and runs")
    func binaryRuns() {
        #expect(
            FileManager.default.isExecutableFile(atPath: CLI.binary),
            "build it first (swift build), or set DOCSYNC_BIN: \(CLI.binary)")
        let r = CLI.run(["--version"], in: NSTemporaryDirectory())
        #expect(r.exit == 0 && !r.stdout.isEmpty, r.comment)
    }
}
