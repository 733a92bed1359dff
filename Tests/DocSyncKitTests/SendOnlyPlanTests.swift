import Testing

@testable import DocSyncKit

/// The pure parts of `sync.mode send-only` (docs/SYNC.md, "A replica that only sends"):
/// which remote entries a send-only replica holds aside instead of applying, and which held
/// changes `override` selects. Written from the rules, not from the code: a remote change
/// that would change the tree, or record a loss, waits; the tree's own push coming back,
/// and a deletion both sides made, do not.
@Suite struct SendOnlyPlanTests {
    typealias T = DocumentPlannerTableTests
    static let b = T.v(T.early, "h0")

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var base: DocVersion?
        var local: DocVersion?
        var remote: DocVersion?
        var held: Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "the remote brings the base again: nothing to hold", base: b, local: b, remote: b, held: false),
        Case(name: "changed on the remote only: held", base: b, local: b, remote: T.v(T.late, "h2"), held: true),
        Case(name: "new on the remote: held", base: nil, local: nil, remote: T.v(T.late, "h2"), held: true),
        Case(
            name: "renamed on the remote only: held", base: b, local: b, remote: T.v(T.early, "h0", "b.json"),
            held: true),
        Case(name: "deleted on the remote only: held", base: b, local: b, remote: nil, held: true),
        Case(
            name: "changed on both sides: held (the local change waits with it)", base: b, local: T.v(T.mid, "h1"),
            remote: T.v(T.late, "h2"), held: true),
        Case(
            name: "deleted on the remote, changed here: held", base: b, local: T.v(T.mid, "h1"), remote: nil,
            held: true),
        Case(
            name: "the tree's own version comes back from the remote: not held", base: b, local: T.v(T.mid, "h1"),
            remote: T.v(T.mid, "h1"), held: false),
        Case(name: "deleted on both sides: not held", base: b, local: nil, remote: nil, held: false)
    ]

    @Test("a send-only replica holds aside exactly the remote changes that would change its tree", arguments: cases)
    func holds(_ c: Case) {
        let sendOnly = DocumentPlanner.decide(
            DocumentInputs(entry: T.entry(c.remote), base: c.base, local: c.local, holdsRemoteChanges: true))
        #expect(sendOnly.holdsAside == c.held)
        // The same inputs on a replica that applies: the decision is the same, nothing held.
        let both = DocumentPlanner.decide(DocumentInputs(entry: T.entry(c.remote), base: c.base, local: c.local))
        #expect(!both.holdsAside)
        #expect(both.decision == sendOnly.decision)
    }

    static func hold(_ refId: String, local: String?, remote: String?) -> OverrideService.Target {
        OverrideService.Target(
            refId: refId, local: local.map { DocVersion(refId: refId, changesetId: T.mid, hash: "l", path: $0) },
            remote: remote.map { .version(DocVersion(refId: refId, changesetId: T.late, hash: "r", path: $0)) }
                ?? .deleted(changesetId: T.late, path: local),
            remoteReplica: "cccccccccccc")
    }

    @Test(
        "override selects held changes by the local path or the remote's, files or folders; a path with none is an error"
    )
    func overrideTargets() throws {
        let holds = [
            Self.hold("1", local: "notes/a.json", remote: "notes/a.json"),
            Self.hold("2", local: "b.json", remote: "archive/b.json"),
            Self.hold("3", local: "tasks/c.json", remote: nil)
        ]
        // In the order status lists them (by the path a pull would give them: archive/b.json first).
        #expect(try OverrideService.targets(holds, selecting: []).map(\.refId) == ["2", "1", "3"])
        #expect(try OverrideService.targets(holds, selecting: ["notes"]).map(\.refId) == ["1"])
        #expect(try OverrideService.targets(holds, selecting: ["archive"]).map(\.refId) == ["2"])
        #expect(try OverrideService.targets(holds, selecting: ["b.json", "tasks/c.json"]).map(\.refId) == ["2", "3"])
        #expect(try OverrideService.targets(holds, selecting: [""]).count == 3)
        #expect(throws: Workspace.Failure.self) { try OverrideService.targets(holds, selecting: ["note"]) }
        #expect(throws: Workspace.Failure.self) { try OverrideService.targets(holds, selecting: ["notes/x.json"]) }
    }
}
