import Testing

@testable import DocSyncKit

/// `RevertService.targets`: which documents a `docsync revert PATH…` puts back, decided from
/// the pending actions and the base alone.
@Suite struct RevertTargetsTests {
    static func v(_ refId: String, _ id: String, _ path: String) -> DocVersion {
        DocVersion(refId: refId, changesetId: id, hash: "h-" + id, path: path)
    }

    static let base: [String: DocVersion] = [
        "a": v("a", "a1", "a.json"), "b": v("b", "b1", "b.json"), "c": v("c", "c1", "c.json"),
        "d": v("d", "d1", "keep/d.json")
    ]

    /// An edit of a (twice), a creation in notes/, a deletion of b, a move of c into notes/;
    /// d unchanged.
    static let pending: [JournalEntry] = {
        var entries = [
            JournalEntry(.local(.update, version: v("a", "a2", "a.json"), fromPath: nil)),
            JournalEntry(.local(.create, version: v("n", "n1", "notes/n.json"), fromPath: nil)),
            JournalEntry(.local(.delete, version: v("b", "b1", "b.json"), fromPath: nil)),
            JournalEntry(.local(.rename, version: v("c", "c1", "notes/c.json"), fromPath: "c.json")),
            JournalEntry(.local(.update, version: v("a", "a3", "a.json"), fromPath: nil))
        ]
        for i in entries.indices { entries[i].seq = i + 1 }
        return entries
    }()

    static func targets(_ selecting: [String]) throws -> [String: RevertService.Target] {
        let list = try RevertService.targets(pending: pending, base: { base[$0] }, selecting: selecting)
        return Dictionary(uniqueKeysWithValues: list.map { ($0.refId, $0) })
    }

    @Test func everyDocumentWithLocalChangesWhenNoPathIsGiven() throws {
        let all = try Self.targets([])
        #expect(Set(all.keys) == ["a", "b", "c", "n"])
        #expect(all["a"]?.seqs == [1, 5] && all["a"]?.now?.changesetId == "a3" && all["a"]?.base?.changesetId == "a1")
        #expect(all["n"]?.base == nil && all["n"]?.operation.result == nil, "a creation is removed")
        #expect(all["b"]?.now == nil && all["b"]?.operation.result?.path == "b.json", "a deletion comes back")
        #expect(all["c"]?.operation.fromPath == "notes/c.json" && all["c"]?.operation.result?.path == "c.json")
        #expect(try Self.targets([""]).keys.sorted() == all.keys.sorted(), "the tree's root selects everything")
    }

    @Test func aPathSelectsByWhereTheDocumentIsNowOrWasSynced() throws {
        #expect(Set(try Self.targets(["notes"]).keys) == ["n", "c"], "a folder: what is in it now")
        #expect(Set(try Self.targets(["c.json"]).keys) == ["c"], "the synced path of a moved document")
        #expect(Set(try Self.targets(["b.json", "a.json"]).keys) == ["a", "b"])
    }

    @Test func aPathWithNoLocalChangeIsRefused() {
        #expect(throws: Workspace.Failure.self) { try Self.targets(["keep"]) }
        #expect(throws: Workspace.Failure.self) { try Self.targets(["a.json", "x.json"]) }
        #expect(throws: Workspace.Failure.self) { try Self.targets(["note"]) }
    }
}
