import Foundation
import Testing

@testable import DocSyncKit

/// Objects put in batches: the first few loose, the rest in one pack with an index that
/// makes them count. Checked by reading them back through a fresh store (a later run),
/// by what is on disk, and against damage and a killed writer.
@Suite struct ObjectPackTests {
    static func document(_ i: Int) -> [UInt8] {
        Array("{\"n\": \(i), \"pad\": \"\(String(repeating: "x", count: i % 50))\"}\n".utf8)
    }

    static func files(_ dir: String) -> (loose: Int, packs: [String], indexes: [String]) {
        let names = (try? FileSystem.listDirectory(dir)) ?? []
        let loose = names.filter { $0.count == 2 }.reduce(0) {
            $0 + ((try? FileSystem.listDirectory(dir + "/" + $1))?.count ?? 0)
        }
        let packed = (try? FileSystem.listDirectory(dir + "/packs")) ?? []
        return (loose, packed.filter { $0.hasSuffix(".pack") }, packed.filter { $0.hasSuffix(".idx") })
    }

    @Test func aLargeBatchGoesIntoOnePackReadableBeforeAndAfterTheFlush() throws {
        let dir = TempFolder("packs")
        let store = ObjectStore(root: dir.sub("objects"))
        var hashes: [String] = []
        for i in 0..<100 { hashes.append(try store.put(Self.document(i))) }
        #expect(hashes == (0..<100).map { ContentHash.of(Self.document($0)) })
        // Before the flush: readable in this process, not yet counted on disk.
        for (i, hash) in hashes.enumerated() { #expect(try store.get(hash) == Self.document(i)) }
        #expect(Self.files(dir.sub("objects")).indexes.isEmpty)
        try store.flush()
        let onDisk = Self.files(dir.sub("objects"))
        #expect(onDisk.loose == ObjectPacks.looseLimit)
        #expect(onDisk.packs.count == 1 && onDisk.indexes.count == 1)
        // A later run sees every object, checked against its hash.
        let later = ObjectStore(root: dir.sub("objects"))
        for (i, hash) in hashes.enumerated() {
            #expect(later.contains(hash))
            #expect(try later.get(hash) == Self.document(i))
        }
        #expect(!later.contains(ContentHash.of("absent")))
        #expect(throws: ObjectStore.Missing.self) { try later.get(ContentHash.of("absent")) }
        // Putting them again writes nothing new.
        for i in 0..<100 { try later.put(Self.document(i)) }
        try later.flush()
        let again = Self.files(dir.sub("objects"))
        #expect(again.loose == onDisk.loose && again.packs == onDisk.packs)
    }

    @Test func aSmallBatchStaysLooseAsBefore() throws {
        let dir = TempFolder("packs-small")
        let store = ObjectStore(root: dir.sub("objects"))
        for i in 0..<5 { try store.put(Self.document(i)) }
        try store.flush()
        for i in 5..<10 { try store.put(Self.document(i)) }
        try store.flush()
        let onDisk = Self.files(dir.sub("objects"))
        #expect(onDisk.loose == 10 && onDisk.packs.isEmpty, "each flush starts a new batch")
    }

    @Test func aPackWithoutItsIndexCountsForNothingAndGcRemovesIt() throws {
        let dir = TempFolder("packs-killed")
        let store = ObjectStore(root: dir.sub("objects"))
        for i in 0..<40 { try store.put(Self.document(i)) }
        try store.flush()
        let packs = dir.sub("objects/packs")
        let index = try #require(Self.files(dir.sub("objects")).indexes.first)
        // As if killed before the index was renamed into place.
        try FileSystem.removeFile(packs + "/" + index)
        let later = ObjectStore(root: dir.sub("objects"))
        #expect(!later.contains(ContentHash.of(Self.document(30))))
        #expect(later.contains(ContentHash.of(Self.document(3))), "the loose ones are still there")
        let swept = later.sweep(keeping: Set((0..<40).map { ContentHash.of(Self.document($0)) }), dryRun: false)
        #expect(swept.temporaryFiles == 1 && swept.removed == 0)
        #expect(Self.files(dir.sub("objects")).packs.isEmpty)
    }

    @Test func damageIsCaughtNotReturned() throws {
        let dir = TempFolder("packs-damage")
        let store = ObjectStore(root: dir.sub("objects"))
        for i in 0..<40 { try store.put(Self.document(i)) }
        try store.flush()
        let packs = dir.sub("objects/packs")
        let pack = packs + "/" + (try #require(Self.files(dir.sub("objects")).packs.first))
        let index = packs + "/" + (try #require(Self.files(dir.sub("objects")).indexes.first))
        let target = ContentHash.of(Self.document(35))
        // A flipped byte inside one object: that object is missing, the others are fine.
        var bytes = try FileSystem.readFile(pack)
        let needle = Self.document(35)
        let at = try #require(
            (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle })
        bytes[at + 3] ^= 0x20
        chmod(pack, 0o644)
        try FileSystem.writeAtomically(pack, bytes)
        let afterFlip = ObjectStore(root: dir.sub("objects"))
        #expect(throws: ObjectStore.Missing.self) { try afterFlip.get(target) }
        #expect(try afterFlip.get(ContentHash.of(Self.document(34))) == Self.document(34))
        // A flipped byte in the index: the whole pack is unreadable (not misread).
        var indexBytes = try FileSystem.readFile(index)
        indexBytes[40] ^= 1
        chmod(index, 0o644)
        try FileSystem.writeAtomically(index, indexBytes)
        #expect(throws: ObjectStore.Missing.self) {
            try ObjectStore(root: dir.sub("objects")).get(ContentHash.of(Self.document(34)))
        }
    }

    @Test func gcRewritesOnlyTheLiveObjects() throws {
        let dir = TempFolder("packs-gc")
        let store = ObjectStore(root: dir.sub("objects"))
        let hashes = try (0..<60).map { try store.put(Self.document($0)) }
        try store.flush()
        let keep = Set(hashes.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        let packed = Set(hashes[ObjectPacks.looseLimit...])
        let dry = ObjectStore(root: dir.sub("objects")).sweep(keeping: keep, dryRun: true)
        let before = Self.files(dir.sub("objects"))
        #expect(dry.removed == 30)
        #expect(Self.files(dir.sub("objects")).packs == before.packs, "a dry run changes nothing")

        let swept = ObjectStore(root: dir.sub("objects")).sweep(keeping: keep, dryRun: false)
        #expect(swept.removed == 30)
        #expect(
            swept.bytes
                == Int64(
                    hashes.enumerated().filter { $0.offset % 2 == 1 }.reduce(0) { $0 + Self.document($1.offset).count })
        )
        let after = Self.files(dir.sub("objects"))
        #expect(after.packs.count == 1 && after.packs != before.packs, "one new pack replaces the old")
        let later = ObjectStore(root: dir.sub("objects"))
        for (i, hash) in hashes.enumerated() {
            #expect(later.contains(hash) == keep.contains(hash), "object \(i)")
            if keep.contains(hash) { #expect(try later.get(hash) == Self.document(i)) }
        }
        #expect(packed.intersection(keep).count == 22)
        // Nothing more to do the second time.
        #expect(later.sweep(keeping: keep, dryRun: false).removed == 0)
    }

    /// A pull stores each version as it fetches it (the plan does not hold them all),
    /// in one pack flushed before the batch is journaled; a dry run stores nothing.
    @Test func aPullStoresWhatItFetchesAndADryRunStoresNothing() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        try set.sync(a)
        let b = try set.make("b")
        for i in 0..<40 { set.write(a, "doc\(i).json", "{\"n\": \(i)}") }
        try set.sync(a)
        let objects = b + "/.docsync/objects"
        let before = Self.files(objects)

        let ws = try Workspace.open(at: b, readOnly: false)
        let dry = try ws.sync.run(.pull, options: SyncOptions(dryRun: true))
        ws.close()
        #expect(dry.pulled.count == 40)
        let afterDryRun = Self.files(objects)
        #expect(
            afterDryRun.loose == before.loose && afterDryRun.packs == before.packs
                && afterDryRun.indexes == before.indexes)

        #expect(try set.sync(b, .pull).pulled.count == 40)
        let after = Self.files(objects)
        #expect(
            after.loose == before.loose + ObjectPacks.looseLimit && after.packs.count == before.packs.count + 1
                && after.indexes.count == before.indexes.count + 1, "\(after)")
        let pulled = set.snapshot(b)
        #expect(pulled.count == 40)
        let store = ObjectStore(root: objects)
        for (path, text) in pulled {
            #expect(try store.get(ContentHash.of(Array(text.utf8))) == Array(text.utf8), "\(path)")
        }
    }

    @Test func aFolderRemoteTakesABigPushAsOnePackAndServesEveryVersionFromIt() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        for i in 0..<40 { set.write(a, "d\(i % 4)/doc\(i).json", "{\"n\": \(i)}") }
        try set.sync(a)
        let remoteObjects = set.remote + "/.docsync/objects"
        let first = Self.files(remoteObjects)
        #expect(first.loose == ObjectPacks.looseLimit && first.packs.count == 1 && first.indexes.count == 1, "\(first)")
        // Edit every document, so the first versions live only in objects/ (the readable
        // copies now hold the second): a clone and the history still read them.
        let firstVersions = set.snapshot(a)
        for (path, text) in firstVersions {
            set.write(a, path, text.replacingOccurrences(of: "}", with: ", \"edited\": true}"))
        }
        #expect(try set.sync(a).pushed.count == 40)
        #expect(Self.files(remoteObjects).packs.count == 2)
        let b = try set.make("b")
        #expect(set.snapshot(b) == set.snapshot(a))
        let remote = FolderRemoteFormat.open(set.remote)
        for (path, text) in firstVersions {
            let refId = try #require(field(text, "refId"))
            let history = try remote.history(of: refId, path: path)
            let oldest = try #require(history.last, "\(path)")
            #expect(String(decoding: try remote.content(of: oldest, refId: refId), as: UTF8.self) == text, "\(path)")
        }
    }
}
