import DocSyncJSON
import Testing

@testable import DocSyncKit

/// `DocumentPlanner`'s pure steps for one document — decide (and what it reads), settle,
/// losses — against tables of expected outcomes written from the rules in docs/SYNC.md
/// ("Conflicts", "Merge policies", "Deletions") and the doc comments, not from the code.
/// Real JSON bytes, real changeset ids; no remote, no files.
@Suite struct DocumentPlannerTableTests {
    static let early = ChangesetID(wallMillis: 1_000, counter: 0, replica: "aaaaaaaaaaaa").description
    static let mid = ChangesetID(wallMillis: 2_000, counter: 0, replica: "bbbbbbbbbbbb").description
    static let late = ChangesetID(wallMillis: 3_000, counter: 0, replica: "cccccccccccc").description
    static let mergeId = ChangesetID(wallMillis: 4_000, counter: 0, replica: "dddddddddddd").description

    static func v(_ cs: String, _ hash: String, _ path: String = "a.json") -> DocVersion {
        DocVersion(refId: "r", changesetId: cs, hash: hash, path: path)
    }
    static func entry(_ version: DocVersion?, changesetId: String = late, hash: String? = nil) -> RemoteEntry {
        RemoteEntry(
            refId: "r", changesetId: version?.changesetId ?? changesetId, hash: version?.hash ?? hash,
            path: version?.path ?? "a.json", deleted: version == nil, replica: "cccccccccccc", time: 3_000)
    }

    // MARK: decide, and what settling the decision reads

    struct DecideCase: CustomTestStringConvertible, Sendable {
        var name: String
        var base: DocVersion?
        var local: DocVersion?
        var remote: DocVersion?
        var deletedHash: String? = nil
        var unreadable = false
        // Expected:
        var decided = true
        var holdsAside = false
        var reads: ContentReads = []
        var deletesAnother = false
        var testDescription: String { name }
    }

    static let b = v(early, "h0")
    static let decideCases: [DecideCase] = [
        DecideCase(name: "the remote brings the base again: nothing", base: b, local: b, remote: b, decided: false),
        DecideCase(
            name: "changed on the remote only: reads the remote version", base: b, local: b, remote: v(late, "h2"),
            reads: .remote),
        DecideCase(
            name: "a new document from the remote: reads it", base: nil, local: nil, remote: v(late, "h2"),
            reads: .remote),
        DecideCase(
            name: "renamed on the remote only: reads the remote version (the file is rewritten there)", base: b,
            local: b, remote: v(early, "h0", "b.json"), reads: .remote),
        DecideCase(
            name: "changed on both sides: reads remote, local and base", base: b, local: v(mid, "h1"),
            remote: v(late, "h2"), reads: [.remote, .local, .base]),
        DecideCase(
            name: "changed here only: the remote brings nothing new", base: b, local: v(mid, "h1"), remote: b,
            decided: false),
        DecideCase(
            name: "deleted on the remote, unchanged here: reads nothing", base: b, local: b, remote: nil,
            deletedHash: "h0", reads: []),
        DecideCase(
            name: "deleted on the remote, edited here: the deleted base is kept", base: b, local: v(mid, "h1"),
            remote: nil, deletedHash: "h0", reads: .base),
        DecideCase(
            name: "a later version deleted on the remote, edited here: that version is read", base: b,
            local: v(mid, "h1"), remote: nil, deletedHash: "h5", reads: .deleted, deletesAnother: true),
        DecideCase(
            name: "deleted here, edited on the remote: reads the remote edit and the base", base: b, local: nil,
            remote: v(late, "h2"), reads: [.remote, .base]),
        DecideCase(
            name: "the local file is invalid: the remote version waits, nothing read now", base: b, local: b,
            remote: v(late, "h2"), unreadable: true, holdsAside: true, reads: []),
        DecideCase(
            name: "invalid file but nothing new: no hold", base: b, local: b, remote: b, unreadable: true,
            decided: false),
        DecideCase(
            name: "renamed differently on both sides: reads the side whose name lost (local)", base: b,
            local: v(early, "h0", "mine.json"), remote: v(late, "h0", "theirs.json"), reads: [.remote, .local])
    ]

