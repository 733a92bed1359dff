import Foundation
import Testing

@testable import DocSyncKit

/// A bare repository made and edited with the git CLI, fetched into two caches side by
/// side: one by its path (or `file://` URL), which `GitLocalFetch` serves, and one over
/// `git daemon`, which libgit2's transport serves as before. Both must end with the same
/// references and the same objects reachable from them.
final class LocalFetchFixture {
    let folder = TempFolder("git-local-fetch")
    let daemon: GitDaemon
    var home: String { folder.sub("home") }
    var bare: String { folder.sub("repos/remote.git") }
    var work: String { folder.sub("work") }

    init() throws {
        try FileManager.default.createDirectory(atPath: folder.sub("repos"), withIntermediateDirectories: true)
        daemon = try GitDaemon(base: folder.sub("repos"))
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try git(["init", "-q", "--bare", "-b", "main", bare], in: folder.path, home: home)
        try git(["init", "-q", "-b", "main", work], in: folder.path, home: home)
        try git(["remote", "add", "origin", bare], in: work, home: home)
    }

    deinit { daemon.stop() }

    /// Writes `files` (path: text) in the working clone, commits and pushes them.
    func commitAndPush(_ files: [String: String], _ message: String) throws {
        for (path, text) in files { folder.write("work/" + path, text) }
        try git(["add", "-A"], in: work, home: home)
        try git(["commit", "-q", "-m", message], in: work, home: home)
        try git(["push", "-q", "origin", "main"], in: work, home: home)
    }

    func remote(_ url: String, cache: String) throws -> GitRemote {
        try GitRemote(
            url: url, branch: "main", cachePath: folder.sub(cache), settings: GitTransportSettings(home: home))
    }

    var daemonURL: String { daemon.url("remote") }

    /// `git` on a bare repository (a cache, or the remote).
    @discardableResult
    func gitDir(_ repo: String, _ args: [String]) throws -> String {
        try git(["--git-dir", repo] + args, in: folder.path, home: home)
    }

    /// The references of a cache and every object reachable from them, as git lists them.
    func contents(of cache: GitRemote) throws -> (refs: String, objects: [String]) {
        let refs = try gitDir(cache.repo.path, ["for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes"])
        let objects = refs.isEmpty ? "" : try gitDir(cache.repo.path, ["rev-list", "--objects", "--all"])
        return (refs, objects.split(separator: "\n").map(String.init).sorted())
    }

