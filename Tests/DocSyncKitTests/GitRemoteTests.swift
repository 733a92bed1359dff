import Foundation
import Testing

@testable import DocSyncKit

/// Runs the git CLI as an independent client, isolated from this machine's git config.
@discardableResult
func git(_ args: [String], in dir: String, home: String, input: [UInt8]? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
    process.arguments = args
    process.currentDirectoryURL = URL(fileURLWithPath: dir)
    var env = ProcessInfo.processInfo.environment
    env["HOME"] = home
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_CONFIG_GLOBAL"] = "/dev/null"
    env["GIT_AUTHOR_NAME"] = "Plain Git"
    env["GIT_AUTHOR_EMAIL"] = "plain@example.com"
    env["GIT_COMMITTER_NAME"] = "Plain Git"
    env["GIT_COMMITTER_EMAIL"] = "plain@example.com"
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let stdin = Pipe()
    if input != nil { process.standardInput = stdin }
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    let errors = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw Workspace.Failure.gaveUp(
            "git \(args.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self))")
    }
    return String(decoding: data, as: UTF8.self)
}

/// `git count-objects -v` of a repository, by field (count, packs, in-pack, …).
func gitObjectCounts(_ repo: String, home: String) throws -> [String: Int] {
    var counts: [String: Int] = [:]
    for line in try git(["count-objects", "-v"], in: repo, home: home).split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        if parts.count == 2, let n = Int(parts[1]) { counts[parts[0]] = n }
    }
    return counts
}

/// Replicas of one bare repository, driven through the engine, checked with plain git.
final class GitReplicaSet {
    let folder = TempFolder("git-replicas")
    var repo: String { folder.sub("remote.git") }
    var home: String { folder.sub("home") }

    init() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try git(["init", "-q", "--bare", "-b", "main", repo], in: folder.path, home: home)
    }

    func make(_ name: String, url: String? = nil) throws -> String {
        let dir = folder.sub(name)
        let (ws, _) = try Workspace.initialize(at: dir, remoteURL: url ?? repo, replicaName: name)
        ws.close()
        return dir
    }

    @discardableResult
    func sync(_ dir: String) throws -> SyncReport {
        let ws = try Workspace.open(at: dir, readOnly: false)
        defer { ws.close() }
        return try ws.sync.run(.both)
    }

    /// A plain `git clone` of the remote.
    func plainClone(_ name: String = "plain") throws -> String {
        let dir = folder.sub(name)
        if FileManager.default.fileExists(atPath: dir) {
            try git(["pull", "-q", "origin", "main"], in: dir, home: home)
        } else {
            try git(["clone", "-q", repo, dir], in: folder.path, home: home)
        }
        return dir
    }

    func gitCommitAndPush(_ dir: String, _ message: String) throws {
        try git(["add", "-A"], in: dir, home: home)
        try git(["commit", "-q", "-m", message], in: dir, home: home)
        try git(["push", "-q", "origin", "HEAD:main"], in: dir, home: home)
    }
}

@Suite struct GitRemoteTests {
    let docs = ReplicaSet()  // for its file helpers

