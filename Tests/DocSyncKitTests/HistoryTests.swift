import Foundation
import Testing

@testable import DocSyncKit

@Suite struct HistoryTests {
    let files = ReplicaSet()

    /// Three versions of one document, then the first one restored as a new edit.
    func exercise(make: (String) throws -> String, sync: (String) throws -> Void) throws {
        let a = try make("a")
        files.write(a, "h.json", "{\"v\": 1}")
        try sync(a)
        for v in 2...3 {
            files.write(
                a, "h.json", files.read(a, "h.json")!.replacingOccurrences(of: "\"v\": \(v - 1)", with: "\"v\": \(v)"))
            try sync(a)
        }
        let ws = try Workspace.open(at: a, readOnly: false)
        let history = try ws.history.document("h.json", relativeTo: a)
        #expect(history.remoteError == nil)
        #expect(history.remote.count == 3)
        #expect(history.local.filter { $0.entry.isLocalAction }.count == 3)
        let first = try #require(history.remote.last)
        let report = try ws.history.restore(
            "h.json", relativeTo: a, at: String(first.changesetId.prefix(20)), dryRun: false)
        ws.close()
        #expect(report.pendingAfter == 1)
        let restored = try #require(files.read(a, "h.json"))
        #expect(field(restored, "v") == "1")
        #expect(field(restored, "changesetId") != first.changesetId)
        #expect(changesetOrder(history.remote.first!.changesetId, field(restored, "changesetId")!))
        try sync(a)
        let b = try make("b")
        try sync(b)
        #expect(field(files.read(b, "h.json"), "v") == "1")
    }

    @Test func restoreFromADirectoryRemote() throws {
        try exercise(make: { try files.make($0) }, sync: { try files.sync($0) })
    }

    @Test func restoreFromAGitRemote() throws {
        let set = try GitReplicaSet()
        try exercise(make: { try set.make($0) }, sync: { try set.sync($0) })
    }

    @Test func restoreWithoutVersionUndoesLocalEditsButKeepsThemInTheJournal() throws {
        let a = try files.make("a")
        files.write(a, "u.json", "{\"v\": \"synced\"}")
        try files.sync(a)
        files.write(a, "u.json", files.read(a, "u.json")!.replacingOccurrences(of: "synced", with: "local edit"))
        let ws = try Workspace.open(at: a, readOnly: false)
        _ = try ws.history.restore("u.json", relativeTo: a, at: nil, dryRun: false)
        let log = try ws.history.log()
        ws.close()
        #expect(field(files.read(a, "u.json"), "v") == "synced")
        // The edit that was undone is still in the journal and the object store.
        let undone = try #require(log.first { $0.entry.kind == .update })
        let objects = ObjectStore(root: a + "/.docsync/objects")
        #expect(field(String(decoding: try objects.get(undone.entry.hash!), as: UTF8.self), "v") == "local edit")
    }
}
