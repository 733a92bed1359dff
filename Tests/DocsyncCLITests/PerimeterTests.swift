// The tree's perimeter: what the scan could not look at is unknown, never deleted (SPEC,
// "The working tree"). A folder that became a symlink, a folder ignored after it was
// synced, a folder that became another tree, a folder this user may not read: each time
// the documents under it stay tracked, the run names them and exits 1, every other change
// still syncs, and no other replica loses anything. A remote path with `.docsync` at any
// depth is refused and never written. Each through the built binary, on every remote kind.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Perimeter: nothing unknown is read as deleted")
struct PerimeterTests {
    enum Kind: String, CaseIterable, Sendable { case dir, dir1, git }

    /// Three contacts among thirteen documents: the max-delete guard (half the remote)
    /// does not stand in the way of three deletions, as it did not for the user who lost them.
    static let contacts: [String: String] = {
        var files = [
            "contacts/ada.json": "{\"name\": \"Ada\"}\n",
            "contacts/bob.json": "{\"name\": \"Bob\"}\n",
            "contacts/cy.json": "{\"name\": \"Cy\"}\n",
            "top.json": "{\"v\": 1}\n"
        ]
        for i in 1...9 { files["notes/n\(i).json"] = "{\"n\": \(i)}\n" }
        return files
    }()

    /// Two replicas of one remote of `kind`, both holding `contacts`.
    static func pair(_ box: Sandbox, _ kind: Kind) -> (Replica, Replica) {
        box.remoteFormat1 = kind == .dir1
        let url = Reliability.remote(box, git: kind == .git, format1: kind == .dir1)
        let a = box.replica("A")
        for (path, text) in contacts { a.write(path, text) }
        let made = CLI.run(["init", "--remote", url, "--name", "A", "A"], in: box.root)
        #expect(made.exit == 0, made.comment)
        a.sync()
        let cloned = CLI.run(["clone", "--name", "B", url, "B"], in: box.root)
        #expect(cloned.exit == 0, cloned.comment)
        return (a, box.replica("B"))
    }

    static let names = ["contacts/ada.json", "contacts/bob.json", "contacts/cy.json"]

    /// What every test checks after the hazard: the other replica (and a fresh clone) still
    /// holds every contact, and b's edit of `top.json` made beside the hazard went out.
    static func expectNothingDeleted(_ box: Sandbox, _ a: Replica, sourceLocation: SourceLocation = #_sourceLocation) {
        let pulled = a.run("sync")
        #expect(pulled.exit == 0, pulled.comment, sourceLocation: sourceLocation)
        for name in names {
            #expect(a.exists(name), "\(name) was deleted on A: \(pulled)", sourceLocation: sourceLocation)
        }
        #expect(a.json("top.json")?["v"] as? Int == 2, "b's other edit still synced", sourceLocation: sourceLocation)
    }

