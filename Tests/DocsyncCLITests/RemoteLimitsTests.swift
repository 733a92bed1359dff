// Issue 42, defects 5 and 6 (remote wording): a remote document larger than
// `remote.maxDocumentBytes` is reported by name and skipped (exit 1) while the rest of the
// pull goes on, and it is reported again on the next run; a folder remote this user may not
// read says permission denied; a git push a server refuses (a pre-receive hook) exits 1
// with the server's words, not 75; init on an empty bare repository says it starts a remote.

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
    @Test("a folder remote this user may not read: permission denied naming the path, exit 1 (not 75)")
    func unreadableFolderRemote() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        var command = [CLI.binary, "sync"]
        if getuid() == 0 {
            // Root reads anything: the run drops to nobody, who owns the tree and not the remote.
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                if Prerequisite.requiredByCI { Issue.record("setpriv is missing: cannot drop privileges") }
                return
            }
            #expect(CLI.runTool("/bin/chown", ["-R", "65534:65534", a.root], in: "/").exit == 0)
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        #expect(chmod(box.remote, 0o700) == 0)
        if getuid() != 0 { #expect(chmod(box.remote, 0o000) == 0) }
        defer { chmod(box.remote, 0o755) }
        let r = CLI.runTool(command[0], Array(command.dropFirst()), in: a.root, env: ["HOME": a.root])
        if getuid() == 0, r.exit == 127 || r.stderr.contains("setpriv:") {
            if Prerequisite.requiredByCI { Issue.record("could not drop privileges: \(r)") }
            return
        }
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
