// A remote has an identity, and a tree knows which remote it synced with: a mistyped URL
// is refused instead of becoming a new remote, pointing at another remote needs an
// explicit --reset-base, and pointing back at the remote the tree synced with resets nothing.

import Foundation
import Testing

@Suite("Which remote a tree syncs with")
struct RemoteIdentityTests {
    static func configuredURL(_ r: Replica) -> String {
        r.run("config", "remote.url").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "config remote.url to a folder with no remote: refused (exit 1), config unchanged, nothing created; --create makes one"
    )
    func mistypedFolderIsRefused() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n"])
        a.sync()
        let typo = box.path("remtoe")
        let r = a.run("config", "remote.url", typo)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("no docsync remote at \(typo)"), r.comment)
        #expect(r.stderr.contains("--create"), "says how to make one on purpose: \(r)")
        #expect(!FileManager.default.fileExists(atPath: typo), "no remote was created")
        #expect(Self.configuredURL(a) == box.remote)
        let again = a.run("sync")
        #expect(again.exit == 0 && again.stdout.contains("0 pushed"), again.comment)

        // On purpose: a new remote is a different remote, so the base is reset too.
        let refused = a.run("config", "remote.url", typo, "--create")
        #expect(refused.exit == 1 && refused.stderr.contains("--reset-base"), refused.comment)
        #expect(!FileManager.default.fileExists(atPath: typo))
        let made = a.run("config", "remote.url", typo, "--create", "--reset-base")
        #expect(made.exit == 0, made.comment)
        #expect(FileManager.default.fileExists(atPath: typo + "/.docsync/format"))
        #expect(Self.configuredURL(a) == typo)
        a.sync()
        #expect(FileManager.default.fileExists(atPath: typo + "/a.json"), "the tree is merged into the new remote")
    }

    enum Kind: String, CaseIterable, Sendable { case dir, git }

    @Test(
        "a mistyped URL, the same remote by another path, then the right URL again: nothing is reset; a deletion made meanwhile stays deleted, an edit is simply pulled",
        arguments: Kind.allCases)
    func pointingBackResetsNothing(_ kind: Kind) throws {
        let box = Sandbox("back-\(kind)")
        let url = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        a.write("keep.json", "{\"v\": \"keep\"}\n")
        a.write("gone.json", "{\"v\": \"gone\"}\n")
        #expect(CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let cloned = CLI.run(["clone", "--name", "B", url, "B"], in: box.root)
        #expect(cloned.exit == 0, cloned.comment)
        let b = box.replica("B")
        _ = a.run("config", "remote.url", box.path("typo" + (kind == .git ? ".git" : "")))
        // The same remote by another path (a mount point, a symlink).
        let alias = box.path("alias" + (kind == .git ? ".git" : ""))
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: url)
        let moved = a.run("config", "remote.url", alias)
        #expect(moved.exit == 0, moved.comment)
        #expect(!moved.stdout.contains("The remote changed"), "the same remote: \(moved)")
        b.remove("gone.json")
        b.write("keep.json", b.read("keep.json")!.replacingOccurrences(of: "\"keep\"", with: "\"kept by B\""))
        b.sync()
        let back = a.run("config", "remote.url", url)
        #expect(back.exit == 0, back.comment)
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(!a.exists("gone.json"), "the deletion is pulled, not undone: \(r)")
        #expect(a.conflictCopies().isEmpty, "an untouched document shows no conflict")
        #expect(a.json("keep.json")?["v"] as? String == "kept by B", "B's edit is simply pulled")
        #expect(r.stdout.contains("0 pushed"), r.comment)
        b.sync()
        #expect(!b.exists("gone.json"), "nor resurrected anywhere")
    }

    @Test("pointing at a different remote needs --reset-base; with it, the next sync merges and deletes nothing")
    func differentRemoteNeedsResetBase() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": \"a\"}\n"])
        a.sync()
        let other = box.path("other")
        let o = box.replica("O")
        o.write("o.json", "{\"v\": \"o\"}\n")
        #expect(CLI.run(["init", "--remote", other, "--name", "O", "O"], in: box.root).exit == 0)
        o.sync()
        let refused = a.run("config", "remote.url", other)
        #expect(refused.exit == 1, refused.comment)
        #expect(refused.stderr.contains("different remote") && refused.stderr.contains("--reset-base"), refused.comment)
        #expect(Self.configuredURL(a) == box.remote)
        let switched = a.run("config", "remote.url", other, "--reset-base")
        #expect(switched.exit == 0, switched.comment)
        a.sync()
        #expect(Set(a.documents().keys) == ["a.json", "o.json"])
    }

    @Test(
        "git: a path with no repository is refused unless --create (which makes a bare one); an unrelated repository needs --reset-base"
    )
    func gitRemoteIdentity() {
        let box = Sandbox()
        let repo = Reliability.remote(box, git: true)
        let a = box.replica("A")
        a.write("a.json", "{\"v\": \"a\"}\n")
        #expect(CLI.run(["init", "--remote", repo, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let typo = box.path("remtoe.git")
        let r = a.run("config", "remote.url", typo)
        #expect(r.exit == 1 && r.stderr.contains("no docsync remote at \(typo)"), r.comment)
        #expect(!FileManager.default.fileExists(atPath: typo))

        // A clone of the same repository (same history) is the same remote.
        let mirror = box.path("mirror.git")
        let cloned = CLI.runTool(
            "/usr/bin/git", ["clone", "-q", "--bare", repo, mirror], in: box.root, env: Reliability.gitEnv)
        #expect(cloned.exit == 0, cloned.comment)
        let same = a.run("config", "remote.url", mirror)
        #expect(same.exit == 0 && !same.stdout.contains("The remote changed"), same.comment)
        let back = a.run("config", "remote.url", repo)
        #expect(back.exit == 0, back.comment)

        // An unrelated repository is another remote.
        let unrelated = box.path("unrelated.git")
        Reliability.makeBareRepo(unrelated)
        let u = box.replica("U")
        u.write("u.json", "{\"v\": \"u\"}\n")
        #expect(CLI.run(["init", "--remote", unrelated, "--name", "U", "U"], in: box.root).exit == 0)
        u.sync()
        let refused = a.run("config", "remote.url", unrelated)
        #expect(refused.exit == 1 && refused.stderr.contains("--reset-base"), refused.comment)
        let made = a.run("config", "remote.url", typo, "--create", "--reset-base")
        #expect(made.exit == 0, made.comment)
        a.sync()
        let files = CLI.runTool(
            "/usr/bin/git", ["--git-dir", typo, "ls-tree", "--name-only", "main"], in: "/", env: Reliability.gitEnv)
        #expect(files.stdout.contains("a.json"), files.comment)
    }

    @Test("init --remote in a folder whose parent does not exist is refused (a typo is not created with mkdir -p)")
    func initWithMissingParent() {
        let box = Sandbox()
        let url = box.path("no-such-share/records")
        let r = CLI.run(["init", "--remote", url, "A"], in: box.root)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains(box.path("no-such-share")), r.comment)
        #expect(!FileManager.default.fileExists(atPath: box.path("no-such-share")))
        #expect(!FileManager.default.fileExists(atPath: box.path("A/.docsync")), "no half-made tree")
    }

    @Test("clone of a path with no remote: exit 1, \"no docsync remote at …\"")
    func cloneWithoutRemote() {
        let box = Sandbox()
        let missing = box.path("missing")
        let r = CLI.run(["clone", missing, "B"], in: box.root)
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("no docsync remote at \(missing)"), r.comment)
        let empty = box.path("empty")
        try? FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let r2 = CLI.run(["clone", empty, "C"], in: box.root)
        #expect(r2.exit == 1 && r2.stderr.contains("no docsync remote at \(empty)"), r2.comment)
        #expect(
            !FileManager.default.fileExists(atPath: box.path("B"))
                && !FileManager.default.fileExists(atPath: box.path("C")))
    }
}
