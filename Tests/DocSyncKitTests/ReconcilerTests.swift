import Testing

@testable import DocSyncKit

@Suite struct ReconcilerTests {
    static let early = "000000000001-0000-aaaa"
    static let mid = "000000000002-0000-bbbb"
    static let late = "000000000003-0000-cccc"

    static func v(_ cs: String, _ hash: String, _ path: String = "a.json") -> DocVersion {
        DocVersion(refId: "r", changesetId: cs, hash: hash, path: path)
    }

    static let base = v(early, "h0")

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var base: DocVersion?
        var local: DocVersion?
        var remote: DocVersion?
        var expected: DocVersion??  // .none: no decision
        var contentFrom: Reconciler.Side? = nil
        var loser: Reconciler.Side? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unchanged on both sides", base: base, local: base, remote: base, expected: .none),
        Case(
            name: "local-only edit: remote brings nothing", base: base, local: v(mid, "h1"), remote: base,
            expected: .none),
        Case(
            name: "remote-only edit is taken", base: base, local: base, remote: v(mid, "h2"),
            expected: .some(v(mid, "h2")), contentFrom: .remote),
        Case(
            name: "both made the same edit", base: base, local: v(mid, "h1"), remote: v(mid, "h1"),
            expected: .some(v(mid, "h1")), contentFrom: .remote),
        Case(
            name: "same content, different changesetIds: not a conflict", base: base, local: v(late, "h1"),
            remote: v(mid, "h1"),
            expected: .some(v(mid, "h1")), contentFrom: .remote),
        Case(
            name: "both edited differently: later local wins", base: base, local: v(late, "h1"), remote: v(mid, "h2"),
            expected: .some(v(late, "h1")), contentFrom: .local, loser: .remote),
        Case(
            name: "both edited differently: later remote wins", base: base, local: v(mid, "h1"), remote: v(late, "h2"),
            expected: .some(v(late, "h2")), contentFrom: .remote, loser: .local),
        Case(
            name: "remote deleted, local unchanged: delete", base: base, local: base, remote: nil, expected: .some(nil),
            contentFrom: .remote),
        Case(
            name: "remote deleted, local edited: edit wins", base: base, local: v(mid, "h1"), remote: nil,
            expected: .some(v(mid, "h1")), contentFrom: .local),
        Case(
            name: "local deleted, remote edited: edit wins", base: base, local: nil, remote: v(mid, "h2"),
            expected: .some(v(mid, "h2")), contentFrom: .remote),
        Case(
            name: "deleted on both sides", base: base, local: nil, remote: nil, expected: .some(nil),
            contentFrom: .remote),
        Case(
            name: "local delete, remote unchanged: remote brings nothing", base: base, local: nil, remote: base,
            expected: .none),
        Case(
            name: "remote rename, local unchanged", base: base, local: base, remote: v(early, "h0", "b.json"),
            expected: .some(v(early, "h0", "b.json")), contentFrom: .remote),
        Case(
            name: "local rename + remote edit: both apply", base: base, local: v(early, "h0", "moved.json"),
            remote: v(mid, "h2"),
            expected: .some(v(mid, "h2", "moved.json")), contentFrom: .remote),
        Case(
            name: "remote rename + local edit: both apply", base: base, local: v(mid, "h1"),
            remote: v(early, "h0", "moved.json"),
            expected: .some(v(mid, "h1", "moved.json")), contentFrom: .local),
        Case(
            name: "rename on both sides: later wins", base: base, local: v(late, "h0", "l.json"),
            remote: v(mid, "h0", "r.json"),
            expected: .some(v(mid, "h0", "l.json")), contentFrom: .remote),
        Case(
            name: "created on both sides (no base), same content", base: nil, local: v(mid, "h1"), remote: v(mid, "h1"),
            expected: .some(v(mid, "h1")), contentFrom: .remote),
        Case(
            name: "created on both sides (no base), different: later wins", base: nil, local: v(mid, "h1"),
            remote: v(late, "h2"),
            expected: .some(v(late, "h2")), contentFrom: .remote, loser: .local),
        Case(
            name: "new on the remote only", base: nil, local: nil, remote: v(mid, "h2"), expected: .some(v(mid, "h2")),
            contentFrom: .remote)
    ]

    @Test(arguments: cases)
    func decides(_ c: Case) {
        let decision = Reconciler.decide(base: c.base, local: c.local, remote: c.remote)
        switch c.expected {
        case .none:
            #expect(decision == nil)
        case .some(let expected):
            #expect(decision?.result == expected)
            if let from = c.contentFrom { #expect(decision?.contentFrom == from) }
            #expect(decision?.loser?.side == c.loser)
            if let loser = decision?.loser {
                // The loser is exactly the version that did not win.
                #expect(loser.version == (loser.side == .local ? c.local : c.remote))
            }
        }
    }

    /// Renamed differently on both sides: the later rename wins and the other path is
    /// named in the report, so nobody wonders where their rename went.
    @Test func renameOnBothSidesNamesTheRenameThatLost() throws {
        let decision = try #require(
            Reconciler.decide(
                base: Self.base, local: Self.v(Self.mid, "h0", "mine.json"),
                remote: Self.v(Self.late, "h0", "theirs.json")))
        #expect(decision.result?.path == "theirs.json")
        #expect(decision.loser == nil, "a rename alone loses no content")
        let notice = try #require(decision.pathNotice)
        #expect(
            notice
                == .renamedOnBothSides(
                    kept: "theirs.json", byRenameTime: false, lostSide: .local, lostPath: "mine.json"))
        #expect(notice.description.contains("local rename to mine.json"), "\(notice)")
        // One side renamed, or both to the same path: nothing to say.
        #expect(
            Reconciler.decide(
                base: Self.base, local: Self.v(Self.mid, "h0", "x.json"), remote: Self.v(Self.late, "h0", "x.json"))?
                .pathNotice == nil)
        #expect(
            Reconciler.decide(
                base: Self.base, local: Self.v(Self.mid, "h1"), remote: Self.v(Self.late, "h0", "x.json"))?.pathNotice
                == nil)
    }

    /// A pure rename keeps the changesetId, so both renames carry the same one: when each
    /// was made decides, and the decision is the same seen from either side.
    @Test(arguments: [(100 as Int64, 200 as Int64), (200, 100)])
    func laterRenameWinsFromEitherSide(_ times: (Int64, Int64)) throws {
        let (mineAt, theirsAt) = times
        let mine = Self.v(Self.early, "h0", "mine.json"), theirs = Self.v(Self.early, "h0", "theirs.json")
        let here = try #require(
            Reconciler.decide(
                base: Self.base, local: mine, remote: theirs, localMovedAt: mineAt, remoteMovedAt: theirsAt))
        let there = try #require(
            Reconciler.decide(
                base: Self.base, local: theirs, remote: mine, localMovedAt: theirsAt, remoteMovedAt: mineAt))
        let later = mineAt > theirsAt ? "mine.json" : "theirs.json"
        #expect(here.result?.path == later && there.result?.path == later, "the same name on both replicas")
        let lost = try #require(here.renameLoser)
        #expect(lost.version.path == (later == "mine.json" ? "theirs.json" : "mine.json"))
        #expect(lost.side == (later == "mine.json" ? .remote : .local))
        #expect(here.pathNotice?.description.contains("the later rename") == true)
        // Without both times, the later changesetId decides, as before.
        let untimed = try #require(
            Reconciler.decide(
                base: Self.base, local: Self.v(Self.mid, "h0", "mine.json"),
                remote: Self.v(Self.late, "h0", "theirs.json"),
                localMovedAt: 500))
        #expect(
            untimed.result?.path == "theirs.json"
                && untimed.pathNotice?.description.contains("later changesetId") == true)
        // No base (both sides brought the document back at different paths): no rename lost.
        let reborn = try #require(
            Reconciler.decide(
                base: nil, local: Self.v(Self.mid, "h1", "mine.json"), remote: Self.v(Self.late, "h2", "theirs.json"),
                localMovedAt: 900, remoteMovedAt: 100))
        #expect(reborn.renameLoser == nil && reborn.result?.path == "theirs.json")
    }
}

