import Foundation
import Testing

/// Field merge, policies, counters, `conflicts` and `resolve`, driven through the built
/// binary with three replicas sharing a directory remote or a bare git repository.
@Suite("Field merge, conflicts and resolve (three replicas)")
struct MergeCLITests {
    enum Kind: String, CaseIterable, Sendable { case dir, git }

    static let record =
        "{\n  \"name\": \"Ann\",\n  \"city\": \"Oslo\",\n  \"phone\": \"1\",\n  \"stats\": {\"plays\": 1}\n}\n"

    /// Replicas a, b, c on one remote of the given kind, all holding `rec.json`.
    static func trio(_ box: Sandbox, _ kind: Kind) -> [Replica] {
        var remote = box.remote
        if kind == .git {
            remote = box.path("remote.git")
            let made = CLI.runTool(
                "/usr/bin/git", ["init", "-q", "--bare", "-b", "main", remote], in: box.root,
                env: ["GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"])
            #expect(made.exit == 0, made.comment)
        }
        let a = box.replica("a")
        a.write("rec.json", record)
        let made = CLI.run(["init", "--remote", remote, "--name", "a", "a"], in: box.root)
        #expect(made.exit == 0, made.comment)
        a.sync()
        for name in ["b", "c"] {
            let cloned = CLI.run(["clone", "--name", name, remote, name], in: box.root)
            #expect(cloned.exit == 0, cloned.comment)
        }
        return [a, box.replica("b"), box.replica("c")]
    }

    /// An edit saved after every earlier one (mtimes at least 2 ms apart, even when two
    /// edits fall in the same millisecond): "the later save wins" is the order of edits.
    static func edit(_ r: Replica, _ old: String, _ new: String) {
        r.write("rec.json", r.read("rec.json")!.replacing(old, with: new))
        SaveClock.shared.stamp(r.path("rec.json"))
    }

