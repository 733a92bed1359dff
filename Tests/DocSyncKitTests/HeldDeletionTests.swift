import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// A remote deletion held aside while the local file is invalid outlives the remote's
/// tombstone: gc purges it once every replica pulled past it. A pull killed after it
/// moved the base then checks the base against the remote's whole state (the drive
/// layout's histories fork), where the document is gone. The hold says why; the document
/// must not be taken for one a lost fork dropped and sent again (found by the model check,
/// folder seed 764181589 step 227: the deleted document came back on the remote).
@Suite struct HeldDeletionTests {
    @Test func aHeldDeletionIsNotSentAgainAfterGCPurgedItsTombstone() throws {
        let set = ReplicaSet()
        let (a, b) = try set.twoReplicas(["x.json": "{\"v\": \"x-0\"}", "keep.json": "{\"v\": \"keep-0\"}"])
        let refId = try #require(Workspace.open(at: b, readOnly: true).state.base.values.first { $0.path == "x.json" })
            .refId
        set.write(b, "x.json", "{\"v\": ")  // saved half-way: not a document right now
        #expect(unlink(a + "/x.json") == 0)
        try set.sync(a)
        try set.sync(b)
        guard case .held(_, .deleted, _)? = try Workspace.open(at: b, readOnly: true).state.held[refId]?.event else {
            Issue.record("the deletion was not held aside")
            return
        }

        let gc = try Workspace.open(at: a, readOnly: false)
        _ = try gc.settings.set("gc.tombstoneMaxAgeDays", "0.000001")
        Thread.sleep(forTimeInterval: 0.1)
        let purged = try gc.gc.collect(dryRun: false).remote?.purged.count ?? 0
        gc.close()
        #expect(purged == 1, "gc purged \(purged) tombstones")

        // b reads the remote's new state once (gc compacted the history it was at), and
        // another edit arrives on the remote.
        try set.sync(b)
        set.write(a, "keep.json", "{\"v\": \"keep-1\"}")
        try set.sync(a)
        // What a pull killed after it moved the base leaves (`SyncSession.reconcileBaseAhead`).
        let killed = try Workspace.open(at: b, readOnly: false)
        killed.store.state.baseAheadOfCursor = true
        try killed.store.checkpoint()
        killed.close()
        try set.sync(b)

        let remote = try FolderRemoteFormat.open(set.remote).changes(since: nil).entries
        #expect(!remote.contains { $0.refId == refId && !$0.deleted }, "the deleted document is back on the remote")
        let held = try Workspace.open(at: b, readOnly: true).state.held[refId]
        #expect(held != nil, "the hold is gone: the deletion no longer waits for the fix")
        #expect(set.read(b, "x.json") == "{\"v\": ", "the invalid file was touched")
    }
}