    /// The sync of the replica that cannot look: exit 1, each unknown document named.
    static func expectUnknownReported(
        _ r: RunResult, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(r.exit == 1, "unknown documents make the run exit 1: \(r)", sourceLocation: sourceLocation)
        for name in names {
            #expect(
                r.stderr.contains("\(name): error: not looked at"), "\(name) is named: \(r)",
                sourceLocation: sourceLocation)
        }
        #expect(r.stderr.contains(reason), "the reason (\(reason)) is given: \(r)", sourceLocation: sourceLocation)
        #expect(
            !r.stdout.contains("delete"), "nothing recorded or pushed as deleted: \(r)", sourceLocation: sourceLocation)
    }

    @Test("a folder moved elsewhere and replaced by a symlink is not deleted anywhere", arguments: Kind.allCases)
    func symlinkedFolder(_ kind: Kind) throws {
        let box = Sandbox("symlinked-\(kind)")
        let (a, b) = Self.pair(box, kind)
        try Self.hide(b, "contacts", in: box)
        b.write("top.json", "{\"refId\": \"\(b.refId("top.json")!)\", \"v\": 2}\n")
        let r = b.run("sync")
        Self.expectUnknownReported(r, reason: "symbolic link")
        let status = b.run("status")
        #expect(status.exit == 1, status.comment)
        #expect(status.stdout.contains("Not looked at (kept tracked, not deleted)"), status.comment)
        #expect(status.stdout.contains("contacts/ada.json: contacts: symbolic link"), status.comment)
        let json = b.run("status", "--json")
        let unknown = (JSONHelp.parse(json.stdout) as? [String: Any])?["unknown"] as? [[String: Any]] ?? []
        #expect(unknown.compactMap { $0["path"] as? String }.sorted() == Self.names, json.comment)
        #expect(SchemaValidator.problems(json.stdout, schema: "status") == nil, json.comment)
        let syncJSON = b.run("sync", "--json")
        #expect(syncJSON.exit == 1, syncJSON.comment)
        #expect(Reliability.count(syncJSON, "unknown") == 3, syncJSON.comment)
        #expect(SchemaValidator.problems(syncJSON.stdout, schema: "sync-report") == nil, syncJSON.comment)
        Self.expectNothingDeleted(box, a)
        // The folder back in place: nothing to do, nothing lost.
        try Self.unhide(b, "contacts", in: box)
        let back = b.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(!back.stdout.contains("delete") && !back.stdout.contains("create"), back.comment)
        for name in Self.names { #expect(b.exists(name) && a.exists(name)) }
    }

    @Test("a synced folder added to .docsyncignore is not deleted anywhere", arguments: Kind.allCases)
    func ignoredAfterSync(_ kind: Kind) {
        let box = Sandbox("ignored-\(kind)")
        let (a, b) = Self.pair(box, kind)
        b.write(".docsyncignore", "contacts/\n")
        b.write("top.json", "{\"refId\": \"\(b.refId("top.json")!)\", \"v\": 2}\n")
        Self.expectUnknownReported(b.run("sync"), reason: "ignored by .docsyncignore")
        Self.expectNothingDeleted(box, a)
        // A file ignored by name after it was synced: the same.
        b.write(".docsyncignore", "bob.json\n")
        let one = b.run("sync")
        #expect(one.exit == 1 && one.stderr.contains("contacts/bob.json: error: not looked at"), one.comment)
        #expect(a.run("sync").exit == 0)
        #expect(a.exists("contacts/bob.json"))
    }

    @Test("a folder that became another tree (a .docsync/ in it) is not deleted anywhere", arguments: Kind.allCases)
    func folderBecameAnotherTree(_ kind: Kind) throws {
        let box = Sandbox("nested-\(kind)")
        let (a, b) = Self.pair(box, kind)
        try FileManager.default.createDirectory(atPath: b.path("contacts/.docsync"), withIntermediateDirectories: true)
        b.write("top.json", "{\"refId\": \"\(b.refId("top.json")!)\", \"v\": 2}\n")
        Self.expectUnknownReported(b.run("sync"), reason: "holds a .docsync/ folder")
        Self.expectNothingDeleted(box, a)
    }

    @Test(
        "out of a folder that is then hidden: a move keeps the identity; a copy waits, and is a new document once the folder is back"
    )
    func copyAndMoveOutOfAHiddenFolder() throws {
        let box = Sandbox("copy-move-hidden")
        let (a, b) = Self.pair(box, .dir)
        let ada = b.refId("contacts/ada.json")!, bob = b.refId("contacts/bob.json")!
        try FileManager.default.copyItem(atPath: b.path("contacts/ada.json"), toPath: b.path("ada-copy.json"))
        try FileManager.default.moveItem(atPath: b.path("contacts/bob.json"), toPath: b.path("bob.json"))
        try Self.hide(b, "contacts", in: box)
        let r = b.run("sync")
        #expect(r.exit == 1 && r.stderr.contains("contacts/ada.json: error: not looked at"), r.comment)
        #expect(b.refId("bob.json") == bob, "the file that was there (its inode) keeps the identity: \(r)")
        // The copy has another inode: a copy, or the document saved by an editor and moved?
        // Not decided while its original cannot be looked at.
        #expect(b.refId("ada-copy.json") == ada, "a copy waits, untouched: \(r)")
        #expect(r.stderr.contains("ada-copy.json carries its refId and waits unrecorded"), r.comment)
        #expect(a.run("sync").exit == 0)
        #expect(a.refId("contacts/ada.json") == ada && a.refId("bob.json") == bob && !a.exists("contacts/bob.json"))
        #expect(!a.exists("ada-copy.json"), "nothing recorded for the copy while it waits")
        try Self.unhide(b, "contacts", in: box)
        let back = b.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(b.refId("ada-copy.json").map { $0 != ada } == true, "with the original in view, a copy: \(back)")
        #expect(a.run("sync").exit == 0)
        #expect(a.refId("contacts/ada.json") == ada && a.exists("ada-copy.json"))
    }

    @Test(
        "a document saved by an editor (a new inode), moved out of its folder, then the folder hidden: moved, not copied",
        arguments: [Kind.dir, .git])
    func savedMovedThenHidden(_ kind: Kind) throws {
        let box = Sandbox("saved-moved-hidden-\(kind)")
        let (a, b) = Self.pair(box, kind)
        let ada = b.refId("contacts/ada.json")!
        // An editor's save: a new file renamed over the old one (a new inode), then a move,
        // with no docsync run in between to see the new inode.
        b.write("contacts/.ada.json.swp", "{\"refId\": \"\(ada)\", \"name\": \"Ada L.\"}\n")
        try Self.renameOver(b.path("contacts/.ada.json.swp"), b.path("contacts/ada.json"))
        try FileManager.default.moveItem(atPath: b.path("contacts/ada.json"), toPath: b.path("ada.json"))
        try Self.hide(b, "contacts", in: box)
        let hidden = b.run("sync")
        #expect(hidden.exit == 1, hidden.comment)
        #expect(hidden.stderr.contains("ada.json carries its refId and waits unrecorded"), hidden.comment)
        #expect(b.refId("ada.json") == ada, "nothing stamped into the waiting file: \(hidden)")
        let status = b.run("status", "--json")
        let unknown = (JSONHelp.parse(status.stdout) as? [String: Any])?["unknown"] as? [[String: Any]] ?? []
        #expect(
            unknown.first { $0["path"] as? String == "contacts/ada.json" }?["waiting"] as? [String] == ["ada.json"],
            status.comment)
        #expect(SchemaValidator.problems(status.stdout, schema: "status") == nil, status.comment)
        try Self.unhide(b, "contacts", in: box)
        let back = b.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(!back.stdout.contains("delete") && !back.stdout.contains("create"), "a move: \(back)")
        #expect(b.refId("ada.json") == ada, back.comment)
        let pulled = a.run("sync")
        #expect(pulled.exit == 0, pulled.comment)
        #expect(a.refId("ada.json") == ada && a.json("ada.json")?["name"] as? String == "Ada L.", pulled.comment)
        #expect(!a.exists("contacts/ada.json"), "moved, not copied: \(pulled)")
    }

    /// Moves `folder` of `r` out of the tree and leaves a symlink to it in its place.
    static func hide(_ r: Replica, _ folder: String, in box: Sandbox) throws {
        try FileManager.default.moveItem(atPath: r.path(folder), toPath: box.path("elsewhere"))
        try FileManager.default.createSymbolicLink(atPath: r.path(folder), withDestinationPath: box.path("elsewhere"))
    }

    static func unhide(_ r: Replica, _ folder: String, in box: Sandbox) throws {
        try FileManager.default.removeItem(atPath: r.path(folder))
        try FileManager.default.moveItem(atPath: box.path("elsewhere"), toPath: r.path(folder))
    }

    static func renameOver(_ from: String, _ to: String) throws {
        guard rename(from, to) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    @Test("a remote change to a document that could not be looked at waits, and applies once it can be")
    func remoteChangeWaits() throws {
        let box = Sandbox("waits")
        let (a, b) = Self.pair(box, .dir)
        a.remove("contacts/bob.json")
        a.write("contacts/ada.json", "{\"refId\": \"\(a.refId("contacts/ada.json")!)\", \"name\": \"Ada L.\"}\n")
        a.sync()
        try FileManager.default.moveItem(atPath: b.path("contacts"), toPath: box.path("elsewhere"))
        try FileManager.default.createSymbolicLink(
            atPath: b.path("contacts"), withDestinationPath: box.path("elsewhere"))
        let r = b.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stdout.contains("contacts/bob.json: not looked at here"), "the deletion waits: \(r)")
        #expect(FileManager.default.fileExists(atPath: box.path("elsewhere/bob.json")), "nothing written through it")
        #expect(b.json("contacts/ada.json")?["name"] as? String == "Ada", "nothing written through the symlink")
        try FileManager.default.removeItem(atPath: b.path("contacts"))
        try FileManager.default.moveItem(atPath: box.path("elsewhere"), toPath: b.path("contacts"))
        let back = b.run("sync")
        #expect(back.exit == 0, back.comment)
        #expect(!b.exists("contacts/bob.json"), "the deletion applies now: \(back)")
        #expect(b.json("contacts/ada.json")?["name"] as? String == "Ada L.", back.comment)
        #expect(a.run("sync").exit == 0)
        #expect(!a.exists("contacts/bob.json"), "bob is not brought back")
        #expect(a.exists("contacts/cy.json"))
    }

    // MARK: Unreadable folders, as a user without privileges

    /// Runs docsync as the unprivileged user 65534 (root reads every folder whatever its
    /// mode), with the sandbox handed to it.
    struct Unprivileged {
        let box: Sandbox

        func run(_ replica: String, _ args: [String]) -> RunResult {
            let dir = replica.isEmpty ? box.root : box.path(replica)
            guard getuid() == 0 else { return CLI.run(args, in: dir, env: ["HOME": box.root]) }
            return CLI.runTool(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary] + args, in: dir,
                env: ["HOME": box.root])
        }

        func handOver() {
            guard getuid() == 0 else { return }
            let r = CLI.runTool("/bin/chown", ["-R", "65534:65534", box.root], in: "/")
            #expect(r.exit == 0, r.comment)
        }
    }

    @Test(
        "a folder this user may not read is not deleted, and does not bring back what another replica deleted",
        .enabled(if: Prerequisite.unprivileged.runsHere), arguments: Kind.allCases)
    func unreadableFolder(_ kind: Kind) throws {
        try Prerequisite.unprivileged.require()
        let box = Sandbox("unreadable-\(kind)")
        let user = Unprivileged(box: box)
        box.remoteFormat1 = kind == .dir1
        let url = Reliability.remote(box, git: kind == .git, format1: kind == .dir1)
        let a = box.replica("A")
        for (path, text) in Self.contacts { a.write(path, text) }
        user.handOver()
        #expect(user.run("", ["init", "--remote", url, "--name", "A", "A"]).exit == 0)
        #expect(user.run("A", ["sync"]).exit == 0)
        #expect(user.run("", ["clone", "--name", "B", url, "B"]).exit == 0)
        let b = box.replica("B")
        // A deletes bob; B cannot read its contacts folder for a while.
        a.remove("contacts/bob.json")
        #expect(user.run("A", ["sync"]).exit == 0)
        #expect(chmod(b.path("contacts"), 0) == 0)
        b.write("top.json", "{\"refId\": \"\(b.refId("top.json")!)\", \"v\": 2}\n")
        let blind = user.run("B", ["sync"])
        #expect(chmod(b.path("contacts"), 0o755) == 0)
        #expect(blind.exit == 1, blind.comment)
        #expect(blind.stderr.contains("contacts/ada.json: error: not looked at"), blind.comment)
        #expect(blind.stderr.contains("Permission denied"), blind.comment)
        #expect(!blind.stdout.contains("push    delete"), blind.comment)
        let seeing = user.run("B", ["sync"])
        #expect(seeing.exit == 0, seeing.comment)
        #expect(!seeing.stdout.contains("create"), "nothing pushed as new: \(seeing)")
        #expect(!b.exists("contacts/bob.json"), "A's deletion applies on B now: \(seeing)")
        let after = user.run("A", ["sync"])
        #expect(after.exit == 0, after.comment)
        #expect(!a.exists("contacts/bob.json"), "bob stays deleted: \(after)")
        #expect(a.exists("contacts/ada.json") && a.exists("contacts/cy.json"), after.comment)
        #expect(a.json("top.json")?["v"] as? Int == 2, "B's other edit went out while it could not look")
    }

    // MARK: Reserved names from the remote

    @Test("one plain-git commit adding sub/.docsync/x.json is refused and hides nothing")
    func nestedMetadataFromGit() {
        let box = Sandbox("nested-git")
        let (a, b) = Self.pair(box, .git)
        Self.plainGit(
            box,
            """
            mkdir -p contacts/.docsync
            printf '{"planted": true}\\n' > contacts/.docsync/x.json
            git add -A && git commit -q -m planted && git push -q origin main
            """)
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(r.stderr.contains("contacts/.docsync/x.json"), "the refused path is named: \(r)")
        #expect(r.stderr.contains("path inside .docsync/"), r.comment)
        #expect(!a.exists("contacts/.docsync"), "never written")
        for replica in [a, b] {
            let again = replica.run("sync")
            #expect([0, 1].contains(again.exit), again.comment)
            for name in Self.names { #expect(replica.exists(name), "\(replica.root)/\(name): \(again)") }
        }
    }
}

