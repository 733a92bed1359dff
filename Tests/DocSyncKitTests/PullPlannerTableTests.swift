import Testing

@testable import DocSyncKit

/// The pull planner's per-document steps, as pure functions over one document's inputs,
/// checked against a table of expected outcomes written from the rules (the doc comments
/// of `PullPlanner.decisionStart` and `PullPlanner.bookkeeping`), not from the code.
@Suite struct PullPlannerTableTests {
    static func v(_ cs: String, _ hash: String, _ path: String = "a.json") -> DocVersion {
        DocVersion(refId: "r", changesetId: cs, hash: hash, path: path)
    }

    static let base = v("cs-base", "h0")
    static let edit1 = v("cs-e1", "h1")
    static let edit2 = v("cs-e2", "h2")
    static let remote = v("cs-remote", "h3")
    static let merged = v("cs-merge", "h4")
    static let older = v("cs-older", "h9")
    static let p1 = PullPlanner.PendingVersion(seq: 11, version: edit1)
    static let p2 = PullPlanner.PendingVersion(seq: 12, version: edit2)

    // MARK: Which base and local a document is decided from

    struct StartCase: CustomTestStringConvertible, Sendable {
        var name: String
        var base: DocVersion? = PullPlannerTableTests.base
        var local: DocVersion? = PullPlannerTableTests.edit1
        var remote: DocVersion? = PullPlannerTableTests.remote
        var pending: [PullPlanner.PendingVersion] = []
        var own: Set<String>? = nil
        var user: (base: DocVersion?, local: DocVersion?)? = nil
        var mergeBase: DocVersion? = nil
        // Expected:
        var startBase: DocVersion?
        var startLocal: DocVersion?
        var landed: [Int] = []
        var remerged = false
        var testDescription: String { name }
    }

    static let startCases: [StartCase] = [
        StartCase(name: "nothing pending: the tree's base and file", startBase: base, startLocal: edit1),
        StartCase(name: "a new document: no base", base: nil, local: nil, startBase: nil, startLocal: nil),
        StartCase(
            name: "a pending edit the remote does not hold is still local", pending: [p1], startBase: base,
            startLocal: edit1),
        StartCase(
            name: "the remote holds the pending edit: it landed, and is the base", remote: edit1, pending: [p1],
            startBase: edit1, startLocal: edit1, landed: [11]),
        StartCase(
            name: "the remote holds the second of two pending edits: both landed", local: edit2, remote: edit2,
            pending: [p1, p2], startBase: edit2, startLocal: edit2, landed: [11, 12]),
        StartCase(
            name: "the remote holds the first of two pending edits: only it landed", local: edit2, remote: edit1,
            pending: [p1, p2], startBase: edit1, startLocal: edit2, landed: [11]),
        StartCase(
            name: "the remote holds the base itself: nothing landed", remote: base,
            pending: [PullPlanner.PendingVersion(seq: 11, version: base)], startBase: base, startLocal: edit1),
        StartCase(
            name: "a remote deletion: nothing landed", remote: nil, pending: [p1], startBase: base, startLocal: edit1),
        StartCase(
            name: "a new document whose push landed unjournaled", base: nil, local: edit1, remote: edit1,
            pending: [p1], startBase: edit1, startLocal: edit1, landed: [11]),
        StartCase(
            name: "the tree's own commits hold the pending edit (another replica built on it)", pending: [p1],
            own: ["cs-e1"], startBase: edit1, startLocal: edit1, landed: [11]),
        StartCase(
            name: "own commits hold both pending edits: the later is the base", local: edit2, pending: [p1, p2],
            own: ["cs-e1", "cs-e2"], startBase: edit2, startLocal: edit2, landed: [11, 12]),
        StartCase(
            name: "own commits hold only the first pending edit", local: edit2, pending: [p1, p2], own: ["cs-e1"],
            startBase: edit1, startLocal: edit2, landed: [11]),
        StartCase(
            name: "own commits hold none of the pending edits", pending: [p1], own: ["cs-other"], startBase: base,
            startLocal: edit1),
        StartCase(
            name: "own commits hold the base's version only: nothing landed",
            pending: [
                PullPlanner.PendingVersion(seq: 11, version: base)
            ], own: ["cs-base"], startBase: base, startLocal: edit1),
        StartCase(
            name: "an empty own set is nothing held", pending: [p1], own: [], startBase: base, startLocal: edit1),
        StartCase(
            name: "a pending deletion is never a landed version", local: nil,
            pending: [PullPlanner.PendingVersion(seq: 11, version: nil)], own: ["cs-base"], startBase: base,
            startLocal: nil),
        StartCase(
            name: "the remote's own landed version comes before the own commits'", local: edit2, remote: edit1,
            pending: [p1, p2], own: ["cs-e2"], startBase: edit1, startLocal: edit2, landed: [11]),
        StartCase(
            name: "a landed push comes before the user's version", remote: edit1, pending: [p1],
            user: (older, edit2), startBase: edit1, startLocal: edit1, landed: [11]),
        StartCase(
            name: "a landed push ignores the carried merge base", remote: edit1, pending: [p1], mergeBase: older,
            startBase: edit1, startLocal: edit1, landed: [11]),
        StartCase(
            name: "the user's version as it still is: decided as usual", user: (base, edit1), startBase: base,
            startLocal: edit1),
        StartCase(
            name: "the base moved since the user's version: decided again from it", base: merged, local: merged,
            user: (base, edit1), startBase: base, startLocal: edit1, remerged: true),
        StartCase(
            name: "the file moved since the user's version: decided again from it", local: merged,
            user: (base, edit1), startBase: base, startLocal: edit1, remerged: true),
        StartCase(
            name: "decided again, measured from what the user's content carries", base: merged, local: merged,
            user: (base, edit1), mergeBase: older, startBase: older, startLocal: edit1, remerged: true),
        StartCase(
            name: "content carrying versions beyond the base is measured from them", mergeBase: older,
            startBase: older, startLocal: edit1),
        StartCase(
            name: "a user version of a new document", base: merged, local: merged, user: (nil, edit1),
            startBase: nil, startLocal: edit1, remerged: true)
    ]

