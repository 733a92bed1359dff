// Issue 42, defects 5 and 6 (remote wording): a remote document larger than
// `remote.maxDocumentBytes` is reported by name and skipped (exit 1) while the rest of the
// pull goes on, and it is reported again on the next run; a folder remote this user may not
// read says permission denied; a git push a server refuses (a pre-receive hook) exits 1
// with the server's words, not 75; init on an empty bare repository says it starts a remote.

import DocSyncKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Remote limits: oversized documents, permissions, refused pushes", .serialized)
struct RemoteLimitsTests {
    /// A document of about `bytes` bytes (valid JSON, no ids).
    static func large(_ bytes: Int, note: String = "big") -> String {
        "{\n  \"note\": \"\(note)\",\n  \"pad\": \"" + String(repeating: "x", count: bytes) + "\"\n}\n"
    }

    static func git(_ args: [String], in dir: String) -> RunResult {
        let env = Reliability.gitEnv.merging([
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com"
        ]) { $1 }
        return CLI.runTool("/usr/bin/git", args, in: dir, env: env)
    }

    @Test(
        "drive-layout folder remote: a document over remote.maxDocumentBytes is named and skipped (exit 1), the rest arrives, it is said again next run, a push over it is refused, and raising the ceiling pulls it"
    )
    func oversizedOnFolderRemote() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["grow.json": "{\n  \"note\": \"small\",\n  \"pad\": \"\"\n}\n"])
        a.sync()
        let b = box.clone("B")
        b.ok("config", "remote.maxDocumentBytes", "100000")
        // A pushes a large new document, a small one, and makes one both hold large.
        a.write("big.json", Self.large(200_000))
        a.write("other.json", "{\"v\": 1}\n")
        // An edit of the document both hold, its ids kept: it grows past B's ceiling.
        a.write(
            "grow.json",
            a.read("grow.json")!.replacing(
                "\"pad\": \"\"", with: "\"pad\": \"" + String(repeating: "x", count: 150_000) + "\""))
        a.sync()

        let first = b.run("sync")
        #expect(first.exit == 1, first.comment)
        #expect(
            first.stderr.contains("big.json") && first.stderr.contains("grow.json")
                && first.stderr.contains("remote.maxDocumentBytes"), first.comment)
        #expect(b.json("other.json")?["v"] as? Int == 1, "the rest of the pull arrives: \(first)")
        #expect(!b.exists("big.json"), "never pulled")
        #expect(!first.stderr.contains("not valid documents"), first.comment)
        #expect(b.json("grow.json")?["note"] as? String == "small", "not deleted, not changed: \(first)")

        // Said again on the next run, not dropped for good.
        let again = b.run("sync")
        #expect(again.exit == 1 && again.stderr.contains("big.json"), again.comment)

        // An edit here of a document whose remote version was never read is not pushed over it.
        b.write("grow.json", b.read("grow.json")!.replacing("\"note\": \"small\"", with: "\"note\": \"edited on B\""))
        let refused = b.run("sync")
        #expect(refused.exit == 1, refused.comment)
        #expect(
            refused.stderr.contains("grow.json") && refused.stderr.contains("not pushed"), refused.comment)
        #expect(b.json("grow.json")?["note"] as? String == "edited on B", "the edit is kept")

        // With the ceiling raised, both arrive, and the edit merges with the large version.
        b.ok("config", "remote.maxDocumentBytes", "1000000")
        b.sync()
        #expect(b.read("big.json") == a.read("big.json"))
        #expect((b.json("big.json")?["pad"] as? String)?.count == 200_000)
        let grown = b.json("grow.json")
        #expect(
            grown?["note"] as? String == "edited on B" && (grown?["pad"] as? String)?.count == 150_000, "merged")
        let quiet = b.run("sync")
        #expect(quiet.exit == 0 && !quiet.stderr.contains("maxDocumentBytes"), quiet.comment)
        a.sync()
        #expect(a.json("grow.json")?["note"] as? String == "edited on B")
    }

    @Test(
        "git remote: a file over remote.maxDocumentBytes committed with plain git is named and skipped (exit 1), the other files of the same pull arrive, it is said again, and raising the ceiling pulls it"
    )
    func oversizedOnGitRemote() throws {
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("keep.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        a.ok("config", "remote.maxDocumentBytes", "100000")

        let work = box.path("work")
        #expect(Self.git(["clone", "-q", repo, work], in: box.root).exit == 0)
        try Self.large(300_000).write(toFile: work + "/big.json", atomically: true, encoding: .utf8)
        try "{\"v\": 2}\n".write(toFile: work + "/new.json", atomically: true, encoding: .utf8)
        // keep.json, which A holds, grows past A's ceiling too (its ids kept).
        let kept = try String(contentsOfFile: work + "/keep.json", encoding: .utf8)
        try kept.replacing("\"v\": 1", with: "\"v\": 1, \"pad\": \"" + String(repeating: "y", count: 200_000) + "\"")
            .write(toFile: work + "/keep.json", atomically: true, encoding: .utf8)
        #expect(Self.git(["add", "big.json", "new.json", "keep.json"], in: work).exit == 0)
        #expect(Self.git(["commit", "-qm", "a large file and a small one"], in: work).exit == 0)
        #expect(Self.git(["push", "-q", "origin", "main"], in: work).exit == 0)

        let first = a.run("sync")
        #expect(first.exit == 1, first.comment)
        #expect(
            first.stderr.contains("big.json") && first.stderr.contains("keep.json")
                && first.stderr.contains("remote.maxDocumentBytes"), first.comment)
        #expect(a.json("new.json")?["v"] as? Int == 2, "the rest of the pull arrives: \(first)")
        #expect(
            a.json("keep.json")?["v"] as? Int == 1 && a.json("keep.json")?["pad"] == nil, "not changed, not deleted")
        #expect(!a.exists("big.json"))

        let again = a.run("sync")
        #expect(again.exit == 1 && again.stderr.contains("big.json"), again.comment)

        // An edit of keep.json here is not pushed over the version A never read.
        a.write("keep.json", a.read("keep.json")!.replacing("\"v\": 1", with: "\"v\": 5"))
        let refused = a.run("sync")
        #expect(refused.exit == 1, refused.comment)
        #expect(refused.stderr.contains("keep.json") && refused.stderr.contains("not pushed"), refused.comment)

        a.ok("config", "remote.maxDocumentBytes", "1000000")
        a.sync()
        #expect((a.json("big.json")?["pad"] as? String)?.count == 300_000)
        #expect(a.json("keep.json")?["v"] as? Int == 5 && (a.json("keep.json")?["pad"] as? String)?.count == 200_000)
        #expect(!Self.git(["--git-dir", repo, "show", "main:keep.json"], in: box.root).stdout.contains("\"v\": 1"))
        let quiet = a.run("sync")
        #expect(quiet.exit == 0 && !quiet.stderr.contains("maxDocumentBytes"), quiet.comment)
    }

    @Test(
        "the default ceiling (64 MiB): an 80 MiB sparse file committed with git, and an 80 MiB sparse object in a folder remote, are named and never read"
    )
    func defaultCeilingSparseFiles() throws {
        let size: off_t = 80 << 20
        // git: a file of 80 MiB of NULs (sparse on disk, tiny once compressed).
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let a = box.replica("A")
        a.write("keep.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let work = box.path("work")
        #expect(Self.git(["clone", "-q", repo, work], in: box.root).exit == 0)
        #expect(FileManager.default.createFile(atPath: work + "/huge.json", contents: nil))
        #expect(truncate(work + "/huge.json", size) == 0)
        try "{\"v\": 2}\n".write(toFile: work + "/new.json", atomically: true, encoding: .utf8)
        #expect(Self.git(["add", "huge.json", "new.json"], in: work).exit == 0)
        #expect(Self.git(["commit", "-qm", "huge"], in: work).exit == 0)
        #expect(Self.git(["push", "-q", "origin", "main"], in: work).exit == 0)
        let pulled = a.run("sync")
        #expect(pulled.exit == 1, pulled.comment)
        #expect(
            pulled.stderr.contains("huge.json: \(size) bytes, larger than remote.maxDocumentBytes (67108864)"),
            pulled.comment)
        #expect(a.json("new.json")?["v"] as? Int == 2 && !a.exists("huge.json"), pulled.comment)

        // A folder remote: B pushed a small version; its object there becomes 80 MiB.
        let folder = Sandbox()
        let b = folder.initReplica("B", files: ["doc.json": "{\"v\": 1}\n"])
        b.sync()
        let c = folder.clone("C")
        b.write("doc.json", b.read("doc.json")!.replacing("\"v\": 1", with: "\"v\": 2"))
        b.write("other.json", "{\"w\": 1}\n")
        b.sync()
        let objects = folder.remote + "/.docsync/objects"
        let hash = ContentHash.of(b.bytes("doc.json")!)
        let object = objects + "/" + hash.prefix(2) + "/" + hash.dropFirst(2)
        #expect(FileManager.default.fileExists(atPath: object), "the version is a loose object: \(object)")
        #expect(chmod(object, 0o644) == 0 && truncate(object, size) == 0)
        let skipped = c.run("sync")
        #expect(skipped.exit == 1, skipped.comment)
        #expect(
            skipped.stderr.contains("doc.json: \(size) bytes, larger than remote.maxDocumentBytes (67108864)"),
            skipped.comment)
        #expect(c.json("other.json")?["w"] as? Int == 1 && c.json("doc.json")?["v"] as? Int == 1, skipped.comment)
    }

    @Test(
        "a folder remote this user may not read: permission denied naming the path, exit 1 (not 75)",
        .enabled(if: Prerequisite.unprivileged.runsHere))
    func unreadableFolderRemote() throws {
        try Prerequisite.unprivileged.require()
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        var command = [CLI.binary, "sync"]
        if getuid() == 0 {
            // Root reads anything: the run drops to nobody, who owns the tree and not the remote.
            #expect(CLI.runTool("/bin/chown", ["-R", "65534:65534", a.root], in: "/").exit == 0)
            command = Prerequisite.asNobody + command
        }
        #expect(chmod(box.remote, getuid() == 0 ? 0o700 : 0o000) == 0)
        defer { chmod(box.remote, 0o755) }
        let r = CLI.runTool(command[0], Array(command.dropFirst()), in: a.root, env: ["HOME": a.root])
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("permission denied") && r.stderr.contains(box.remote + "/.docsync"), r.comment)
        #expect(!r.stderr.contains("is missing"), r.comment)
    }

    @Test("a git push refused by the server's pre-receive hook: exit 1 with the hook's words, not 75")
    func pushRefusedByHook() throws {
        let daemon = try GitDaemon()
        let url = try daemon.makeRepository("records")
        let box = Sandbox()
        let a = box.replica("A")
        a.write("a.json", "{\"v\": 1}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let hook = daemon.repositoryPath("records") + "/hooks/pre-receive"
        try "#!/bin/sh\necho 'records are frozen for the audit' >&2\nexit 1\n".write(
            toFile: hook, atomically: true, encoding: .utf8)
        #expect(chmod(hook, 0o755) == 0)
        a.write("a.json", "{\"v\": 2}\n")
        let refused = a.run("sync")
        #expect(refused.exit == 1, refused.comment)
        #expect(refused.stderr.contains("records are frozen for the audit"), refused.comment)
        #expect(!refused.stderr.contains("kept changing"), refused.comment)
    }

    @Test("init against a new empty bare git repository says it starts a new remote, not that it joined one")
    func initOnEmptyBareRepository() throws {
        let box = Sandbox()
        let repo = box.path("remote.git")
        Reliability.makeBareRepo(repo)
        let started = CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root)
        #expect(started.exit == 0, started.comment)
        #expect(started.stdout.contains("Started a new remote"), started.comment)
        #expect(!started.stdout.contains("Joined"), started.comment)
        box.replica("A").write("a.json", "{\"v\": 1}\n")
        box.replica("A").sync()
        let joined = CLI.run(["init", "--remote", repo, "--name", "B", "B"], in: box.root)
        #expect(joined.exit == 0 && joined.stdout.contains("Joined the existing remote"), joined.comment)
    }
}

extension Prerequisite {
    /// `setpriv` in front of a command runs it as nobody (65534), without supplementary
    /// groups (see `unprivileged`).
    static let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
}