extension PerimeterTests {
    /// Runs `script` in a plain `git clone` of the sandbox's bare repository (committing
    /// and pushing there is the script's part).
    static func plainGit(_ box: Sandbox, _ script: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let env = Reliability.gitEnv.merging([
            "GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@example.com", "GIT_COMMITTER_NAME": "P",
            "GIT_COMMITTER_EMAIL": "p@example.com", "REPO": box.path("remote.git")
        ]) { $1 }
        let prefix = "set -e\nrm -rf plain && git clone -q \"$REPO\" plain && cd plain\n"
        let r = CLI.runTool("/bin/bash", ["-c", prefix + script], in: box.root, env: env)
        #expect(r.exit == 0, r.comment, sourceLocation: sourceLocation)
    }

    /// The file at `path` on the branch, as plain git shows it.
    static func onBranch(_ box: Sandbox, _ path: String) -> [String: Any]? {
        let r = CLI.runTool(
            "/usr/bin/git", ["--git-dir", box.path("remote.git"), "show", "main:" + path], in: box.root,
            env: Reliability.gitEnv)
        return r.exit == 0 ? JSONHelp.object(Array(r.stdout.utf8)) : nil
    }

    @Test(
        "a plain-git copy of a document is a second document, on every replica alike; a plain-git move stays a rename")
    func plainGitCopy() {
        let box = Sandbox("plain-git-copy")
        let (a, b) = Self.pair(box, .git)
        let ref = a.refId("top.json")!
        Self.plainGit(box, "cp top.json dup.json\ngit add dup.json && git commit -q -m copy && git push -q origin main")
        let pulled = a.run("sync")
        #expect([0, 1].contains(pulled.exit), pulled.comment)
        #expect(!pulled.stdout.contains("rename"), "not a rename: \(pulled)")
        #expect(a.refId("top.json") == ref, "the original keeps its refId: \(pulled)")
        let copyRef = a.refId("dup.json")
        #expect(copyRef != nil && copyRef != ref, "the copy is a new document: \(pulled)")
        let other = b.run("sync")
        #expect([0, 1].contains(other.exit), other.comment)
        #expect(b.refId("top.json") == ref && b.refId("dup.json") == copyRef, "b decides alike: \(other)")
        #expect(a.run("sync").exit == 0)
        #expect(Self.onBranch(box, "dup.json")?["refId"] as? String == copyRef, "the copy's id is pushed back")
        #expect(Self.onBranch(box, "top.json")?["refId"] as? String == ref)
        let status = a.run("status")
        #expect(status.stdout.contains("Nothing to sync"), status.comment)
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)