    @Test(arguments: decideCases)
    func decide(_ c: DecideCase) {
        let plan = DocumentPlanner.decide(
            DocumentInputs(
                entry: Self.entry(c.remote, hash: c.deletedHash), base: c.base, local: c.local,
                localIsUnreadable: c.unreadable))
        #expect((plan.decision != nil) == c.decided)
        #expect(plan.holdsAside == c.holdsAside)
        #expect(plan.reads == c.reads, "reads \(plan.reads.rawValue), expected \(c.reads.rawValue)")
        if c.remote == nil { #expect(plan.deletesAnotherVersion == c.deletesAnother) }
    }

    // MARK: settle: content changed on both sides

    struct SettleCase: CustomTestStringConvertible, Sendable {
        var name: String
        var config: [String: String] = [:]
        var base: String
        var local: String
        var remote: String
        var localIsLater = false
        // Expected:
        var contentFrom: Reconciler.Side?  // nil: a merge of both
        var loser: Reconciler.Side?
        var fields: [String] = []
        var notice: DocumentNotice?
        var settledByPolicy = true
        var testDescription: String { name }
    }

    static let settleCases: [SettleCase] = [
        SettleCase(
            name: "the same edit on both sides (ids apart): the remote's, no conflict",
            base: #"{"a":1}"#, local: #"{"a":2,"changesetId":"x"}"#, remote: #"{"a":2,"changesetId":"y"}"#,
            contentFrom: .remote, loser: nil, notice: nil, settledByPolicy: false),
        SettleCase(
            name: "the same addition to a counter on both sides: two additions (merged)",
            config: ["merge.counters": "n"], base: #"{"n":1}"#, local: #"{"n":2,"changesetId":"x"}"#,
            remote: #"{"n":2,"changesetId":"y"}"#,
            contentFrom: nil, loser: nil, notice: .merged(collisions: [], loser: nil)),
        SettleCase(
            name: "the same edit under lww, counters or not: the remote's, no conflict",
            config: ["merge.policy": "lww", "merge.counters": "n"], base: #"{"n":1}"#,
            local: #"{"n":2,"changesetId":"x"}"#, remote: #"{"n":2,"changesetId":"y"}"#, contentFrom: .remote,
            loser: nil, settledByPolicy: false),
        SettleCase(
            name: "different fields: merged field by field, nothing lost",
            base: #"{"a":1,"b":1}"#, local: #"{"a":2,"b":1}"#, remote: #"{"a":1,"b":2}"#,
            contentFrom: nil, loser: nil, notice: .merged(collisions: [], loser: nil)),
        SettleCase(
            name: "one field, remote later: the remote value, the local version lost",
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#,
            contentFrom: .remote, loser: .local, fields: ["a"],
            notice: .merged(collisions: [.init(path: "a", taken: .remote)], loser: .local)),
        SettleCase(
            name: "one field, local later: the local value, the remote version lost",
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#, localIsLater: true,
            contentFrom: .local, loser: .remote, fields: ["a"],
            notice: .merged(collisions: [.init(path: "a", taken: .local)], loser: .remote)),
        SettleCase(
            name: "a collision beside a clean change: merged bytes, the earlier side lost",
            base: #"{"a":1,"b":1}"#, local: #"{"a":2,"b":5}"#, remote: #"{"a":3,"b":1}"#,
            contentFrom: nil, loser: .local, fields: ["a"],
            notice: .merged(collisions: [.init(path: "a", taken: .remote)], loser: .local)),
        SettleCase(
            name: "lww: the later whole document", config: ["merge.policy": "lww"],
            base: #"{"a":1,"b":1}"#, local: #"{"a":2,"b":1}"#, remote: #"{"a":1,"b":2}"#, localIsLater: true,
            contentFrom: .local, loser: .remote, notice: .keptWhole(.local, because: .policy(.lww))),
        SettleCase(
            name: "policy local: the local document even when earlier", config: ["merge.policy": "local"],
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#,
            contentFrom: .local, loser: .remote, notice: .keptWhole(.local, because: .policy(.local))),
        SettleCase(
            name: "policy remote: the remote document even when earlier", config: ["merge.policy": "remote"],
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#, localIsLater: true,
            contentFrom: .remote, loser: .local, notice: .keptWhole(.remote, because: .policy(.remote))),
        SettleCase(
            name: "policy manual: the remote in place, the local aside", config: ["merge.policy": "manual"],
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#, localIsLater: true,
            contentFrom: .remote, loser: .local, notice: .keptWhole(.remote, because: .policy(.manual))),
        SettleCase(
            name: "a per-path policy applies to the document's path", config: ["merge.policyFor.*.json": "local"],
            base: #"{"a":1}"#, local: #"{"a":2}"#, remote: #"{"a":3}"#,
            contentFrom: .local, loser: .remote, notice: .keptWhole(.local, because: .policy(.local)))
    ]

    @Test(arguments: settleCases)
    func settle(_ c: SettleCase) throws {
        let (localId, remoteId) = c.localIsLater ? (Self.late, Self.mid) : (Self.mid, Self.late)
        let bytes = (base: Array(c.base.utf8), local: Array(c.local.utf8), remote: Array(c.remote.utf8))
        let base = Self.v(Self.early, ContentHash.of(bytes.base))
        let local = Self.v(localId, ContentHash.of(bytes.local))
        let remote = Self.v(remoteId, ContentHash.of(bytes.remote))
        let decision = try #require(Reconciler.decide(base: base, local: local, remote: remote))
        #expect(decision.loser != nil, "the table's versions must change on both sides")
        let settled = DocumentPlanner.settle(
            decision, remote: remote, start: .init(base: base, local: local),
            content: DocumentContent(remote: bytes.remote, local: bytes.local, base: bytes.base),
            settings: .init(config: Config(values: c.config), replicaId: "aaaaaaaaaaaa"), newChangesetId: Self.mergeId)
        let result = try #require(settled.decision.result)
        switch c.contentFrom {
        case .local?: #expect(result == local && settled.mergedBytes == nil)
        case .remote?: #expect(result == remote && settled.mergedBytes == nil)
        case nil:
            let merged = try #require(settled.mergedBytes, "a merge of both sides has its own bytes")
            #expect(result.changesetId == Self.mergeId && result.hash == ContentHash.of(merged))
            #expect(String(decoding: merged, as: UTF8.self).contains(Self.mergeId), "the merge is stamped")
        }
        #expect(settled.decision.loser?.side == c.loser)
        if let loser = c.loser { #expect(settled.decision.loser?.version == (loser == .local ? local : remote)) }
        #expect((settled.settled?.fields ?? []) == c.fields)
        #expect((settled.settled != nil) == c.settledByPolicy)
        #expect(settled.decision.notice == c.notice)
    }

    // MARK: losses: what is kept with each conflict record

    @Test func aLostVersionIsKeptWithItsBytesAndTheFieldsItDiffersIn() throws {
        let local = Self.v(Self.mid, "hl"), remote = Self.v(Self.late, "hr")
        let decision = try #require(Reconciler.decide(base: Self.b, local: local, remote: remote))
        let plan = DocumentPlan(start: .init(base: Self.b, local: local), decision: decision)
        let content = DocumentContent(remote: Array(#"{"a":3}"#.utf8), local: Array(#"{"a":2,"b":1}"#.utf8))
        // Not settled by a policy (no fields known): the fields come from comparing the two.
        let losses = DocumentPlanner.losses(
            of: SettledContent(decision: decision), plan: plan, entry: Self.entry(remote), content: content,
            winnerBytes: content.remote, replicaId: "aaaaaaaaaaaa", time: 7)
        let loss = try #require(losses.first)
        #expect(losses.count == 1)
        #expect(loss.record.changesetId == Self.mid && loss.record.side == .local && loss.record.winner == Self.late)
        #expect(loss.record.lostBy == "bbbbbbbbbbbb" && loss.record.replica == "aaaaaaaaaaaa" && loss.record.time == 7)
        #expect(loss.bytes == content.local)
        #expect(Set(loss.record.fields ?? []) == ["a", "b"])
        #expect(loss.summary.kept == .remote && loss.summary.stored == .version(of: .local))
        #expect(loss.entry.refId == "r")
    }

    @Test func aMergedOutcomeNamesOnlyTheCollidedFields() throws {
        let local = Self.v(Self.late, "hl"), remote = Self.v(Self.mid, "hr")
        var decision = try #require(Reconciler.decide(base: Self.b, local: local, remote: remote))
        decision.result = Self.v(Self.mergeId, "hm")
        let settled = SettledContent(decision: decision, settled: (.merge, ["x"], true))
        let losses = DocumentPlanner.losses(
            of: settled, plan: DocumentPlan(start: .init(base: Self.b, local: local), decision: decision),
            entry: Self.entry(remote), content: DocumentContent(remote: Array("{}".utf8), local: Array("{}".utf8)),
            winnerBytes: nil, replicaId: "aaaaaaaaaaaa", time: 7)
        let loss = try #require(losses.first)
        #expect(loss.record.kind == .version(policy: .merge, fields: ["x"]))
        #expect(loss.summary.kept == .merged && loss.record.side == .remote && loss.bytes == Array("{}".utf8))
    }

    struct DeletionCase: CustomTestStringConvertible, Sendable {
        var name: String
        var localDeleted: Bool
        var deletedHash: String?
        var deletedBytes: [UInt8]?
        // Expected:
        var bytes: [UInt8]?
        var reasonSaysGone = false
        var testDescription: String { name }
    }

    static let baseBytes = Array(#"{"v":0}"#.utf8)
    static let laterBytes = Array(#"{"v":5}"#.utf8)
    static let deletionCases: [DeletionCase] = [
        DeletionCase(
            name: "deleted here, edited there: the base is kept", localDeleted: true, deletedHash: nil,
            bytes: baseBytes),
        DeletionCase(
            name: "the base deleted there, edited here: the base is kept", localDeleted: false, deletedHash: "h0",
            bytes: baseBytes),
        DeletionCase(
            name: "a later version deleted there: that version is kept", localDeleted: false, deletedHash: "h5",
            deletedBytes: laterBytes, bytes: laterBytes),
        DeletionCase(
            name: "a later version deleted there and gone from the remote: nothing kept, and said",
            localDeleted: false, deletedHash: "h5", deletedBytes: nil, bytes: nil, reasonSaysGone: true)
    ]

    @Test(arguments: deletionCases)
    func lostDeletion(_ c: DeletionCase) throws {
        let edit = Self.v(Self.mid, "h1")
        let remote: DocVersion? = c.localDeleted ? Self.v(Self.late, "h2") : nil
        let entry = Self.entry(remote, hash: c.deletedHash)
        let plan = DocumentPlanner.decide(
            DocumentInputs(entry: entry, base: Self.b, local: c.localDeleted ? nil : edit))
        let decision = try #require(plan.decision)
        let losses = DocumentPlanner.losses(
            of: SettledContent(decision: decision), plan: plan, entry: entry,
            content: DocumentContent(base: Self.baseBytes, deleted: c.deletedBytes), winnerBytes: nil,
            replicaId: "aaaaaaaaaaaa", time: 7)
        let loss = try #require(losses.first)
        #expect(losses.count == 1)
        #expect(loss.record.kind == .deletion && loss.record.side == (c.localDeleted ? .local : .remote))
        #expect(loss.record.lostBy == (c.localDeleted ? "aaaaaaaaaaaa" : "cccccccccccc"))
        #expect(loss.record.changesetId == (c.localDeleted ? Self.early : Self.late))
        #expect(loss.bytes == c.bytes)
        #expect((loss.record.reason?.contains("no longer on the remote") ?? false) == c.reasonSaysGone)
        #expect(loss.summary.stored == .deletion(of: c.localDeleted ? .local : .remote))
    }

    @Test(arguments: [true, false])
    func aLostRenameKeepsTheContentThatCarriedTheName(localRenameLoses: Bool) throws {
        // Renamed on both sides, the other side also edited it; the remote renamed at 3,000 ms.
        let mine = Self.v(Self.early, "h0", "mine.json"), theirs = Self.v(Self.mid, "h7", "theirs.json")
        let entry = Self.entry(theirs)
        let plan = DocumentPlanner.decide(
            DocumentInputs(
                entry: entry, base: Self.b, local: mine, localMovedAt: localRenameLoses ? 100 : 9_000))
        let decision = try #require(plan.decision)
        let lost = try #require(decision.renameLoser)
        #expect(lost.side == (localRenameLoses ? .local : .remote))
        let content = DocumentContent(remote: Self.laterBytes, local: Self.baseBytes)
        let losses = DocumentPlanner.losses(
            of: SettledContent(decision: decision), plan: plan, entry: entry, content: content, winnerBytes: nil,
            replicaId: "aaaaaaaaaaaa", time: 7)
        let loss = try #require(losses.first)
        #expect(losses.count == 1 && loss.record.kind == .rename)
        #expect(loss.record.path == (localRenameLoses ? "mine.json" : "theirs.json"))
        #expect(loss.bytes == (localRenameLoses ? Self.baseBytes : Self.laterBytes))
        #expect(plan.reads.contains(localRenameLoses ? .local : .remote))
    }
}
