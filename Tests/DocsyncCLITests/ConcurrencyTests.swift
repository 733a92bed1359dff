import Foundation
import Testing

@Suite("Runs at the same time")
struct ConcurrencyTests {
    @Test("three replicas pushing to one remote at the same moment: all succeed (or 75), nothing lost, all converge")
    func concurrentPushers() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["shared.json": "{\"s\": 0}\n"])
        a.sync()
        let b = box.clone("B")
        let c = box.clone("C")
        let replicas = [a, b, c]
        for (i, r) in replicas.enumerated() {
            for j in 1...3 { r.write("r\(i)/doc\(j).json", "{\"replica\": \(i), \"j\": \(j)}\n") }
        }
        let results = runConcurrently(replicas.map { (["sync"], $0.root) })
        for r in results {
            #expect(r.exit == 0 || r.exit == 75, r.comment)
        }
        // Whoever had to back off gets through now; then everyone pulls.
        for r in replicas + replicas { r.sync() }

        let expected: Set<String> = Set(
            ["shared.json"] + (0...2).flatMap { i in (1...3).map { "r\(i)/doc\($0).json" } })
        #expect(Set(Files.list(box.remote, skipMetadata: true)) == expected)
        #expect(a.documents() == b.documents())
        #expect(a.documents() == c.documents())
        #expect(Files.tree(box.remote, skipMetadata: true) == a.documents())
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)
        for r in replicas { #expect(r.conflictCopies().isEmpty) }
    }

    @Test("two runs on the same tree at once: one proceeds, the other waits; nothing is recorded twice")
    func concurrentRunsOnOneTree() {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["one.json": "{\"n\": 1}\n", "two.json": "{\"n\": 2}\n"])
        let results = runConcurrently([(["sync"], a.root), (["sync"], a.root)])
        for r in results {
            #expect(r.exit == 0 || r.exit == 75, r.comment)
        }
        #expect(results.contains { $0.exit == 0 })
        let log =
            (JSONHelp.parse(a.run("log", "--json").stdout) as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let creates = log.filter { $0["kind"] as? String == "create" }
        #expect(creates.count == 2, "each document is recorded once: \(creates)")
        #expect(
            Set(creates.compactMap { $0["refId"] as? String })
                == Set([a.refId("one.json"), a.refId("two.json")].compactMap { $0 }))
        #expect(Set(Files.list(box.remote, skipMetadata: true)) == ["one.json", "two.json"])
        let verify = a.run("verify")
        #expect(verify.exit == 0, verify.comment)
    }
}

@Suite(".docsyncignore")
struct IgnoreTests {
    @Test(".docsyncignore keeps matching files out: not stamped, not pushed, not reported")
    func ignoredFiles() {
        let box = Sandbox()
        let ignored = "{\"secret\": true}\n"
        let a = box.initReplica(
            "A",
            files: [
                ".docsyncignore": "private/\n*.local.json\n",
                "shared.json": "{\"s\": 1}\n",
                "private/key.json": ignored,
                "settings.local.json": ignored,
                "private/broken.json": "{ not json"
            ])
        let r = a.run("sync")
        #expect(r.exit == 0, "ignored invalid files must not fail the sync: \(r)")
        #expect(a.read("private/key.json") == ignored, "ignored files are not stamped")
        #expect(a.read("settings.local.json") == ignored)
        #expect(Set(Files.list(box.remote, skipMetadata: true)).isSubset(of: ["shared.json", ".docsyncignore"]))
        #expect(FileManager.default.fileExists(atPath: box.remote + "/shared.json"))
        let b = box.clone("B")
        #expect(!b.exists("private/key.json") && !b.exists("settings.local.json"))
    }
}