        // A move made with plain git keeps the document's identity.
        Self.plainGit(box, "git mv dup.json moved.json && git commit -q -m move && git push -q origin main")
        let moved = b.run("sync")
        #expect(moved.exit == 0, moved.comment)
        #expect(b.refId("moved.json") == copyRef && !b.exists("dup.json"), moved.comment)
        #expect(b.refId("top.json") == ref)
    }
}

extension PerimeterTests {
    @Test(
        "a file rewritten without ids at a tracked path is a new version of its document, merged with another replica's edit",
        arguments: Kind.allCases)
    func regeneratedFile(_ kind: Kind) {
        let box = Sandbox("regenerated-\(kind)")
        let (a, b) = Self.pair(box, kind)
        let ref = a.refId("contacts/ada.json")!
        // A: an ordinary edit of one field. B: an export script writes the file anew, no ids.
        a.write("contacts/ada.json", "{\"refId\": \"\(ref)\", \"name\": \"Ada\", \"phone\": \"555\"}\n")
        #expect(a.run("sync").exit == 0)
        b.write("contacts/ada.json", "{\"name\": \"Ada Lovelace\"}\n")
        let r = b.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(!r.stdout.contains("create") && !r.stdout.contains("delete"), "an update, not delete + create: \(r)")
        #expect(b.refId("contacts/ada.json") == ref, "the same document: \(r)")
        #expect(a.run("sync").exit == 0)
        for replica in [a, b] {
            let ada = replica.json("contacts/ada.json")
            #expect(ada?["refId"] as? String == ref)
            #expect(ada?["name"] as? String == "Ada Lovelace", "the regenerated value: \(String(describing: ada))")
            #expect(ada?["phone"] as? String == "555", "the other replica's edit survives in the one document")
            #expect(replica.documents().keys.filter { $0.hasPrefix("contacts/") }.count == 3, "no second Ada")
        }
    }