    /// Two rounds of syncs in order, so every replica has seen every change.
    static func converge(_ replicas: [Replica]) {
        for _ in 0..<2 { for r in replicas { #expect([0, 3].contains(r.run("sync").exit)) } }
        for r in replicas.dropFirst() {
            #expect(r.documents() == replicas[0].documents(), "\(r.root) differs from \(replicas[0].root)")
        }
    }

    @Test(
        "under a whole-document policy an edit undone on one side changed nothing: the other side's edit is kept, no conflict",
        arguments: Kind.allCases, ["lww", "remote", "manual"])
    func undoneEditIsNoChange(kind: Kind, policy: String) throws {
        let box = Sandbox()
        let rs = Self.trio(box, kind)
        let (a, b) = (rs[0], rs[1])
        for r in [a, b] { r.ok("config", "merge.policy", policy) }
        // A edits the name; B changes the city and puts it back, both synced, after A's save.
        Self.edit(a, "\"Ann\"", "\"Anna\"")
        Self.edit(b, "\"Oslo\"", "\"Bergen\"")
        #expect(b.run("sync").exit == 0)
        Self.edit(b, "\"Bergen\"", "\"Oslo\"")
        #expect(b.run("sync").exit == 0)
        let synced = a.run("sync")
        let context = "\(kind) \(policy): \(synced.comment)"
        #expect(synced.exit == 0, "no conflict: \(context)")
        #expect(a.json("rec.json")?["name"] as? String == "Anna", "A's edit kept: \(context)")
        #expect(a.json("rec.json")?["city"] as? String == "Oslo")
        #expect(b.run("sync").exit == 0)
        #expect(b.json("rec.json")?["name"] as? String == "Anna", "and sent: \(context)")
    }

    @Test(
        "the same values saved on both sides in different layouts are the remote's version: nothing pushed, nothing left pending",
        arguments: Kind.allCases, ["merge", "merge receive-only", "lww", "lww receive-only"])
    func sameValuesOtherLayout(kind: Kind, setting: String) throws {
        let box = Sandbox()
        let rs = Self.trio(box, kind)
        let (a, b) = (rs[0], rs[1])
        let receiveOnly = setting.hasSuffix("receive-only")
        if receiveOnly { b.ok("config", "sync.mode", "receive-only") }
        for r in [a, b] { r.ok("config", "merge.policy", String(setting.prefix { $0 != " " })) }
        // B: the city, and `stats` laid out on three lines (what an editor's formatter does).
        b.write(
            "rec.json",
            b.read("rec.json")!.replacing("\"Oslo\"", with: "\"Bergen\"").replacing(
                "\"stats\": {\"plays\": 1}", with: "\"stats\": {\n    \"plays\": 1\n  }"))
        // Receive-only: recorded (never sent) before the other replica's edit arrives.
        if receiveOnly { #expect(b.run("sync").exit == 0) }
        Self.edit(a, "\"Oslo\"", "\"Bergen\"")
        #expect(a.run("sync").exit == 0)
        let synced = b.run("sync", "--json")
        let context = "\(kind) \(setting): \(synced.comment)"
        #expect(synced.exit == 0, "\(context)")
        let report = JSONHelp.parse(synced.stdout) as? [String: Any]
        #expect((report?["pushed"] as? [Any])?.isEmpty ?? false, "nothing pushed: \(context)")
        #expect(b.changesetId("rec.json") == a.changesetId("rec.json"), "B holds A's version: \(context)")
        let status = JSONHelp.parse(b.run("status", "--json").stdout) as? [String: Any]
        #expect(
            (status?["pending"] as? [Any])?.isEmpty ?? false,
            "nothing pending: \(context) \(String(describing: status))")
        #expect(b.json("rec.json")?["city"] as? String == "Bergen")
        let listed = JSONHelp.parse(b.run("conflicts", "--json").stdout) as? [String: Any]
        #expect(
            (listed?["conflicts"] as? [Any])?.isEmpty ?? false, "no conflict: \(context) \(String(describing: listed))")
    }

    @Test("edits to different fields of one record on three replicas merge with no conflict", arguments: Kind.allCases)
    func differentFieldsMerge(_ kind: Kind) {
        let box = Sandbox("merge-fields-\(kind)")
        let rs = Self.trio(box, kind)
        Self.edit(rs[0], "\"Ann\"", "\"Anna\"")
        Self.edit(rs[1], "\"Oslo\"", "\"Bergen\"")
        Self.edit(rs[2], "\"phone\": \"1\"", "\"phone\": \"2\"")
        for r in rs {
            let run = r.run("sync")
            #expect(run.exit == 0, "a merge without field collisions is not a conflict: \(run)")
        }
        Self.converge(rs)
        let merged = rs[0].json("rec.json") ?? [:]
        #expect(merged["name"] as? String == "Anna")
        #expect(merged["city"] as? String == "Bergen")
        #expect(merged["phone"] as? String == "2")
        for r in rs {
            #expect(r.conflictCopies().isEmpty, "no conflict copies expected in \(r.root)")
            let listed = (JSONHelp.parse(r.ok("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [Any]
            #expect(listed?.isEmpty == true)
        }
        // Key order is kept: the merged file lists the fields as they were.
        let text = rs[0].read("rec.json")!
        let order = ["\"name\"", "\"city\"", "\"phone\"", "\"stats\""].map { text.range(of: $0)?.lowerBound }
        #expect(
            order.allSatisfy { $0 != nil } && order.map { $0! } == order.map { $0! }.sorted(), Comment(rawValue: text))
    }

    @Test(
        "the same field changed on two replicas: exit 3, listed by conflicts, the loser restorable with resolve --take",
        arguments: Kind.allCases)
    func sameFieldConflicts(_ kind: Kind) {
        let box = Sandbox("merge-collide-\(kind)")
        let rs = Self.trio(box, kind)
        let (a, b) = (rs[0], rs[1])
        Self.edit(a, "\"Oslo\"", "\"Paris\"")
        Self.edit(a, "\"Ann\"", "\"Anna\"")
        Self.edit(b, "\"Oslo\"", "\"Rome\"")
        a.sync()
        let second = b.run("sync")
        #expect(second.exit == 3, "a field collision is a conflict (exit 3): \(second)")
        #expect(second.stdout.contains("city"), second.comment)

        // Both values survive: b's (later changesetId) in the document, a's in the store.
        let doc = b.json("rec.json") ?? [:]
        #expect(doc["name"] as? String == "Anna", "the non-colliding edit is merged in")
        #expect(doc["city"] as? String == "Rome")
        let stored = b.conflictCopies().values.compactMap(JSONHelp.object)
        #expect(
            stored.map { $0["city"] as? String } == ["Paris"], Comment(rawValue: "the losing version is kept whole"))

        let listed =
            (JSONHelp.parse(b.ok("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [[String: Any]]
            ?? []
        #expect(listed.count == 1)
        #expect(listed.first?["path"] as? String == "rec.json")
        #expect(listed.first?["fields"] as? [String] == ["city"])
        #expect(listed.first?["side"] as? String == "remote")
        #expect(listed.first?["policy"] as? String == "merge")
        let human = b.ok("conflicts").stdout
        #expect(human.contains("rec.json") && human.contains("fields city"), Comment(rawValue: human))
        #expect(b.ok("status").stdout.contains("Conflicts, open: 1"))

        // Take the stored version back; it travels like any edit.
        let storedId = listed.first?["changesetId"] as? String ?? "?"
        let resolved = b.run("resolve", "rec.json", "--take", String(storedId.prefix(12)))
        #expect(resolved.exit == 0, resolved.comment)
        #expect(b.json("rec.json")?["city"] as? String == "Paris")
        #expect(
            ((JSONHelp.parse(b.ok("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [Any])?.isEmpty
                == true, "resolved conflicts are no longer open")
        #expect(
            ((JSONHelp.parse(b.ok("conflicts", "--all", "--json").stdout) as? [String: Any])?["conflicts"] as? [Any])?
                .count == 1)
        #expect(!b.ok("status").stdout.contains("Conflicts, open"))
        Self.converge(rs)
        for r in rs { #expect(r.json("rec.json")?["city"] as? String == "Paris", "\(r.root)") }
    }

    @Test("declared counters add up the deltas of every replica", arguments: Kind.allCases)
    func countersAddUp(_ kind: Kind) {
        let box = Sandbox("merge-counters-\(kind)")
        let rs = Self.trio(box, kind)
        for r in rs {
            r.ok("config", "merge.counters", "stats.plays")
            #expect(
                r.ok("config", "merge.counters").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "stats.plays"
            )
        }
        // base 1: a +10, b +5, c +2 → 18.
        Self.edit(rs[0], "\"plays\": 1", "\"plays\": 11")
        Self.edit(rs[1], "\"plays\": 1", "\"plays\": 6")
        Self.edit(rs[2], "\"plays\": 1", "\"plays\": 3")
        for r in rs { #expect(r.run("sync").exit == 0, "counters never conflict") }
        Self.converge(rs)
        for r in rs {
            let stats = r.json("rec.json")?["stats"] as? [String: Any]
            #expect((stats?["plays"] as? NSNumber)?.intValue == 18, "\(r.root): \(r.read("rec.json") ?? "")")
            #expect(r.conflictCopies().isEmpty)
        }
    }

    @Test(
        "two replicas adding the same amount to a counter: both additions count, though the files are identical",
        arguments: Kind.allCases)
    func equalCounterAdditionsBothCount(_ kind: Kind) {
        let box = Sandbox("merge-counters-equal-\(kind)")
        let rs = Self.trio(box, kind)
        for r in rs { r.ok("config", "merge.counters", "stats.plays") }
        // base 1: a +2, b +2 → 5. The two saved files differ only in their changesetId.
        Self.edit(rs[0], "\"plays\": 1", "\"plays\": 3")
        Self.edit(rs[1], "\"plays\": 1", "\"plays\": 3")
        for r in rs { #expect(r.run("sync").exit == 0) }
        Self.converge(rs)
        for r in rs {
            let stats = r.json("rec.json")?["stats"] as? [String: Any]
            #expect((stats?["plays"] as? NSNumber)?.intValue == 5, "\(r.root): \(r.read("rec.json") ?? "")")
        }
    }

    @Test("policy manual keeps the remote version in place and the local one aside until resolve")
    func manualPolicy() {
        let box = Sandbox()
        let rs = Self.trio(box, .dir)
        let (a, b) = (rs[0], rs[1])
        b.ok("config", "merge.policyFor.*.json", "manual")
        #expect(b.ok("config", "--list").stdout.contains("merge.policyFor.*.json=manual"))
        Self.edit(a, "\"Oslo\"", "\"Paris\"")
        Self.edit(b, "\"Ann\"", "\"Bea\"")
        a.sync()
        #expect(b.run("sync").exit == 3)
        #expect(b.json("rec.json")?["city"] as? String == "Paris", "manual: the remote version is in place")
        #expect(b.json("rec.json")?["name"] as? String == "Ann")
        #expect(b.conflictCopies().values.compactMap { JSONHelp.object($0)?["name"] as? String } == ["Bea"])
        // Resolve by hand: edit the file, then mark it settled.
        Self.edit(b, "\"Ann\"", "\"Bea\"")
        #expect(b.run("resolve", "rec.json").exit == 0)
        #expect(
            ((JSONHelp.parse(b.ok("conflicts", "--json").stdout) as? [String: Any])?["conflicts"] as? [Any])?.isEmpty
                == true)
        Self.converge(rs)
        let final = a.json("rec.json") ?? [:]
        #expect(final["name"] as? String == "Bea" && final["city"] as? String == "Paris")
    }
}
