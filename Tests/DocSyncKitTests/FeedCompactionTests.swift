import Foundation
import Testing

@testable import DocSyncKit

/// The folder remote's feed compaction (`docsync gc`): cursors from before it read a
/// snapshot, cursors after it carry on incrementally, pushers from before it are told the
/// remote moved, and a reader that read the old `generation` still finds its feed.
@Suite struct FeedCompactionTests {
    let me = ReplicaInfo(replicaId: "aaaa", name: "test")
    let everything = TombstoneRule(maxAgeDays: 1e-9)

    func put(_ refId: String, _ path: String, _ text: String, previous: DocVersion? = nil) -> RemoteWrite {
        let bytes = Array(text.utf8)
        return RemoteWrite(
            refId: refId,
            new: DocVersion(
                refId: refId, changesetId: "000000000001-0000-aaaa", hash: ContentHash.of(bytes), path: path),
            previous: previous, content: bytes)
    }

    func makeRemote() throws -> (TempFolder, DirectoryRemote) {
        let folder = TempFolder("remote")
        try DirectoryRemote.create(at: folder.sub("r"))
        return (folder, DirectoryRemote(url: folder.sub("r"), lockStaleSeconds: 600, lockWaitSeconds: 0.2))
    }

    @Test func oldCursorsReadASnapshotAndNewOnesCarryOn() throws {
        let (folder, remote) = try makeRemote()
        let start = try remote.changes(since: nil).cursor
        let c1 = try remote.commit(
            [put("r1", "a.json", "{\"v\":1}"), put("r2", "b.json", "{\"v\":2}")], expecting: start, replica: me)
        let r2 = try remote.changes(since: start).entries.first { $0.refId == "r2" }!.version!
        let c2 = try remote.commit(
            [RemoteWrite(refId: "r2", new: nil, previous: r2, content: nil)], expecting: c1, replica: me)
        Thread.sleep(forTimeInterval: 0.01)
        let purge = try remote.purgeTombstones(everything, dryRun: false, replica: me)
        #expect(purge.purged.map(\.refId) == ["r2"])
        #expect(purge.cursorBefore == c2)
        let after = try #require(purge.cursorAfter)
        #expect(
            String(decoding: try FileSystem.readFile(folder.sub("r/.docsync/generation")), as: UTF8.self).split(
                separator: " "
            ).count == 3)
        #expect(!FileSystem.exists(folder.sub("r/.docsync/tombstones/r2.json")))