    @Test("a regenerated file keeps its document's identity even when a copy of the old file carries it")
    func regeneratedBesideACopy() throws {
        let box = Sandbox("regenerated-copy")
        let (a, b) = Self.pair(box, .dir)
        let ref = a.refId("contacts/ada.json")!
        try FileManager.default.copyItem(atPath: a.path("contacts/ada.json"), toPath: a.path("ada-copy.json"))
        a.write("contacts/ada.json", "{\"name\": \"Ada (export)\"}\n")
        let r = a.run("sync")
        #expect(r.exit == 0, r.comment)
        #expect(a.refId("contacts/ada.json") == ref, "the path the tree tracks keeps the document: \(r)")
        let copy = a.refId("ada-copy.json")
        #expect(copy != nil && copy != ref, "the copy is a new document: \(r)")
        #expect(!r.stdout.contains("rename"), r.comment)
        #expect(b.run("sync").exit == 0)
        #expect(
            b.refId("contacts/ada.json") == ref && b.json("contacts/ada.json")?["name"] as? String == "Ada (export)")
        #expect(b.refId("ada-copy.json") == copy)
    }

    @Test("a file committed with plain git without its ids is a new version of the document at that path")
    func regeneratedWithPlainGit() {
        let box = Sandbox("regenerated-plain-git")
        let (a, b) = Self.pair(box, .git)
        let ref = a.refId("contacts/ada.json")!
        Self.plainGit(
            box,
            "printf '{\"name\": \"Ada King\"}\\n' > contacts/ada.json\ngit commit -q -am regenerate && git push -q origin main"
        )
        for replica in [a, b] {
            let r = replica.run("sync")
            #expect(r.exit == 0, r.comment)
            #expect(!r.stdout.contains("create") && !r.stdout.contains("delete"), r.comment)
            #expect(replica.refId("contacts/ada.json") == ref, r.comment)
            #expect(replica.json("contacts/ada.json")?["name"] as? String == "Ada King", r.comment)
        }
        #expect(a.run("sync").exit == 0)
        #expect(Self.onBranch(box, "contacts/ada.json")?["refId"] as? String == ref, "the ids are pushed back")
    }
}

extension Prerequisite {
    /// Running docsync as an unprivileged user (uid 65534): as root every folder is
    /// readable, so an unreadable folder can only be tested without privileges.
    static let unprivileged: Prerequisite = {
        guard getuid() == 0 else { return Prerequisite(name: "an unprivileged user", missing: nil) }
        let setpriv = programs("setpriv")
        if setpriv.missing != nil { return Prerequisite(name: "an unprivileged user", missing: setpriv.missing) }
        let probe = CLI.runTool(
            "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "true"], in: "/")
        return Prerequisite(
            name: "an unprivileged user",
            missing: probe.exit == 0 ? nil : "setpriv cannot drop to uid 65534 here: \(probe.stderr)")
    }()
}
