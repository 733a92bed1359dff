import Foundation
import Testing

@testable import DocSyncKit

/// `docsync gc` puts a git remote's cache repository into one pack: every fetch over a
/// network (and every large fetch or push) adds a pack, small ones from a local path
/// loose objects, and a tree synced from cron gathered them without end.
/// Checked with git itself (count-objects, fsck) and by syncing and reading history after.
@Suite struct GitCacheRepackTests {
    let docs = ReplicaSet()  // for its file helpers

    private func gc(_ dir: String, dryRun: Bool = false, localOnly: Bool = false) throws -> GCReport {
        let ws = try Workspace.open(at: dir, readOnly: dryRun)
        defer { ws.close() }
        return try ws.gc.collect(dryRun: dryRun, localOnly: localOnly)
    }

    @Test func gcPacksTheCacheIntoOnePackAndEverythingStillReadsBack() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        docs.write(a, "doc.json", "{\"v\": 0}")
        try set.sync(a)
        let b = try set.make("b")
        try set.sync(b)
        // Each round: a pushes an edit, b fetches it and pushes one of its own, all loose
        // (fewer than 100 objects from a local path, as git keeps a small fetch loose).
        for round in 1...4 {
            docs.write(
                a, "doc.json",
                docs.read(a, "doc.json")!.replacingOccurrences(of: "\"v\": \(round - 1)", with: "\"v\": \(round)"))
            try set.sync(a)
            docs.write(b, "b\(round).json", "{\"round\": \(round)}")
            try set.sync(b)
        }
        let cache = b + "/.docsync/git"
        let before = try gitObjectCounts(cache, home: set.home)
        #expect((before["count"] ?? 0) > 0, "\(before)")

        let dry = try gc(b, dryRun: true)
        #expect(
            dry.gitCache
                == GitCacheRepack(packsBefore: before["packs"]!, looseObjectsBefore: before["count"]!, objectsPacked: 0)
        )
        #expect(try gitObjectCounts(cache, home: set.home) == before, "a dry run changes nothing")

        let report = try gc(b, localOnly: true)
        let after = try gitObjectCounts(cache, home: set.home)
        #expect(after["packs"] == 1 && after["count"] == 0, "\(after)")
        #expect(
            report.gitCache?.packsBefore == before["packs"]
                && (report.gitCache?.objectsPacked ?? 0) >= after["in-pack"]!, "\(String(describing: report.gitCache))")
        try git(["fsck", "--strict", "--no-dangling"], in: cache, home: set.home)

        // The history is all still there, and syncing goes on from the repacked cache.
        let ws = try Workspace.open(at: b, readOnly: true)
        let history = try ws.history.document("doc.json", relativeTo: b)
        ws.close()
        #expect(
            history.remoteError == nil && history.remote.count == 5,
            "\(history.remote.count) versions, \(String(describing: history.remoteError))")
        docs.write(a, "doc.json", docs.read(a, "doc.json")!.replacingOccurrences(of: "\"v\": 4", with: "\"v\": 5"))
        try set.sync(a)
        try set.sync(b)
        #expect(docs.read(b, "doc.json")?.contains("\"v\": 5") == true)
        docs.write(b, "late.json", "{\"late\": true}")
        try set.sync(b)
        try set.sync(a)
        #expect(docs.snapshot(a) == docs.snapshot(b))
        // Since then: b fetched once and pushed once (loose). A second gc packs them again.
        let again = try gc(b, localOnly: true)
        #expect(
            again.gitCache.map { $0.packsBefore == 1 && $0.looseObjectsBefore > 0 } == true,
            "\(String(describing: again.gitCache))")
        let last = try gitObjectCounts(cache, home: set.home)
        #expect(last["packs"] == 1 && last["count"] == 0, "\(last)")
        try git(["fsck", "--strict", "--no-dangling"], in: cache, home: set.home)
        // With one pack and nothing loose there is nothing to do.
        #expect(
            try gc(b, localOnly: true).gitCache
                == GitCacheRepack(packsBefore: 1, looseObjectsBefore: 0, objectsPacked: 0))
    }

    @Test func aFolderRemoteHasNoCacheToRepack() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "x.json", "{\"v\": 1}")
        try set.sync(a)
        #expect(try gc(a).gitCache == nil)
    }
}