        // From before the compaction: the whole state, marked as a snapshot (r2 is simply gone).
        let old = try remote.changes(since: c1)
        #expect(old.isSnapshot)
        #expect(old.entries.map(\.refId) == ["r1"])
        #expect(old.cursor == after)
        // It still says who deleted r2, so an edit that brings r2 back can tell them.
        #expect(old.purgedDeleters == ["r2": "aaaa"])
        #expect(try remote.changes(since: nil).purgedDeleters.isEmpty, "only a snapshot read names purged deleters")
        // From after it: nothing new, then only what changed.
        #expect(try remote.changes(since: after).entries.isEmpty)
        let c3 = try remote.commit([put("r3", "c.json", "{}")], expecting: after, replica: me)
        let new = try remote.changes(since: after)
        #expect(!new.isSnapshot && new.entries.map(\.refId) == ["r3"])
        #expect(try remote.changes(since: c3).entries.isEmpty)
        // A pusher still at a pre-compaction cursor is told the remote moved.
        #expect(throws: RemoteError.self) { try remote.commit([put("r4", "d.json", "{}")], expecting: c2, replica: me) }
        #expect(remote.verify() == [])
    }

    @Test func aPurgedDeletionLineGoesOnceTheDocumentComesBack() throws {
        let (folder, remote) = try makeRemote()
        let start = try remote.changes(since: nil).cursor
        let c1 = try remote.commit([put("r1", "a.json", "{\"v\":1}")], expecting: start, replica: me)
        let v1 = try remote.changes(since: start).entries[0].version!
        _ = try remote.commit(
            [RemoteWrite(refId: "r1", new: nil, previous: v1, content: nil)], expecting: c1, replica: me)
        Thread.sleep(forTimeInterval: 0.01)
        let first = try remote.purgeTombstones(everything, dryRun: false, replica: me)
        #expect(first.purged.map(\.refId) == ["r1"])
        func feedText() throws -> String {
            let generation = String(
                decoding: try FileSystem.readFile(folder.sub("r/.docsync/generation")), as: UTF8.self)
            let epoch = generation.split(whereSeparator: { $0 == " " || $0 == "\n" }).last!
            return String(decoding: try FileSystem.readFile(folder.sub("r/.docsync/feed-\(epoch)")), as: UTF8.self)
        }
        #expect(try feedText().contains("\"refId\":\"purged:r1\""))
        // A later compaction keeps the line while r1 stays deleted (nothing else to purge: no change)…
        // …and drops it once r1 came back (an edit pushed it again) and another tombstone is purged.
        var c = try remote.changes(since: nil).cursor
        c = try remote.commit([put("r1", "a.json", "{\"v\":2}"), put("r2", "b.json", "{}")], expecting: c, replica: me)
        let v2 = try remote.changes(since: nil).entries.first { $0.refId == "r2" }!.version!
        _ = try remote.commit(
            [RemoteWrite(refId: "r2", new: nil, previous: v2, content: nil)], expecting: c, replica: me)
        Thread.sleep(forTimeInterval: 0.01)
        let second = try remote.purgeTombstones(everything, dryRun: false, replica: me)
        #expect(second.purged.map(\.refId) == ["r2"])
        let text = try feedText()
        #expect(!text.contains("purged:r1") && text.contains("purged:r2"), "\(text)")
        #expect(remote.verify() == [])
    }

    @Test func aReaderOfTheOldGenerationStillFindsItsFeed() throws {
        let (folder, remote) = try makeRemote()
        var cursor = try remote.changes(since: nil).cursor
        var versions: [DocVersion] = []
        for i in 0..<3 {
            cursor = try remote.commit([put("r\(i)", "d\(i).json", "{}")], expecting: cursor, replica: me)
            versions.append(try remote.changes(since: nil).entries.first { $0.refId == "r\(i)" }!.version!)
        }
        cursor = try remote.commit(
            [RemoteWrite(refId: "r0", new: nil, previous: versions[0], content: nil)], expecting: cursor, replica: me)
        let oldGeneration = try FileSystem.readFile(folder.sub("r/.docsync/generation"))
        Thread.sleep(forTimeInterval: 0.01)
        _ = try remote.purgeTombstones(everything, dryRun: false, replica: me)
        // The feed the old generation names is still there, with the bytes it counted.
        #expect(String(decoding: oldGeneration, as: UTF8.self).split(separator: " ").count == 2)
        #expect(FileSystem.exists(folder.sub("r/.docsync/feed")))
        // A second compaction removes feeds before the previous one.
        var c = try remote.changes(since: nil).cursor
        c = try remote.commit(
            [RemoteWrite(refId: "r1", new: nil, previous: versions[1], content: nil)], expecting: c, replica: me)
        Thread.sleep(forTimeInterval: 0.01)
        let second = try remote.purgeTombstones(everything, dryRun: false, replica: me)
        #expect(second.purged.map(\.refId) == ["r1"])
        #expect(!FileSystem.exists(folder.sub("r/.docsync/feed")))
        let names = try FileSystem.listDirectory(folder.sub("r/.docsync")).filter { $0.hasPrefix("feed") }.sorted()
        #expect(names.count == 2, "\(names)")
        #expect(try remote.changes(since: nil).entries.map(\.refId) == ["r2"])
        #expect(remote.verify() == [])
    }

    @Test func tombstonesWaitForEveryKnownReplica() throws {
        let (folder, remote) = try makeRemote()
        defer { withExtendedLifetime(folder) {} }
        let other = ReplicaInfo(replicaId: "bbbb", name: "other")
        let start = try remote.changes(since: nil).cursor
        let c1 = try remote.commit([put("r1", "a.json", "{}")], expecting: start, replica: me)
        try remote.noteReplica(other, seen: c1)
        let v = try remote.changes(since: nil).entries[0].version!
        let c2 = try remote.commit(
            [RemoteWrite(refId: "r1", new: nil, previous: v, content: nil)], expecting: c1, replica: me)
        let young = TombstoneRule(maxAgeDays: 90)
        #expect(try remote.purgeTombstones(young, dryRun: false, replica: me).purged.isEmpty)
        try remote.noteReplica(other, seen: c2)
        let purge = try remote.purgeTombstones(young, dryRun: false, replica: me)
        #expect(purge.purged.map(\.reason) == ["seen by every replica"])
        #expect(purge.replicas == ["aaaa", "bbbb"])
    }
}
