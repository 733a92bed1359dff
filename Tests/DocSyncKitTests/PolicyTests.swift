import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// Conflicting edits settled by the configured policy, on both remote kinds, through
/// the engine: three replicas, real folders, a real bare repository.
@Suite struct PolicyTests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    /// Three replicas sharing one remote of the given kind.
    final class Trio {
        let files = ReplicaSet()
        let git: GitReplicaSet?
        var dirs: [String] = []

        init(_ kind: Kind, seed: String) throws {
            git = kind == .git ? try GitReplicaSet() : nil
            let a = try git?.make("a") ?? files.make("a")
            files.write(a, "rec.json", seed)
            try sync(a)
            dirs = [a, try git?.make("b") ?? files.make("b"), try git?.make("c") ?? files.make("c")]
            for d in dirs.dropFirst() { try sync(d) }
        }

        @discardableResult
        func sync(_ dir: String) throws -> SyncReport {
            let ws = try Workspace.open(at: dir, readOnly: false)
            defer { ws.close() }
            return try ws.sync.run(.both)
        }

        /// Edits are saved in the order they are made: each one's mtime is at least 2 ms
        /// after the previous one's, so "the later save wins" is this order even when two
        /// edits fall in the same millisecond.
        private var lastSave: Double = 0

        func edit(_ i: Int, _ from: String, _ to: String) {
            let text = files.read(dirs[i], "rec.json")!
            precondition(text.contains(from), "\(from) not in \(text)")
            files.write(dirs[i], "rec.json", text.replacingOccurrences(of: from, with: to))
            lastSave = max(Date().timeIntervalSince1970, lastSave + 0.002)
            var times = [timespec(tv_sec: Int(lastSave), tv_nsec: Int((lastSave - lastSave.rounded(.down)) * 1e9))]
            times.append(times[0])
            precondition(utimensat(AT_FDCWD, dirs[i] + "/rec.json", &times, 0) == 0)
        }

        func json(_ i: Int) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(files.read(dirs[i], "rec.json")!.utf8))) as? [String: Any]
                ?? [:]
        }

        func config(_ i: Int, _ key: String, _ value: String) throws {
            let ws = try Workspace.open(at: dirs[i], readOnly: false)
            defer { ws.close() }
            try ws.settings.set(key, value)
        }

        func converge() throws {
            for _ in 0..<2 { for d in dirs { try sync(d) } }
        }
    }

    static let seed =
        "{\n  \"name\": \"Ann\",\n  \"city\": \"Oslo\",\n  \"phone\": \"1\",\n  \"stats\": {\"plays\": 1}\n}\n"

    @Test(arguments: Kind.allCases)
    func editsToDifferentFieldsMergeWithoutConflict(_ kind: Kind) throws {
        let trio = try Trio(kind, seed: Self.seed)
        trio.edit(0, "\"Ann\"", "\"Anna\"")
        trio.edit(1, "\"Oslo\"", "\"Bergen\"")
        trio.edit(2, "\"phone\": \"1\"", "\"phone\": \"2\"")
        var conflicts = 0
        for d in trio.dirs { conflicts += try trio.sync(d).conflicts.count }
        try trio.converge()
        #expect(conflicts == 0)
        for i in 0..<3 {
            #expect(trio.json(i)["name"] as? String == "Anna")
            #expect(trio.json(i)["city"] as? String == "Bergen")
            #expect(trio.json(i)["phone"] as? String == "2")
        }
        #expect(trio.files.snapshot(trio.dirs[0]) == trio.files.snapshot(trio.dirs[2]))
        // Key order is kept in the merged document.
        let text = trio.files.read(trio.dirs[0], "rec.json")!
        let order = ["\"refId\"", "\"changesetId\"", "\"name\"", "\"city\"", "\"phone\"", "\"stats\""].map {
            text.range(of: $0)!.lowerBound
        }
        #expect(order == order.sorted())
    }

    @Test(arguments: Kind.allCases)
    func sameFieldConflictsAndTheLoserIsRestorable(_ kind: Kind) throws {
        let trio = try Trio(kind, seed: Self.seed)
        trio.edit(0, "\"Oslo\"", "\"Paris\"")
        trio.edit(1, "\"Oslo\"", "\"Rome\"")
        trio.edit(1, "\"Ann\"", "\"Annie\"")
        try trio.sync(trio.dirs[0])
        let report = try trio.sync(trio.dirs[1])  // b's edit is later: b wins the city
        #expect(report.conflicts.count == 1)
        #expect(report.conflicts.first?.fields == ["city"])
        try trio.converge()
        #expect(trio.json(2)["city"] as? String == "Rome")
        #expect(trio.json(2)["name"] as? String == "Annie")
        let ws = try Workspace.open(at: trio.dirs[1], readOnly: false)
        let open = ws.conflicts.list()
        #expect(open.count == 1 && open.first?.side == .remote && open.first?.fields == ["city"])
        // Take the version that lost: a's whole document comes back as a new edit.
        _ = try ws.conflicts.resolve("rec.json", relativeTo: trio.dirs[1], take: .remote, dryRun: false)
        #expect(ws.conflicts.list().isEmpty)
        #expect(ws.conflicts.list(all: true).count == 1)
        ws.close()
        #expect(trio.json(1)["city"] as? String == "Paris")
        try trio.converge()
        #expect(trio.json(0)["city"] as? String == "Paris")
        #expect(trio.json(2)["city"] as? String == "Paris")
    }

    @Test(arguments: Kind.allCases)
    func countersAddUp(_ kind: Kind) throws {
        let trio = try Trio(kind, seed: Self.seed)
        for i in 0..<3 { try trio.config(i, "merge.counters", "stats.plays") }
        trio.edit(0, "\"plays\": 1", "\"plays\": 11")  // +10
        trio.edit(1, "\"plays\": 1", "\"plays\": 6")  // +5
        trio.edit(2, "\"plays\": 1", "\"plays\": 3")  // +2
        var conflicts = 0
        for d in trio.dirs { conflicts += try trio.sync(d).conflicts.count }
        try trio.converge()
        #expect(conflicts == 0)
        for i in 0..<3 { #expect((trio.json(i)["stats"] as? [String: Any])?["plays"] as? Int == 18) }
    }

    @Test func policiesDecideWholeDocuments() throws {
        for (policy, expected) in [("local", "b-side"), ("remote", "a-side"), ("lww", "b-side"), ("manual", "a-side")] {
            let trio = try Trio(.dir, seed: Self.seed)
            try trio.config(1, "merge.policy", policy)
            trio.edit(0, "\"Oslo\"", "\"a-side\"")
            trio.edit(1, "\"Oslo\"", "\"b-side\"")
            trio.edit(1, "\"Ann\"", "\"b-name\"")
            try trio.sync(trio.dirs[0])
            let report = try trio.sync(trio.dirs[1])
            #expect(trio.json(1)["city"] as? String == expected, "policy \(policy)")
            // Whole-document policies keep one side entirely (no field mixing).
            #expect((trio.json(1)["name"] as? String == "b-name") == (expected == "b-side"), "policy \(policy)")
            #expect(report.conflicts.count == 1, "policy \(policy)")
            let ws = try Workspace.open(at: trio.dirs[1], readOnly: true)
            let kind = ws.conflicts.list().first?.kind
            #expect(kind.map { if case .version(let p?, _) = $0 { p.rawValue == policy } else { false } } == true)
            ws.close()
        }
    }

    @Test func policyPerFolderGlob() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let ws = try Workspace.open(at: a, readOnly: false)
        try ws.settings.set("merge.policyFor.contacts/**", "lww")
        try ws.settings.set("merge.policyFor.*.json", "manual")
        #expect(ws.config.policy(for: "contacts/x/ann.json") == .lww)
        #expect(ws.config.policy(for: "top.json") == .manual)
        #expect(ws.config.policy(for: "notes/n.json") == .merge)
        #expect(throws: Config.Problem.self) { try ws.settings.set("merge.policyFor.x/**", "nonsense") }
        ws.close()
    }

    @Test func resolveAfterEditingByHandMarksItSettled() throws {
        let trio = try Trio(.dir, seed: Self.seed)
        trio.edit(0, "\"Oslo\"", "\"X\"")
        trio.edit(1, "\"Oslo\"", "\"Y\"")
        try trio.sync(trio.dirs[0])
        try trio.sync(trio.dirs[1])
        trio.edit(1, "\"Y\"", "\"X and Y\"")
        let ws = try Workspace.open(at: trio.dirs[1], readOnly: false)
        let report = try ws.conflicts.resolve("rec.json", relativeTo: trio.dirs[1], dryRun: false)
        #expect(ws.conflicts.list().isEmpty)
        #expect(report.pendingAfter == 1)
        let log = try ws.history.log()
        #expect(log.contains { $0.entry.kind == .resolve })
        ws.close()
        try trio.converge()
        #expect(trio.json(0)["city"] as? String == "X and Y")
    }
}
