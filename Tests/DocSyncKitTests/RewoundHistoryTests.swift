import Testing

@testable import DocSyncKit

/// `RewoundHistory.entries`: what a tree journals when the remote lost the position it
/// synced with. Checked against the rule, not against a replica: after the entries, the
/// base is what the remote still shares, and the tracked versions (what the tree holds and
/// will push) are exactly what they were.
@Suite struct RewoundHistoryTests {
    static func v(_ refId: String, _ cs: String, _ hash: String, _ path: String) -> DocVersion {
        DocVersion(refId: refId, changesetId: cs, hash: hash, path: path)
    }

    static func fold(_ state: SyncState, _ entries: [JournalEntry]) -> SyncState {
        var state = state
        var seq = max(state.journalSeq, state.pending.map(\.seq).max() ?? 0)
        for var e in entries {
            seq += 1
            e.seq = seq
            state.fold(e)
        }
        return state
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var base: DocVersion?
        var common: DocVersion?
        /// The local action expected (nil: none).
        var action: JournalEntry.LocalAction?
        var testDescription: String { name }
    }

    static let a1 = v("a", "01-1", "h1", "a.json")
    static let a2 = v("a", "02-1", "h2", "a.json")
    static let a1moved = v("a", "01-1", "h1", "b.json")
    static let a2moved = v("a", "02-1", "h2", "b.json")

    static let cases: [Case] = [
        Case(name: "same on both: nothing", base: a1, common: a1, action: nil),
        Case(name: "created after the common point: created again", base: a1, common: nil, action: .create),
        Case(name: "edited after it: the edit again", base: a2, common: a1, action: .update),
        Case(name: "renamed after it: the rename again", base: a1moved, common: a1, action: .rename),
        Case(
            name: "moved and edited after it: an update from the old path", base: a2moved, common: a1, action: .update),
        Case(name: "deleted after it: the deletion again", base: nil, common: a1, action: .delete),
        Case(name: "the remote never had it and neither does the tree: nothing", base: nil, common: nil, action: nil)
    ]

    @Test(arguments: cases)
    func oneDocument(_ c: Case) {
        var state = SyncState()
        if let base = c.base { state.base["a"] = base }
        let common = c.common.map { ["a": $0] } ?? [:]
        let entries = RewoundHistory.entries(base: state.base, pending: [], common: common)
        let actions = entries.compactMap { e -> JournalEntry.LocalAction? in
            if case let .local(kind, _, _) = e.event { return kind }
            return nil
        }
        #expect(actions == (c.action.map { [$0] } ?? []))
        let after = Self.fold(state, entries)
        #expect(after.base["a"] == c.common, "the base is what the remote still shares")
        #expect(after.tracked["a"] == c.base, "the tree still holds (and will push) what it had")
        if c.action == .update, c.base?.path != c.common?.path, case let .local(_, _, from)? = entries.last?.event {
            #expect(from == c.common?.path)
        }
        #expect(RewoundHistory.resent(entries) == actions.count)
    }

    @Test("a document with local actions pending keeps them: the base moves, the tracked version stays")
    func pendingActionsAreKept() {
        var state = SyncState()
        state.base["a"] = Self.a2
        state.fold(JournalEntry(.local(.update, version: Self.v("a", "03-1", "h3", "a.json"), fromPath: nil)))
        let entries = RewoundHistory.entries(base: state.base, pending: state.pending, common: ["a": Self.a1])
        #expect(
            entries.count == 2, "the base moves, and one action says what the pending content is made from: \(entries)")
        guard case let .local(_, version, _)? = entries.last?.event else {
            Issue.record("no local action: \(entries)")
            return
        }
        #expect(version.changesetId == "03-1", "it names the tracked version, changing nothing the tree holds")
        #expect(entries.last?.madeFrom == [Self.a2.changesetId], "made from the version the tree had synced")
        #expect(RewoundHistory.resent(entries) == 0, "nothing the tree had synced is sent again")
        let after = Self.fold(state, entries)
        #expect(after.base["a"] == Self.a1)
        #expect(after.tracked["a"]?.changesetId == "03-1")
        #expect(after.pending.count == 2)
    }

    @Test("a version sent again names the version the tree had synced as what it is made from")
    func resentVersionsNameWhatTheyAreMadeFrom() {
        let entries = RewoundHistory.entries(base: ["a": Self.a2], pending: [], common: ["a": Self.a1])
        #expect(entries.last?.madeFrom == [Self.a2.changesetId])
        #expect(RewoundHistory.resent(entries) == 1)
        #expect(
            PushPlan.parents(previous: Self.a1, carried: [Self.a2.changesetId, Self.a1.changesetId], new: Self.a2)
                == [Self.a1.changesetId],
            "a push names the base and what its content carries, once each, never itself")
    }
}