    @Test(arguments: startCases)
    func decisionStart(_ c: StartCase) {
        let start = PullPlanner.decisionStart(
            base: c.base, local: c.local, remote: c.remote, pending: c.pending, ownVersions: c.own,
            user: c.user.map { PullPlanner.UserVersion(base: $0.base, local: $0.local, madeFrom: []) },
            mergeBase: c.mergeBase)
        #expect(start.base == c.startBase, "base")
        #expect(start.local == c.startLocal, "local")
        #expect(start.landedSeqs == c.landed, "landed")
        #expect(start.remerged == c.remerged, "remerged")
    }

    // MARK: The journal after the outcome

    struct BookCase: CustomTestStringConvertible, Sendable {
        var name: String
        var local: DocVersion?
        var result: DocVersion?
        var published: DocVersion?
        var remoteChangesetId = "cs-remote"
        var remotePath: String? = "a.json"
        var pending: [PullPlanner.PendingVersion] = []
        var remerged = false
        var userMadeFrom: [String] = []
        var landedPending: Set<String> = []
        var entries: [String]
        var pulled: String? = nil
        var testDescription: String { name }
    }

    static let bookCases: [BookCase] = [
        BookCase(
            name: "a remote edit taken as is", local: base, result: remote, published: remote,
            entries: ["seen cs-remote", "apply a.json → cs-remote@a.json"], pulled: "update a.json"),
        BookCase(
            name: "a new remote document", local: nil, result: remote, published: remote,
            entries: ["seen cs-remote", "apply - → cs-remote@a.json"], pulled: "create a.json"),
        BookCase(
            name: "a remote deletion taken", local: base, result: nil, published: nil, remoteChangesetId: "cs-del",
            entries: ["seen deleted cs-del a.json", "apply a.json → deleted"], pulled: "delete a.json"),
        BookCase(
            name: "a remote deletion of a document this tree never had", local: nil, result: nil, published: nil,
            remoteChangesetId: "cs-del", entries: ["seen deleted cs-del a.json"]),
        BookCase(
            name: "a remote rename taken", local: base, result: v("cs-remote", "h0", "b.json"),
            published: v("cs-remote", "h0", "b.json"),
            entries: ["seen cs-remote", "apply a.json → cs-remote@b.json"], pulled: "rename b.json from a.json"),
        BookCase(
            name: "the local edit won with nothing to change: it stays pending", local: edit1, result: edit1,
            published: remote, pending: [p1], entries: ["seen cs-remote"]),
        BookCase(
            name: "the local version won and nothing is pending: it is pushed", local: edit1, result: edit1,
            published: remote, entries: ["seen cs-remote", "update cs-e1@a.json"]),
        BookCase(
            name: "a merge replaces the pending edit and is pushed", local: edit1, result: merged,
            published: remote, pending: [p1],
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@a.json", "update cs-merge@a.json"
            ],
            pulled: "update a.json"),
        BookCase(
            name: "a merge names what the replaced edits were made from",
            local: edit2, result: merged, published: remote,
            pending: [
                PullPlanner.PendingVersion(seq: 11, version: edit1, madeFrom: ["cs-x"]),
                PullPlanner.PendingVersion(seq: 12, version: edit2, madeFrom: ["cs-x", "cs-w"])
            ],
            entries: [
                "done superseded 11,12", "seen cs-remote", "apply a.json → cs-merge@a.json",
                "update cs-merge@a.json madeFrom cs-x,cs-w"
            ], pulled: "update a.json"),
        BookCase(
            name: "decided again from the user's version: only what it was made from",
            local: edit1, result: merged, published: remote,
            pending: [PullPlanner.PendingVersion(seq: 11, version: edit1, madeFrom: ["cs-dropped"])], remerged: true,
            userMadeFrom: ["cs-user"],
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@a.json",
                "update cs-merge@a.json madeFrom cs-user"
            ], pulled: "update a.json"),
        BookCase(
            name: "decided again with nothing carried names nothing", local: edit1, result: merged, published: remote,
            pending: [PullPlanner.PendingVersion(seq: 11, version: edit1, madeFrom: ["cs-dropped"])], remerged: true,
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@a.json", "update cs-merge@a.json"
            ],
            pulled: "update a.json"),
        BookCase(
            name: "pushes that landed unjournaled are named too, after the carried ones",
            local: edit1, result: merged, published: remote,
            pending: [PullPlanner.PendingVersion(seq: 11, version: edit1, madeFrom: ["cs-x"])],
            landedPending: ["cs-l2", "cs-l1"],
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@a.json",
                "update cs-merge@a.json madeFrom cs-x,cs-l1,cs-l2"
            ], pulled: "update a.json"),
        BookCase(
            name: "a landed version already carried is named once", local: edit1, result: merged, published: remote,
            pending: [PullPlanner.PendingVersion(seq: 11, version: edit1, madeFrom: ["cs-l1"])],
            landedPending: ["cs-l1"],
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@a.json",
                "update cs-merge@a.json madeFrom cs-l1"
            ], pulled: "update a.json"),
        BookCase(
            name: "the outcome is what the remote has: the pending edit is finished", local: edit1, result: remote,
            published: remote, pending: [p1],
            entries: ["done superseded 11", "seen cs-remote", "apply a.json → cs-remote@a.json"],
            pulled: "update a.json"),
        BookCase(
            name: "the same edit on both sides: finished, nothing to write", local: remote, result: remote,
            published: remote, pending: [PullPlanner.PendingVersion(seq: 11, version: remote)],
            entries: ["done superseded 11", "seen cs-remote"]),
        BookCase(
            name: "a remote deletion beats the pending edit", local: edit1, result: nil, published: nil,
            remoteChangesetId: "cs-del", pending: [p1],
            entries: ["done superseded 11", "seen deleted cs-del a.json", "apply a.json → deleted"],
            pulled: "delete a.json"),
        BookCase(
            name: "a pending edit beat the remote deletion: it stays pending", local: edit1, result: edit1,
            published: nil, remoteChangesetId: "cs-del", pending: [p1], entries: ["seen deleted cs-del a.json"]),
        BookCase(
            name: "a version kept against a remote deletion, nothing pending: sent as new", local: edit1,
            result: edit1, published: nil, remoteChangesetId: "cs-del",
            entries: ["seen deleted cs-del a.json", "create cs-e1@a.json"]),
        BookCase(
            name: "an incoming document put beside one at its path: a rename to push", local: nil,
            result: v("cs-remote", "h3", "a~r.json"), published: remote,
            entries: ["seen cs-remote", "apply - → cs-remote@a~r.json", "rename cs-remote@a~r.json from a.json"],
            pulled: "create a~r.json"),
        BookCase(
            name: "a merge that also moves the file", local: edit1, result: v("cs-merge", "h4", "b.json"),
            published: remote, pending: [p1],
            entries: [
                "done superseded 11", "seen cs-remote", "apply a.json → cs-merge@b.json",
                "update cs-merge@b.json from a.json"
            ], pulled: "update b.json from a.json")
    ]

    @Test(arguments: bookCases)
    func bookkeeping(_ c: BookCase) {
        let out = PullPlanner.bookkeeping(
            refId: "r", local: c.local, result: c.result, published: c.published,
            remoteChangesetId: c.remoteChangesetId, remotePath: c.remotePath, pending: c.pending,
            remerged: c.remerged, userMadeFrom: c.userMadeFrom, landedPending: c.landedPending)
        #expect(out.entries.map(Self.render) == c.entries)
        #expect(out.pulled.map(Self.render) == c.pulled)
    }

    // MARK: Where an incoming version goes

    struct PlaceCase: CustomTestStringConvertible, Sendable {
        var name: String
        var path: String
        var taken: Set<String>
        var expected: String
        var testDescription: String { name }
    }

    static let placeCases: [PlaceCase] = [
        PlaceCase(name: "a free path is kept", path: "a.json", taken: [], expected: "a.json"),
        PlaceCase(
            name: "another document's path: beside it, tagged with the refId", path: "a.json", taken: ["a.json"],
            expected: "a~0123abcd.json"),
        PlaceCase(
            name: "the tagged path taken too: numbered", path: "a.json", taken: ["a.json", "a~0123abcd.json"],
            expected: "a~0123abcd-2.json"),
        PlaceCase(
            name: "in a folder", path: "people/a.json", taken: ["people/a.json"],
            expected: "people/a~0123abcd.json")
    ]

    @Test(arguments: placeCases)
    func placed(_ c: PlaceCase) {
        let version = DocVersion(refId: "0123abcd-ef", changesetId: "cs", hash: "h", path: c.path)
        let placed = PullPlanner.placed(version) { !c.taken.contains($0) }
        #expect(placed.version.path == c.expected)
        #expect(placed.version.changesetId == "cs" && placed.version.hash == "h")
        #expect((placed.notice != nil) == (c.expected != c.path))
        if let notice = placed.notice { #expect(notice == .placedBeside(path: c.path, placedAt: c.expected)) }
    }

    @Test func theTableHasEnoughCases() {
        #expect(Self.startCases.count + Self.bookCases.count + Self.placeCases.count >= 40)
    }

    static func render(_ entry: JournalEntry) -> String {
        let made = entry.madeFrom.map { " madeFrom " + $0.joined(separator: ",") } ?? ""
        switch entry.event {
        case let .done(_, seqs, reason):
            return "done \(reason.rawValue) " + seqs.map(String.init).joined(separator: ",")
        case let .seen(_, .version(version), _):
            return "seen \(version.changesetId)"
        case let .seen(_, .deleted(id, path), _):
            return "seen deleted \(id) \(path ?? "-")"
        case let .apply(op):
            return "apply \(op.fromPath ?? "-") → " + (op.result.map { "\($0.changesetId)@\($0.path)" } ?? "deleted")
        case let .local(kind, version, fromPath):
            return "\(kind.rawValue) \(version.changesetId)@\(version.path)" + (fromPath.map { " from \($0)" } ?? "")
                + made
        default:
            return "other"
        }
    }

    static func render(_ summary: ChangeSummary) -> String {
        "\(summary.kind.rawValue) \(summary.path)" + (summary.fromPath.map { " from \($0)" } ?? "")
    }
}
