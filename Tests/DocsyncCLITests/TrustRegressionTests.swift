// Issue 9, "Nothing a user saved is silently undone": one regression test per defect, each
// through the built binary on a folder remote and on a bare git repository, driven the way
// a user with a text editor and cron drives docsync.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Nothing a user saved is silently undone")
struct TrustRegressionTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// Two replicas A and B of one remote, both holding `files` (synced).
    static func pair(_ box: Sandbox, _ kind: Kind, files: [String: String]) -> (Replica, Replica, String) {
        let remote = Reliability.remote(box, git: kind == .git)
        let a = box.replica("A")
        for (path, text) in files { a.write(path, text) }
        let made = CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root)
        #expect(made.exit == 0, made.comment)
        a.sync()
        let cloned = CLI.run(["clone", "--name", "B", remote, "B"], in: box.root)
        #expect(cloned.exit == 0, cloned.comment)
        return (a, box.replica("B"), remote)
    }

    /// Sets a file's modification time to `secondsAgo` before now (an edit saved then).
    static func savedAgo(_ replica: Replica, _ path: String, seconds: Double) {
        let when = Date().timeIntervalSince1970 - seconds
        var times = [
            timespec(tv_sec: Int(when), tv_nsec: Int((when - floor(when)) * 1e9)),
            timespec(tv_sec: Int(when), tv_nsec: Int((when - floor(when)) * 1e9))
        ]
        #expect(utimensat(AT_FDCWD, replica.path(path), &times, 0) == 0)
    }

    static func conflicts(_ replica: Replica, all: Bool = false) -> [[String: Any]] {
        let r = replica.run(all ? ["conflicts", "--all", "--json"] : ["conflicts", "--json"])
        #expect(r.exit == 0, r.comment)
        return (JSONHelp.parse(r.stdout) as? [String: Any])?["conflicts"] as? [[String: Any]] ?? []
    }

    // 1
    @Test(
        "resolve --take replaces only the colliding fields: a later edit of another field is not undone",
        arguments: Kind.allCases)
    func resolveTakesOnlyTheCollidingFields(_ kind: Kind) {
        let box = Sandbox("resolve-fields-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["p.json": "{\"name\": \"Ann\", \"phone\": \"1\"}\n"])
        a.write("p.json", a.read("p.json")!.replacing("\"Ann\"", with: "\"Anna\""))
        Self.savedAgo(a, "p.json", seconds: 5)
        b.write("p.json", b.read("p.json")!.replacing("\"Ann\"", with: "\"Annie\""))
        a.sync()
        let clash = b.run("sync")
        #expect(clash.exit == 3, clash.comment)
        #expect(b.json("p.json")?["name"] as? String == "Annie", "B saved later: B's name wins")
        #expect(a.run("sync").exit == 3, "A's name lost: A hears of it")
        // A then changes the phone; both sync.
        a.write("p.json", a.read("p.json")!.replacing("\"phone\": \"1\"", with: "\"phone\": \"2\""))
        a.sync()
        b.sync()
        #expect(b.json("p.json")?["phone"] as? String == "2")
        let resolved = b.run("resolve", "p.json", "--take", "remote")
        #expect(resolved.exit == 0, resolved.comment)
        #expect(resolved.stdout.contains("name"), "says which fields it took: \(resolved)")
        #expect(b.json("p.json")?["name"] as? String == "Anna", "the colliding field takes the other side's value")
        #expect(b.json("p.json")?["phone"] as? String == "2", "the later phone edit is not undone")
        b.sync()
        a.sync()
        #expect(a.json("p.json")?["name"] as? String == "Anna" && a.json("p.json")?["phone"] as? String == "2")
        #expect(a.documents() == b.documents())
        // A whole-document take says what it undoes, and only with the flag.
        #expect(Self.conflicts(a).isEmpty && Self.conflicts(b).isEmpty, "the resolve settled it on both replicas")
    }

    // 2
    @Test(
        "a file saved half-way when cron runs: the fix is merged with the other replica's edit, which is not lost",
        arguments: Kind.allCases)
    func invalidSaveThenFixKeepsTheOtherEdit(_ kind: Kind) {
        let box = Sandbox("invalid-fix-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["n2.json": "{\n  \"title\": \"t0\",\n  \"body\": \"b0\"\n}\n"])
        let good = a.read("n2.json")!
        a.write("n2.json", String(good.prefix(good.count / 2)))
        b.write("n2.json", b.read("n2.json")!.replacing("\"t0\"", with: "\"B title\""))
        b.sync()
        let broken = a.run("sync")
        #expect(broken.exit == 1, broken.comment)
        #expect(broken.stdout.contains("waiting"), broken.comment)
        a.write("n2.json", good.replacing("\"b0\"", with: "\"A body\""))
        let fixed = a.run("sync")
        #expect(fixed.exit == 0, fixed.comment)
        #expect(a.json("n2.json")?["title"] as? String == "B title", "B's title survives A's fix")
        #expect(a.json("n2.json")?["body"] as? String == "A body", "A's fix is kept")
        b.sync()
        #expect(b.documents() == a.documents())
    }

    // 3
    @Test("the later save wins a collision, whichever replica syncs first", arguments: Kind.allCases)
    func laterSaveWins(_ kind: Kind) {
        let box = Sandbox("later-save-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["x.json": "{\"f\": \"0\"}\n"])
        a.write("x.json", a.read("x.json")!.replacing("\"0\"", with: "\"from A\""))
        Self.savedAgo(a, "x.json", seconds: 2)
        b.write("x.json", b.read("x.json")!.replacing("\"0\"", with: "\"from B\""))
        b.sync()  // the later save syncs first
        let r = a.run("sync")
        #expect(r.exit == 3, r.comment)
        #expect(a.json("x.json")?["f"] as? String == "from B", "B saved 2 s after A: B's value wins")
        let stored = a.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(stored.map { $0["f"] as? String } == ["from A"], "A's version is kept aside")
        #expect(b.run("sync").exit == 0, "B's version won: nothing for B to hear")
        #expect(b.json("x.json")?["f"] as? String == "from B")
    }

    // 4
    @Test(
        "the replica whose edit lost hears of it; a resolve on either replica settles it everywhere",
        arguments: Kind.allCases)
    func conflictsTravel(_ kind: Kind) {
        let box = Sandbox("travel-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["t.json": "{\"f\": \"0\"}\n"])
        a.write("t.json", a.read("t.json")!.replacing("\"0\"", with: "\"A\""))
        Self.savedAgo(a, "t.json", seconds: 3)
        a.sync()
        b.write("t.json", b.read("t.json")!.replacing("\"0\"", with: "\"B\""))
        #expect(b.run("sync").exit == 3)
        let heard = a.run("sync", "--quiet")
        #expect(heard.exit == 3, "A's edit lost at B: A's cron run says so: \(heard)")
        #expect(heard.stderr.contains("conflict"), heard.comment)
        let listed = Self.conflicts(a)
        #expect(listed.count == 1 && listed.first?["changesetId"] as? String != nil, "\(listed)")
        let status = a.run("status")
        #expect(status.stdout.contains("Conflicts") && status.stdout.contains("t.json"), status.comment)
        // A's copy of the record has A's losing version.
        #expect(a.conflictCopies().values.compactMap(JSONHelp.object).map { $0["f"] as? String } == ["A"])
        // Resolve on A (the replica that lost): B's record closes too.
        let take = a.run("resolve", "t.json", "--take", "local")
        #expect(take.exit == 0, take.comment)
        #expect(a.json("t.json")?["f"] as? String == "A")
        a.sync()
        #expect(b.run("sync").exit == 0)
        #expect(b.json("t.json")?["f"] as? String == "A")
        #expect(Self.conflicts(a).isEmpty && Self.conflicts(b).isEmpty)
        #expect(Self.conflicts(b, all: true).first?["take"] as? String == "local")
        // Quiet afterwards: no new commit, no new record.
        #expect(a.run("sync").exit == 0 && b.run("sync").exit == 0)
    }

    // 5
    @Test(
        "one changesetId names one content: a file moved away, synced as deleted and written back edited gets a new id",
        arguments: Kind.allCases)
    func oneIdOneContent(_ kind: Kind) {
        let box = Sandbox("one-id-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["m.json": "{\"v\": \"first\"}\n"])
        let first = a.changesetId("m.json")!
        let away = box.path("away.json")
        #expect(rename(a.path("m.json"), away) == 0)
        a.sync()
        #expect(!b.exists("m.json") || b.run("sync").exit == 0)
        let text = String(decoding: Files.bytes(away)!, as: UTF8.self).replacing("\"first\"", with: "\"second\"")
        a.write("m.json", text)
        a.sync()
        let second = a.changesetId("m.json")!
        #expect(second != first, "edited content needs a new changesetId")
        #expect(second > first)
        b.sync()
        #expect(b.json("m.json")?["v"] as? String == "second" && b.changesetId("m.json") == second)
        // Put back unchanged (same bytes as a version this tree knows): keeps its id.
        let copy = a.bytes("m.json")!
        a.remove("m.json")
        a.sync()
        a.writeBytes("m.json", copy)
        a.sync()
        #expect(a.changesetId("m.json") == second)
    }

    // 6
    @Test(
        "a file whose name no remote can hold is reported (exit 1); every other change still goes out",
        arguments: Kind.allCases)
    func unsyncableNameDoesNotBlockThePush(_ kind: Kind) {
        let box = Sandbox("bad-name-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["ok.json": "{\"v\": 1}\n"])
        a.write("line\nbreak.json", "{\"v\": \"bad\"}\n")
        a.write("new.json", "{\"v\": \"new\"}\n")
        a.write("ok.json", a.read("ok.json")!.replacing("1}", with: "2}"))
        let r = a.run("sync")
        #expect(r.exit == 1, r.comment)
        #expect(
            r.stderr.contains("line\\nbreak.json") && r.stderr.contains("file name"),
            "names the file and the problem: \(r)")
        #expect(a.read("line\nbreak.json") == "{\"v\": \"bad\"}\n", "left untouched")
        b.sync()
        #expect(b.json("new.json")?["v"] as? String == "new")
        #expect(b.json("ok.json")?["v"] as? Int == 2)
    }

    // 7
    @Test("a malformed remote URL is refused when given (exit 2), never taken as a folder to retry forever")
    func malformedURLs() {
        let box = Sandbox()
        for bad in [
            "ht!tp::/bad", "ftp://host/x", "https:///nohost", "ssh://bad host/x", "file://relative/path", "host:"
        ] {
            let r = CLI.run(["init", "--remote", bad, "T"], in: box.root)
            #expect(r.exit == 2 && r.stderr.contains(bad), "init --remote \(bad): \(r)")
            #expect(!FileManager.default.fileExists(atPath: box.path("T/.docsync")), "nothing half-made for \(bad)")
            let c = CLI.run(["clone", bad, "C"], in: box.root)
            #expect(c.exit == 2 && c.stderr.contains(bad), "clone \(bad): \(c)")
            #expect(!FileManager.default.fileExists(atPath: box.path("C")))
        }
        let a = box.initReplica("A")
        let before = Files.bytes(a.path(".docsync/config"))
        let r = a.run("config", "remote.url", "ftp://host/x")
        #expect(r.exit == 2 && r.stderr.contains("ftp"), r.comment)
        #expect(Files.bytes(a.path(".docsync/config")) == before, "the config is not changed")
        // Good forms are still accepted.
        for good in [
            "ssh://git@example.org/r.git", "git@example.org:r.git", "https://example.org/r.git",
            "git://127.0.0.1:9/r.git"
        ] {
            #expect(a.run("config", "remote.url", good).exit == 0, "\(good)")
        }
    }

    @Test(
        "a remote unreachable for longer than sync.maxOfflineDays is an error that says since when",
        arguments: Kind.allCases)
    func offlineLimit(_ kind: Kind) {
        let box = Sandbox("offline-\(kind)")
        // A folder remote whose share is gone, or a git server that does not answer.
        let a: Replica
        var remote = ""
        if kind == .dir {
            let made = Self.pair(box, kind, files: ["o.json": "{\"v\": 1}\n"])
            a = made.0
            remote = made.2
            #expect(rename(remote, remote + ".gone") == 0)
            a.write("o.json", a.read("o.json")!.replacing("1}", with: "2}"))
        } else {
            a = box.replica("A")
            a.write("o.json", "{\"v\": 1}\n")
            #expect(CLI.run(["init", "--remote", "git://127.0.0.1:9/r.git", "A"], in: box.root).exit == 0)
        }
        let soon = a.run("sync", "--quiet")
        #expect(soon.exit == 75, "within the limit: try again later: \(soon)")
        a.ok("config", "sync.maxOfflineDays", "0.00001")  // 0.864 s
        Thread.sleep(forTimeInterval: 1.2)
        let late = a.run("sync", "--quiet")
        #expect(late.exit == 1, late.comment)
        #expect(late.stderr.contains("since") && late.stderr.contains("sync.maxOfflineDays"), late.comment)
        #expect(a.run("status").stdout.contains("o.json"), "the change stays recorded")
        guard kind == .dir else { return }
        #expect(rename(remote + ".gone", remote) == 0)
        #expect(a.run("sync").exit == 0, "back online: syncs again")
        #expect(
            Files.bytes(remote + "/o.json").flatMap(JSONHelp.object)?["v"] as? Int == 2, "the recorded change went out")
        #expect(a.run("sync", "--quiet").exit == 0)
    }

    // 8
    @Test(
        "a remote inside the tree, or a tree inside a tree, is refused; a nested .docsync/ is never synced as documents",
        arguments: Kind.allCases)
    func remoteInsideTheTree(_ kind: Kind) {
        let box = Sandbox("inside-\(kind)")
        let inner = box.path("T/remote-here" + (kind == .git ? ".git" : ""))
        try! FileManager.default.createDirectory(atPath: box.path("T"), withIntermediateDirectories: true)
        if kind == .git { Reliability.makeBareRepo(inner) }
        let r = CLI.run(["init", "--remote", inner, "T"], in: box.root)
        #expect(r.exit == 2 && r.stderr.contains("inside the working tree"), r.comment)
        let (a, b, _) = Self.pair(box, kind, files: ["a.json": "{\"v\": 1}\n"])
        let nested = CLI.run(["init", "sub"], in: a.root)
        #expect(nested.exit == 1 && nested.stderr.contains("inside the docsync tree"), nested.comment)
        let cfg = a.run("config", "remote.url", a.path("share"))
        #expect(cfg.exit == 2, cfg.comment)
        // A folder remote or another tree copied in by hand is passed over, said once.
        try! FileManager.default.createDirectory(atPath: a.path("copy/.docsync"), withIntermediateDirectories: true)
        a.write("copy/.docsync/feed.json", "{\"not\": \"a document\"}\n")
        a.write("copy/x.json", "{\"v\": \"inner\"}\n")
        a.write("deep/.docsync/y.json", "{\"v\": \"meta\"}\n")
        let s = a.run("sync")
        #expect(s.exit == 0, s.comment)
        b.sync()
        #expect(!b.exists("copy/x.json") && !b.exists("copy/.docsync/feed.json") && !b.exists("deep/.docsync/y.json"))
        #expect(b.documents().keys.sorted() == ["a.json"])
    }

    // 9
    @Test("edit beats delete, and the replica that deleted learns why the document came back", arguments: Kind.allCases)
    func editBeatsDeleteIsRecorded(_ kind: Kind) {
        let box = Sandbox("edit-delete-\(kind)")
        let (a, b, _) = Self.pair(box, kind, files: ["d.json": "{\"v\": \"0\"}\n"])
        a.remove("d.json")
        a.sync()
        b.write("d.json", b.read("d.json")!.replacing("\"0\"", with: "\"kept\""))
        let edit = b.run("sync", "--quiet")
        #expect(edit.exit == 3, "recorded like a conflict, said even under --quiet: \(edit)")
        let back = a.run("sync", "--quiet")
        #expect(back.exit == 3, "the replica that deleted hears of it: \(back)")
        #expect(a.json("d.json")?["v"] as? String == "kept")
        let listed = Self.conflicts(a)
        #expect(listed.count == 1 && listed.first?["deleted"] as? Bool == true, "\(listed)")
        // Taking the deletion deletes it everywhere.
        #expect(a.run("resolve", "d.json", "--take", "local").exit == 0)
        #expect(!a.exists("d.json"))
        a.sync()
        b.sync()
        #expect(!b.exists("d.json"))
        #expect(Self.conflicts(a).isEmpty && Self.conflicts(b).isEmpty)
    }
}