@Suite struct IdentityTests {
    @Test func changesetIdsSortAsClocks() throws {
        let a = ChangesetID(wallMillis: 0xabc, counter: 2, replica: "aaaa")
        let b = ChangesetID(wallMillis: 0xabc, counter: 10, replica: "aaaa")
        let c = ChangesetID(wallMillis: 0xabd, counter: 0, replica: "0000")
        #expect(a < b && b < c)
        #expect(a.description == "000000000abc-0002-aaaa")
        // String order is clock order, which is what makes the format sortable.
        #expect(a.description < b.description && b.description < c.description)
        #expect(ChangesetID(a.description) == a)
        #expect(ChangesetID("nonsense") == nil)
        #expect(changesetOrder("hand-edited", a.description))
    }

    @Test func clockNeverGoesBackwardsAndPersists() throws {
        let dir = TempFolder()
        nonisolated(unsafe) var wall: UInt64 = 1000
        let clock = HybridLogicalClock(replica: "aaaa", persistedAt: dir.sub("clock"), now: { wall })
        let first = clock.next()
        wall = 500  // the wall clock steps back
        let second = clock.next()
        #expect(first < second)
        clock.observe(ChangesetID(wallMillis: 9000, counter: 3, replica: "bbbb").description)
        let third = clock.next()
        #expect(third.wallMillis == 9000 && third.counter == 4)
        try clock.persist()
        let reloaded = HybridLogicalClock(replica: "aaaa", persistedAt: dir.sub("clock"), now: { 100 })
        #expect(reloaded.next() > third)
    }

