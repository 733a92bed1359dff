// Shared pieces of the reliability suites (ReliabilityConcurrencyTests, HostileInputTests,
// CorruptionTests, RandomKillTests, FullDiskTests). `scripts/reliability.sh` runs them and
// collects the `RELIABILITY …` lines they print into its summary.

import DocSyncKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh folder under the system temp directory, removed when the test ends. The
/// `TestServers.swift` of DocSyncKitTests is symlinked into this target (so `git daemon`
/// is started and stopped the same way in both) and needs this class.
final class TempFolder {
    let path: String

    init(_ name: String = "docsync-test") {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func sub(_ relative: String) -> String { path + "/" + relative }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

enum Reliability {
    /// `DOCSYNC_RELIABILITY_LONG=1`: the long mode of the reliability suites.
    static var long: Bool { ProcessInfo.processInfo.environment["DOCSYNC_RELIABILITY_LONG"] == "1" }

    /// One line of figures for `scripts/reliability.sh` (it greps `RELIABILITY `).
    static func figure(_ text: String) {
        print("RELIABILITY \(text)")
        fflush(nil)
    }

    static let gitEnv = ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"]

    /// A new bare repository (branch main) at `path`.
    static func makeBareRepo(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let made = CLI.runTool("/usr/bin/git", ["init", "-q", "--bare", "-b", "main", path], in: "/", env: gitEnv)
        #expect(made.exit == 0, made.comment, sourceLocation: sourceLocation)
    }

    /// The remote of a test: a bare git repository, or a folder (in format 1 with
    /// `format1`, made by `docsync init --remote-format 1`; else made by the first init).
    static func remote(_ box: Sandbox, git: Bool, format1: Bool = false) -> String {
        if format1 { makeFormat1Remote(box.remote) }
        guard git else { return box.remote }
        let repo = box.path("remote.git")
        makeBareRepo(repo)
        return repo
    }

    /// The tombstones of a folder remote, either layout, as its own reader sees them: the
    /// deletions in its current state, refId to the tombstone's fields (format 1 keeps
    /// each in `tombstones/`, the drive layout as an entry of a replica's commit).
    static func folderTombstones(_ url: String) -> [String: RemoteEntry] {
        guard let changes = try? FolderRemoteFormat.open(url).changes(since: nil) else { return [:] }
        var found: [String: RemoteEntry] = [:]
        for entry in changes.entries where entry.deleted { found[entry.refId] = entry }
        return found
    }

    /// A new folder remote in format 1 at `path`, held there (docsync does not upgrade it).
    static func makeFormat1Remote(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let maker = path + "-format1-maker"
        let r = CLI.run(["init", "--remote", path, "--remote-format", "1", maker], in: "/")
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
        try? FileManager.default.removeItem(atPath: maker)
    }

    /// `git fsck --strict` of a bare repository: clean, or the complaint.
    static func fsck(_ repo: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", repo, "fsck", "--strict", "--no-progress"], in: "/", env: gitEnv)
        #expect(
            r.exit == 0 && !r.stdout.contains("error") && !r.stderr.contains("error"), "git fsck: \(r)",
            sourceLocation: sourceLocation)
    }

    /// Number of commits on `main` of a bare repository.
    static func commitCount(_ repo: String) -> Int {
        Int(
            CLI.runTool("/usr/bin/git", ["--git-dir", repo, "rev-list", "--count", "main"], in: "/", env: gitEnv)
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Whatever `docsync sync --json` reported (nil if it printed no report, e.g. exit 75 on a busy tree).
    static func report(_ r: RunResult) -> [String: Any]? {
        JSONHelp.parse(r.stdout) as? [String: Any]
    }

    static func count(_ r: RunResult, _ key: String) -> Int {
        (report(r)?[key] as? [Any])?.count ?? 0
    }
}

/// Starts every run at once (one process each, no thread pool in between, so 8 runs
/// really overlap on 2 cores) and waits for all of them.
func launchTogether(_ runs: [(args: [String], dir: String)], env: [String: String] = [:]) -> [RunResult] {
    struct Running {
        var process: Process
        var out: String
        var err: String
        var args: [String]
    }
    var running: [Running] = []
    for run in runs {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "docsync-together-\(UUID().uuidString)"
        ).path
        _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.binary)
        process.arguments = run.args
        process.currentDirectoryURL = URL(fileURLWithPath: run.dir)
        var environment = ProcessInfo.processInfo.environment
        for (k, v) in env { environment[k] = v }
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: scratch + ".out")
        process.standardError = FileHandle(forWritingAtPath: scratch + ".err")
        process.standardInput = FileHandle.nullDevice
        running.append(Running(process: process, out: scratch + ".out", err: scratch + ".err", args: run.args))
    }
    for r in running { try! r.process.run() }
    return running.map { r in
        r.process.waitUntilExit()
        let stdout = (try? String(contentsOfFile: r.out, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: r.err, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(atPath: r.out)
        try? FileManager.default.removeItem(atPath: r.err)
        let code =
            r.process.terminationReason == .exit ? r.process.terminationStatus : 128 + r.process.terminationStatus
        return RunResult(args: r.args, stdout: stdout, stderr: stderr, exit: code)
    }
}

/// Reads `.docsync/journal` independently of the engine and lists what is wrong with it:
/// bad checksums or JSON, seqs not 1, 2, 3…, a local action recorded twice, a `done`
/// naming an action that does not exist or was already finished.
func journalProblems(_ path: String) -> [String] {
    guard let bytes = Files.bytes(path) else { return ["\(path) is missing"] }
    var problems: [String] = []
    var expectedSeq = 1
    var actions: [Int: String] = [:]
    var actionKeys = Set<String>()
    var finished = Set<Int>()
    for (n, raw) in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        .enumerated()
    {
        if raw.isEmpty { continue }
        guard let tab = raw.lastIndex(of: "\t"), let entry = JSONHelp.object(Array(raw[..<tab].utf8)) else {
            problems.append("line \(n + 1) is not a journal entry: \(raw.prefix(80))")
            continue
        }
        let seq = entry["seq"] as? Int ?? -1
        if seq != expectedSeq { problems.append("line \(n + 1): seq \(seq), expected \(expectedSeq)") }
        expectedSeq = seq + 1
        let kind = entry["kind"] as? String ?? "?"
        if ["create", "update", "rename", "delete"].contains(kind) {
            let key = [kind, entry["refId"], entry["changesetId"], entry["hash"], entry["path"], entry["fromPath"]]
                .map { "\($0 ?? "-")" }.joined(separator: "|")
            if !actionKeys.insert(key).inserted {
                problems.append("line \(n + 1): the same \(kind) is recorded twice: \(key)")
            }
            actions[seq] = key
        }
        if kind == "done" {
            for s in entry["seqs"] as? [Int] ?? [] {
                if actions[s] == nil { problems.append("line \(n + 1): done names \(s), which is not a local action") }
                if !finished.insert(s).inserted { problems.append("line \(n + 1): action \(s) is finished twice") }
            }
        }
    }
    return problems
}

/// Every "v" value in the documents and conflict copies of these replicas.
func savedValues(_ replicas: [Replica], key: String = "v") -> Set<String> {
    var values = Set<String>()
    for r in replicas {
        for (_, bytes) in r.documents() { if let v = JSONHelp.object(bytes)?[key] as? String { values.insert(v) } }
        for (_, bytes) in r.conflictCopies() { if let v = JSONHelp.object(bytes)?[key] as? String { values.insert(v) } }
    }
    return values
}