    /// Fetches into both caches and checks they agree, the local one without the
    /// transport and clean under `git fsck --full`.
    func fetchBoth(_ local: GitRemote, _ overDaemon: GitRemote, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let localHead = try local.fetchHead()
        let daemonHead = try overDaemon.fetchHead()
        #expect(localHead == daemonHead, sourceLocation: sourceLocation)
        #expect(
            localHead == (try? gitDir(bare, ["rev-parse", "main"]))?.trimmingCharacters(in: .whitespacesAndNewlines))
        let (mine, theirs) = (try contents(of: local), try contents(of: overDaemon))
        #expect(mine.refs == theirs.refs, sourceLocation: sourceLocation)
        #expect(mine.objects == theirs.objects, sourceLocation: sourceLocation)
        #expect(!mine.objects.isEmpty, sourceLocation: sourceLocation)
        try gitDir(local.repo.path, ["fsck", "--full", "--no-dangling"])
        #expect(local.fetchesOverTransport == 0, "a local repository is read without the transport")
        #expect(overDaemon.fetchesOverTransport > 0, sourceLocation: sourceLocation)
    }

    /// `count` documents of a few hundred bytes each, `version` in every one.
    static func documents(_ count: Int, version: Int, prefix: String = "doc") -> [String: String] {
        Dictionary(
            uniqueKeysWithValues: (0..<count).map { i in
                let body = (0..<12).map { "\"field\($0)\": \"value \($0) of \(i)\"" }.joined(separator: ",\n  ")
                return ("\(prefix)/\(i % 7)/\(i).json", "{\n  \(body),\n  \"v\": \(version)\n}\n")
            })
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct GitLocalFetchTests {
    @Test(arguments: [false, true])
    func aLocalFetchMatchesTheTransportsByPathAndFileURL(fileURL: Bool) throws {
        let fixture = try LocalFetchFixture()
        let local = try fixture.remote(fileURL ? "file://" + fixture.bare : fixture.bare, cache: "local")
        let overDaemon = try fixture.remote(fixture.daemonURL, cache: "daemon")

        // Many new objects: one pack, nothing loose.
        try fixture.commitAndPush(LocalFetchFixture.documents(150, version: 1), "first")
        try fixture.fetchBoth(local, overDaemon)
        let afterClone = try gitObjectCounts(local.repo.path, home: fixture.home)
        #expect(afterClone["packs"] == 1 && afterClone["count"] == 0, "\(afterClone)")

        // A few: loose, no new pack.
        try fixture.commitAndPush(["doc/0/0.json": "{\"v\": 2}\n", "new.json": "{}\n"], "small")
        try fixture.fetchBoth(local, overDaemon)
        let afterPull = try gitObjectCounts(local.repo.path, home: fixture.home)
        #expect(afterPull["packs"] == 1 && (afterPull["count"] ?? 0) > 0, "\(afterPull)")

        // Nothing new: nothing copied, same answer.
        try fixture.fetchBoth(local, overDaemon)
        #expect(try gitObjectCounts(local.repo.path, home: fixture.home)["count"] == afterPull["count"])
    }

    @Test func aBranchGoneFromTheRemoteIsExplainedAsBefore() throws {
        let fixture = try LocalFetchFixture()
        let local = try fixture.remote(fixture.bare, cache: "local")
        let overDaemon = try fixture.remote(fixture.daemonURL, cache: "daemon")
        try fixture.commitAndPush(["a.json": "{}\n"], "first")
        try fixture.fetchBoth(local, overDaemon)
        try fixture.gitDir(fixture.bare, ["branch", "-q", "other", "main"])
        try fixture.gitDir(fixture.bare, ["update-ref", "-d", "refs/heads/main"])
        let mine = #expect(throws: RemoteError.self) { try local.fetchHead() }
        let theirs = #expect(throws: RemoteError.self) { try overDaemon.fetchHead() }
        #expect(mine.map { "\($0)" }?.contains("branches: other") == true, "\(String(describing: mine))")
        #expect(
            mine.map { "\($0)".replacingOccurrences(of: local.displayURL, with: "URL") }
                == theirs.map { "\($0)".replacingOccurrences(of: overDaemon.displayURL, with: "URL") })
        #expect(try fixture.contents(of: local).refs.isEmpty && fixture.contents(of: overDaemon).refs.isEmpty)
        #expect(local.fetchesOverTransport == 0)
    }

    @Test func aRemoteRepackedWithDeltasBetweenPullsIsReadFromItsPacks() throws {
        let fixture = try LocalFetchFixture()
        let local = try fixture.remote(fixture.bare, cache: "local")
        let overDaemon = try fixture.remote(fixture.daemonURL, cache: "daemon")
        try fixture.commitAndPush(LocalFetchFixture.documents(120, version: 1), "first")
        try fixture.fetchBoth(local, overDaemon)
        // Small edits of large files: `gc --aggressive` stores them as deltas.
        for version in 2...4 {
            try fixture.commitAndPush(LocalFetchFixture.documents(40, version: version), "edit \(version)")
        }
        try fixture.gitDir(fixture.bare, ["gc", "-q", "--aggressive", "--prune=now"])
        let packed = try gitObjectCounts(fixture.bare, home: fixture.home)
        #expect(packed["count"] == 0 && packed["packs"] == 1, "\(packed)")
        #expect(
            try fixture.gitDir(fixture.bare, ["verify-pack", "-v"] + packFiles(fixture.bare)).contains("chain length"))
        // And some loose objects on top of the pack.
        try fixture.commitAndPush(["loose.json": "{\"v\": 5}\n"], "after gc")
        try fixture.fetchBoth(local, overDaemon)
        // A first fetch of the whole history from the repacked remote.
        let fresh = try fixture.remote(fixture.bare, cache: "fresh")
        let freshDaemon = try fixture.remote(fixture.daemonURL, cache: "fresh-daemon")
        try fixture.fetchBoth(fresh, freshDaemon)
    }

    @Test func aDamagedRemoteObjectIsAnErrorNamingTheRepository() throws {
        let fixture = try LocalFetchFixture()
        try fixture.commitAndPush(["a.json": "{\"v\": 1}\n", "b.json": "{\"v\": 1}\n"], "first")
        let blob = try fixture.gitDir(fixture.bare, ["rev-parse", "main:b.json"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let file = fixture.bare + "/objects/" + blob.prefix(2) + "/" + blob.dropFirst(2)
        chmod(file, 0o644)
        try Data("not a git object".utf8).write(to: URL(fileURLWithPath: file))
        let local = try fixture.remote(fixture.bare, cache: "local")
        let error = #expect(throws: RemoteError.self) { try local.fetchHead() }
        #expect(error.map { "\($0)" }?.contains(fixture.bare) == true, "\(String(describing: error))")
        // The tracking ref never names a commit whose objects the cache lacks.
        #expect(try fixture.contents(of: local).refs.isEmpty)
        #expect(local.fetchesOverTransport == 0)
    }

    private func packFiles(_ bare: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: bare + "/objects/pack").filter { $0.hasSuffix(".idx") }
            .map { bare + "/objects/pack/" + $0 }
    }
}