    @Test func roundTripThroughABareRepositoryPathAndFileURL() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "people/ann.json", "{\n  \"name\": \"Ann\"\n}\n")
        let first = try set.sync(a)
        #expect(first.pushed.map(\.path) == ["people/ann.json"])
        let b = try set.make("b", url: "file://" + set.repo)
        try set.sync(b)
        #expect(docs.snapshot(a) == docs.snapshot(b))
        docs.write(b, "people/ann.json", docs.read(b, "people/ann.json")!.replacingOccurrences(of: "Ann", with: "Anna"))
        try set.sync(b)
        try set.sync(a)
        #expect(field(docs.read(a, "people/ann.json"), "name") == "Anna")
        // The repository stays a normal repository.
        try git(["fsck", "--strict"], in: set.repo, home: set.home)
        let plain = try set.plainClone()
        #expect(docs.read(plain, "people/ann.json") == docs.read(a, "people/ann.json"))
        let log = try git(["log", "--format=%s"], in: plain, home: set.home)
        #expect(log.split(separator: "\n").count == 2)
        #expect(log.contains("docsync: 1 update from b"))
    }

    @Test func plainGitCommitsArePulledCorrectly() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "edit.json", "{\"v\": 1}")
        docs.write(a, "gone.json", "{\"v\": 1}")
        docs.write(a, "move.json", "{\"v\": 1}")
        try set.sync(a)
        let editRef = field(docs.read(a, "edit.json"), "refId")
        let moveRef = field(docs.read(a, "move.json"), "refId")
        // Someone edits with plain git: changes a value without touching changesetId,
        // adds a file without ids, deletes one, renames one.
        let plain = try set.plainClone()
        docs.write(
            plain, "edit.json", docs.read(plain, "edit.json")!.replacingOccurrences(of: "\"v\": 1", with: "\"v\": 2"))
        docs.write(plain, "added.json", "{\"fresh\": true}\n")
        try git(["rm", "-q", "gone.json"], in: plain, home: set.home)
        try git(["mv", "move.json", "moved.json"], in: plain, home: set.home)
        try set.gitCommitAndPush(plain, "edit by hand")

        let report = try set.sync(a)
        #expect(report.conflicts.isEmpty)
        #expect(field(docs.read(a, "edit.json"), "v") == "2")
        #expect(field(docs.read(a, "edit.json"), "refId") == editRef)
        #expect(!FileManager.default.fileExists(atPath: a + "/gone.json"))
        #expect(field(docs.read(a, "moved.json"), "refId") == moveRef)
        let added = try #require(docs.read(a, "added.json"))
        #expect(field(added, "refId") != nil && field(added, "fresh") == "1")
        // The adopted ids were published back, so plain git sees them too and a
        // second replica derives nothing new.
        let again = try set.plainClone()
        #expect(field(docs.read(again, "added.json"), "refId") == field(added, "refId"))
        let b = try set.make("b")
        try set.sync(b)
        #expect(docs.snapshot(a) == docs.snapshot(b))
        #expect(try set.sync(a).pushed.isEmpty)
        try git(["fsck", "--strict"], in: set.repo, home: set.home)
    }

    @Test func twoReplicasAdoptingTheSamePlainFileAgree() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "seed.json", "{}")
        try set.sync(a)
        let b = try set.make("b")
        try set.sync(b)
        let plain = try set.plainClone()
        docs.write(plain, "shared.json", "{\"x\": 1}\n")
        try set.gitCommitAndPush(plain, "add")
        // Both fetch the unstamped file before either publishes the ids.
        let ra = try set.sync(a)
        let rb = try set.sync(b)
        try set.sync(a)
        #expect(ra.conflicts.isEmpty && rb.conflicts.isEmpty)
        #expect(docs.snapshot(a) == docs.snapshot(b))
    }

    @Test func rejectedPushFetchesReconcilesAndRetries() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "one.json", "{\"v\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        try set.sync(b)
        // A plain-git commit lands between b's fetch and b's push: b's first push is a
        // non-fast-forward, which must end in both changes on the remote.
        docs.write(a, "from-a.json", "{\"v\": \"a\"}")
        try set.sync(a)
        docs.write(b, "from-b.json", "{\"v\": \"b\"}")
        let ws = try Workspace.open(at: b, readOnly: false)
        let report = try ws.sync.run(.push)
        ws.close()
        #expect(report.pushed.map(\.path) == ["from-b.json"])
        #expect(report.pulled.map(\.path) == ["from-a.json"])
        let plain = try set.plainClone()
        #expect(FileManager.default.fileExists(atPath: plain + "/from-a.json"))
        #expect(FileManager.default.fileExists(atPath: plain + "/from-b.json"))
    }

    @Test func deletionsAreTombstonesInTheRepository() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "bye.json", "{\"v\": 1}")
        try set.sync(a)
        let refId = try #require(field(docs.read(a, "bye.json"), "refId"))
        let b = try set.make("b")
        try set.sync(b)
        try FileManager.default.removeItem(atPath: a + "/bye.json")
        try set.sync(a)
        let plain = try set.plainClone()
        #expect(!FileManager.default.fileExists(atPath: plain + "/bye.json"))
        #expect(FileManager.default.fileExists(atPath: plain + "/.docsync/tombstones/\(refId).json"))
        try set.sync(b)
        #expect(!FileManager.default.fileExists(atPath: b + "/bye.json"))
    }

    /// Found by the convergence fuzzer: a document replaced at its path by another one
    /// (a new refId) leaves the same path in the tree, so only its tombstone says it went.
    /// A replica that pulls across the gc that purged the tombstone must still drop it.
    @Test func aDocumentReplacedAtItsPathGoesAfterItsTombstoneIsPurged() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "d.json", "{\"v\": \"first\"}")
        try set.sync(a)
        let b = try set.make("b")
        try set.sync(b)
        let firstRefId = try #require(field(docs.read(b, "d.json"), "refId"))
        // Another document's refId: a new document at that path (a file without ids would be
        // a new version of the same one).
        docs.write(a, "d.json", "{\"refId\": \"another-document\", \"v\": \"second\"}")
        try set.sync(a)
        #expect(field(docs.read(a, "d.json"), "refId") != firstRefId)
        let ws = try Workspace.open(at: a, readOnly: false)
        try ws.settings.set("gc.tombstoneMaxAgeDays", "0.000000001")
        Thread.sleep(forTimeInterval: 0.01)
        let report = try ws.gc.collect(dryRun: false)
        ws.close()
        #expect(report.remote?.purged.map(\.refId) == [firstRefId])
        try set.sync(b)
        #expect(docs.snapshot(b) == docs.snapshot(a), "b kept the replaced document beside the new one")
    }

    @Test func emptyRepositoryIsAValidRemoteAndNoOpSyncsMakeNoCommits() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        #expect(try set.sync(a).pushed.isEmpty)
        docs.write(a, "x.json", "{}")
        try set.sync(a)
        let head = try git(["rev-parse", "main"], in: set.repo, home: set.home)
        for _ in 0..<3 { try set.sync(a) }
        #expect(try git(["rev-parse", "main"], in: set.repo, home: set.home) == head)
    }

    @Test func missingRepositoryAndWrongBranchAreClearErrors() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a", url: set.folder.sub("no-such.git"))
        do {
            try set.sync(a)
            Issue.record("expected an error")
        } catch let error as RemoteError {
            guard case .rejected(_, let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("no git repository"))
        }
        let b = try set.make("b")
        docs.write(b, "x.json", "{}")
        try set.sync(b)
        let c = try set.make("c")
        let ws = try Workspace.open(at: c, readOnly: false)
        try ws.settings.set("remote.branch", "nope")
        do {
            _ = try ws.sync.run(.both)
            Issue.record("expected an error")
        } catch let error as RemoteError {
            #expect(error.localizedDescription.contains("branch 'nope' does not exist"))
            #expect(error.localizedDescription.contains("main"))
        }
        ws.close()
    }

    @Test func urlFormsAreRecognised() {
        #expect(GitURL("git@example.com:team/records.git")?.scheme == .ssh)
        #expect(GitURL("git@example.com:team/records.git")?.host == "example.com")
        #expect(GitURL("ssh://me@host:2222/srv/r.git")?.port == 2222)
        #expect(GitURL("https://user:secret@host/r.git")?.display == "https://user@host/r.git")
        #expect(GitURL("git://127.0.0.1:9418/r.git")?.scheme == .git)
        #expect(GitURL("/srv/records.git")?.scheme == .file)
        #expect(RemoteKind.detect("https://example.com/r.git") == .git)
        #expect(RemoteKind.detect("/nonexistent/folder") == .dir)
        #expect(RemoteKind.detect("/nonexistent/records.git") == .git)
    }
}
