// The binary SIGKILLs itself at each named step (DOCSYNC_CRASH_AT), on both remote
// kinds; the next runs must lose nothing and converge.

import Foundation
import Testing

@Suite("Killed mid-sync at every step") struct CrashKillTests {
    static let points = ["record.after-stamp", "record.after-journal", "pull.after-journal", "pull.after-files",
                         "push.after-remote-commit", "remote.after-documents", "remote.after-feed"]

    enum Kind: String, CaseIterable, Sendable { case dir, git }

    struct Case: Sendable, CustomTestStringConvertible {
        var point: String
        var kind: Kind
        var testDescription: String { "\(kind.rawValue) remote, killed at \(point)" }
    }

    static let cases: [Case] = points.flatMap { p in Kind.allCases.map { Case(point: p, kind: $0) } }

    @Test(arguments: cases)
    func killedRunLosesNothing(_ c: Case) throws {
        let box = Sandbox("kill-\(c.point)-\(c.kind.rawValue)")
        var remote = box.remote
        if c.kind == .git {
            remote = box.path("remote.git")
            let made = CLI.runTool("/usr/bin/git", ["init", "-q", "--bare", "-b", "main", remote], in: box.root,
                                   env: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
            #expect(made.exit == 0, made.comment)
        }
        let a = box.replica("a")
        for name in ["both", "edit", "gone"] { a.write("\(name).json", "{\"v\": \"\(name)-0\"}") }
        #expect(CLI.run(["init", "--remote", remote, "a"], in: box.root).exit == 0)
        a.sync()
        #expect(CLI.run(["clone", remote, "b"], in: box.root).exit == 0)
        let b = box.replica("b")
        func edit(_ r: Replica, _ file: String, _ value: String) {
            r.write(file, r.read(file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
        }
        edit(b, "both.json", "both-b")
        edit(b, "edit.json", "edit-b")
        b.sync()
        edit(a, "both.json", "both-a")
        a.remove("gone.json")
        a.write("new.json", "{\"v\": \"new-a\"}")

        let killed = a.run("sync", env: ["DOCSYNC_CRASH_AT": c.point])
        #expect(killed.exit == 137 || killed.exit == 0 || killed.exit == 3, killed.comment)

        // Recovery: ordinary runs finish the job (a stale remote lock of the dead
        // process on this host is broken automatically).
        for r in [a, b, a] { #expect([0, 3].contains(r.run("sync").exit)) }
        #expect(a.documents() == b.documents())
        var values = Set<String>()
        for r in [a, b] {
            for (_, bytes) in r.documents() { if let v = JSONHelp.object(bytes)?["v"] as? String { values.insert(v) } }
            for (_, bytes) in r.conflictCopies() { if let v = JSONHelp.object(bytes)?["v"] as? String { values.insert(v) } }
        }
        #expect(Set(["both-a", "both-b", "edit-b", "new-a"]).isSubset(of: values), "saved versions: \(values.sorted())")
        #expect(!a.exists("gone.json"))
        for r in [a, b] {
            let verify = r.run("verify")
            #expect(verify.exit == 0, verify.comment)
        }
        Reliability.figure("crash-point kind=\(c.kind.rawValue) point=\(c.point) killed=\(killed.exit == 137 ? 1 : 0)")
    }
}