    /// A run stamps a file with an id from the past sequence and is killed before it
    /// persists the clock; the next run keeps that id for the file (`observe`): the id it
    /// issues next for an edit dated the same, another document's, is not that id.
    @Test func ownPastIdMetAgainIsNotIssuedAgain() throws {
        let dir = TempFolder()
        let path = dir.sub("clock")
        let me = "aaaaaaaaaaaa", other = "bbbbbbbbbbbb"
        let edited = ChangesetID(wallMillis: 1_000, counter: 0, replica: other).description
        let clock = HybridLogicalClock(replica: me, persistedAt: path, now: { 10_000 })
        _ = clock.next()
        try clock.persist()
        // Saved at 2,000 after a version of 1,000: in the past of a clock at 10,000.
        let killed = HybridLogicalClock(replica: me, persistedAt: path, now: { 10_001 })
        let stamped = killed.next(savedAt: 2_000, after: edited)
        #expect(stamped.counter >= 0x8000, "an id from the past sequence: \(stamped)")
        // Not persisted: the next run reads the clock as it was, and meets the stamp.
        let next = HybridLogicalClock(replica: me, persistedAt: path, now: { 10_002 })
        next.observe(stamped.description)
        let second = next.next(savedAt: 2_000, after: edited)
        #expect(second != stamped, "one id for two contents: \(second)")
        try next.persist()
        let later = HybridLogicalClock(replica: me, persistedAt: path, now: { 10_003 })
        let third = later.next(savedAt: 2_000, after: edited)
        #expect(third != stamped && third != second)
        // Another replica's id from its past sequence moves nothing of this one's.
        let foreign = HybridLogicalClock(replica: me, persistedAt: nil, now: { 10_000 })
        _ = foreign.next()
        foreign.observe(ChangesetID(wallMillis: 2_001, counter: 0x8000, replica: other).description)
        #expect(foreign.next(savedAt: 2_000, after: edited).counter == 0x8000)
    }

    @Test func refIdsAreUniqueUUIDs() {
        let ids = Set((0..<1000).map { _ in RefID.generate() })
        #expect(ids.count == 1000)
        #expect(ids.allSatisfy { $0.count == 36 })
    }

    @Test(arguments: [
        "../x.json", "/etc/passwd.json", "a/../../x.json", "a//b.json", ".docsync/state.json", "a\u{0}.json", "a.txt",
        "", "./a.json"
    ])
    func unsafePathsAreRefused(_ path: String) {
        #expect(DocumentPath.problem(path) != nil)
    }

    @Test(arguments: ["a.json", "deep/er/ü ñ.json", ".hidden/x.json", "a..b.json"])
    func ordinaryPathsAreAccepted(_ path: String) {
        #expect(DocumentPath.problem(path) == nil)
    }

    @Test func refIdFileNamesCannotEscape() {
        #expect(DocumentPath.fileName(forRefId: "../../etc/passwd") == "%2E.%2F..%2Fetc%2Fpasswd")
        #expect(DocumentPath.fileName(forRefId: "..") == "%2E.")
        #expect(DocumentPath.fileName(forRefId: "plain-id_1.2") == "plain-id_1.2")
        #expect(!DocumentPath.fileName(forRefId: String(repeating: "/", count: 500)).contains("/"))
        #expect(DocumentPath.fileName(forRefId: String(repeating: "x", count: 500)).utf8.count < 255)
    }
}

@Suite struct IgnoreRulesTests {
    @Test func gitignoreSyntax() {
        let rules = IgnoreRules(
            text: """
                # comment
                *.tmp.json
                build/
                /top.json
                docs/**/draft.json
                secret*.json
                !secret-ok.json
                """)
        #expect(rules.isIgnored("a.tmp.json", isDirectory: false))
        #expect(rules.isIgnored("x/y/a.tmp.json", isDirectory: false))
        #expect(rules.isIgnored("build", isDirectory: true))
        #expect(!rules.isIgnored("build", isDirectory: false))
        #expect(rules.isIgnored("top.json", isDirectory: false))
        #expect(!rules.isIgnored("sub/top.json", isDirectory: false))
        #expect(rules.isIgnored("docs/a/b/draft.json", isDirectory: false))
        #expect(rules.isIgnored("docs/draft.json", isDirectory: false))
        #expect(rules.isIgnored("secret1.json", isDirectory: false))
        #expect(!rules.isIgnored("secret-ok.json", isDirectory: false))
        #expect(!rules.isIgnored("notes.json", isDirectory: false))
    }
}
