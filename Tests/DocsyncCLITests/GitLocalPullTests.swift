// Pulls from a git repository on a local path, which docsync reads without libgit2's
// transport (GitLocalFetch), while two other replicas push into it at the same moment:
// each pull must land on one whole commit (its tree exactly, every object it needs in
// the cache), and nothing pushed may be lost.

import Foundation
import Testing

@Suite("Pulls from a local git repository while others push", .serialized)
struct GitLocalPullTests {
    static let rounds = 3

    /// The documents of the commit `r`'s cache tracks (`.docsync/` left out), after `git
    /// fsck --full` found the cache whole.
    static func trackedDocuments(_ r: Replica, sourceLocation: SourceLocation = #_sourceLocation) -> Set<String> {
        let cache = r.path(".docsync/git")
        let fsck = CLI.runTool(
            "/usr/bin/git", ["--git-dir", cache, "fsck", "--full", "--no-dangling", "--no-progress"], in: "/",
            env: Reliability.gitEnv)
        // A cache's HEAD names no branch ("notice: HEAD points to an unborn branch"): any other line is a problem.
        let problems = (fsck.stdout + fsck.stderr).split(separator: "\n").filter { !$0.hasPrefix("notice:") }
        #expect(fsck.exit == 0 && problems.isEmpty, "git fsck of \(cache): \(fsck)", sourceLocation: sourceLocation)
        let listed = CLI.runTool(
            "/usr/bin/git", ["--git-dir", cache, "ls-tree", "-r", "--name-only", "refs/remotes/origin/main"], in: "/",
            env: Reliability.gitEnv)
        #expect(listed.exit == 0, listed.comment, sourceLocation: sourceLocation)
        return Set(listed.stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix(".docsync/") })
    }

    @Test(
        "two replicas push while a third pulls again and again, by path and by file:// URL: every pull is one whole commit, nothing is lost",
        arguments: [false, true])
    func pullsWhileOthersPush(fileURL: Bool) throws {
        let box = Sandbox("local-pull-\(fileURL)")
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let url = fileURL ? "file://" + repo : repo
        let a = box.replica("A")
        a.write("seed.json", "{\"v\": \"seed\"}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let b = ConcurrentPushTests.clone(box, "B", url)
        let c = ConcurrentPushTests.clone(box, "C", url)
        var written: Set<String> = ["seed.json"]
        var seen = 1
        for round in 1...Self.rounds {
            // A's push is large (a pack into the remote, then a pack into C's cache), B's small (loose).
            for i in 0..<120 { a.write("a\(round)/\(i).json", "{\"v\": \"a\(round)-\(i)\"}\n") }
            for i in 0..<2 { b.write("b\(round)/\(i).json", "{\"v\": \"b\(round)-\(i)\"}\n") }
            written.formUnion((0..<120).map { "a\(round)/\($0).json" } + (0..<2).map { "b\(round)/\($0).json" })
            let pushes = [BackgroundRun(["sync"], in: a.root, env: [:]), BackgroundRun(["sync"], in: b.root, env: [:])]
            var pulls = 0
            repeat {
                let pulled = c.run("pull")
                #expect(pulled.exit == 0, "round \(round), pull \(pulls): \(pulled.comment)")
                pulls += 1
                let tracked = Self.trackedDocuments(c)
                #expect(Set(c.documents().keys) == tracked, "round \(round), pull \(pulls): the tree is one commit's")
                #expect(tracked.isSubset(of: written) && tracked.count >= seen, "round \(round), pull \(pulls)")
                seen = tracked.count
            } while pushes.contains(where: { $0.process.isRunning }) || pulls < 3
            for push in pushes {
                let result = push.wait()
                #expect(result.exit == 0, "round \(round): \(result.comment)")
            }
        }
        c.ok("pull")
        #expect(Self.trackedDocuments(c) == written)
        #expect(Set(c.documents().keys) == written, "nothing pushed is lost")
        Reliability.fsck(repo)
    }

    /// A (seed pushed) and C (a clone), then 120 new documents written in A.
    static func pullerAndPusher(_ box: Sandbox) -> (a: Replica, c: Replica, new: Set<String>) {
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("seed.json", "{\"v\": \"seed\"}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let c = ConcurrentPushTests.clone(box, "C", repo)
        for i in 0..<120 { a.write("new/\(i).json", "{\"v\": \"\(i)\"}\n") }
        return (a, c, Set((0..<120).map { "new/\($0).json" }))
    }

    @Test("a pull held after copying its objects while another replica pushes: it lands on the commit it copied")
    func pullHeldBeforeItsTrackingRef() throws {
        let box = Sandbox("local-pull-held")
        let (a, c, new) = Self.pullerAndPusher(box)
        c.write("mine.json", "{\"v\": \"c\"}\n")
        let gate = box.path("gate")
        let held = BackgroundRun(
            ["sync"], in: c.root,
            env: ["DOCSYNC_PAUSE_AT": "git.fetch-before-tracking-ref", "DOCSYNC_PAUSE_FILE": gate])
        #expect(waitUntil(seconds: 60) { FileManager.default.fileExists(atPath: gate + ".reached") })
        a.sync()
        FileManager.default.createFile(atPath: gate, contents: nil)
        let result = held.wait()
        #expect(result.exit == 0, result.comment)
        // C's push was refused (A moved the branch), so it fetched again and merged.
        #expect(Self.trackedDocuments(c) == new.union(["seed.json", "mine.json"]))
        #expect(Set(c.documents().keys) == new.union(["seed.json", "mine.json"]))
        a.sync()
        #expect(Set(a.documents().keys) == Set(c.documents().keys))
    }

    @Test("a pull killed after copying its objects, before its tracking ref: the next pull takes up from there")
    func pullKilledBeforeItsTrackingRef() throws {
        let box = Sandbox("local-pull-killed")
        let (a, c, new) = Self.pullerAndPusher(box)
        a.sync()
        let killed = c.run(["pull"], env: ["DOCSYNC_CRASH_AT": "git.fetch-before-tracking-ref"])
        #expect(killed.exit == 137, killed.comment)
        #expect(Self.trackedDocuments(c) == ["seed.json"], "the tracking ref did not move")
        c.ok("pull")
        #expect(Self.trackedDocuments(c) == new.union(["seed.json"]))
        #expect(Set(c.documents().keys) == new.union(["seed.json"]))
    }
}
