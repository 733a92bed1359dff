import CLibGit2
import Foundation
import GitShim
import Testing

@testable import DocSyncKit

/// A large commit's blobs go into one pack file of the cache repository, not one loose
/// file each; what comes out is checked by git itself (fsck, count-objects, clone).
@Suite struct GitPackWriterTests {
    let docs = ReplicaSet()  // for its file helpers

    @Test func aLargePushPacksItsBlobsAndGitReadsThemBack() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        let n = GitPackWriter.looseLimit + 50
        for i in 0..<n {
            docs.write(
                a, "group\(i % 7)/doc\(i).json", "{\"n\": \(i), \"text\": \"\(String(repeating: "x", count: i))\"}")
        }
        let report = try set.sync(a)
        #expect(report.pushed.count == n)
        let cache = a + "/.docsync/git"
        let counts = try gitObjectCounts(cache, home: set.home)
        #expect(counts["packs"] == 1, "\(counts)")
        #expect((counts["in-pack"] ?? 0) >= n, "every blob in the pack: \(counts)")
        // Loose: the trees (7 folders and the root) and the commit only.
        #expect((counts["count"] ?? .max) <= 9, "\(counts)")
        try git(["fsck", "--strict", "--no-dangling"], in: cache, home: set.home)
        try git(["fsck", "--strict", "--no-dangling"], in: set.repo, home: set.home)
        let plain = try set.plainClone()
        #expect(docs.snapshot(plain).filter { !$0.key.hasPrefix(".") } == docs.snapshot(a))

        // A small change stays loose, as git keeps a small fetch loose.
        for i in 0..<5 { docs.write(a, "group0/new\(i).json", "{\"new\": \(i)}") }
        try set.sync(a)
        let after = try gitObjectCounts(cache, home: set.home)
        #expect(after["packs"] == 1 && (after["count"] ?? 0) >= (counts["count"] ?? 0) + 5, "\(after)")
        let b = try set.make("b")
        try set.sync(b)
        #expect(docs.snapshot(b) == docs.snapshot(a))
    }

    @Test func theWriterSkipsWhatIsStoredOrRepeatedAndSpillsBigBatchesToDisk() throws {
        let folder = TempFolder("pack-writer")
        let home = folder.sub("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let repo = try GitRepository.openOrCreateBare(at: folder.sub("repo.git"))
        // One blob already stored loose: the pack must not hold it again.
        let stored = Array("{\"stored\": true}".utf8)
        var storedId = git_oid()
        try stored.withUnsafeBytes {
            try GitError.check(git_blob_create_from_buffer(&storedId, repo.pointer, $0.baseAddress, $0.count), "blob")
        }
        // Bigger than the spill threshold and poorly compressible: goes through the file.
        var generator = SeededGenerator(seed: 7)
        let big = (0..<(GitPackWriter.spillBytes + GitPackWriter.spillBytes / 2)).map { _ in
            UInt8.random(in: 0...255, using: &generator)
        }
        let contents: [[UInt8]] = [
            Array("{\"a\": 1}".utf8), [], big, Array("{\"a\": 1}".utf8), stored, Array("{\"b\": 2}".utf8)
        ]
        let writer = try GitPackWriter(repository: repo.pointer, folder: repo.path)
        let ids = try contents.map { try writer.add($0).hex }
        try writer.write()
        #expect(ids[0] == ids[3] && ids[4] == storedId.hex)
        for (id, content) in zip(ids, contents) { #expect(try repo.blob(id) == content) }
        let counts = try gitObjectCounts(repo.path, home: home)
        #expect(
            counts["packs"] == 1 && counts["in-pack"] == 4 && counts["count"] == 1,
            "4 new objects packed once each: \(counts)")
        try git(["fsck", "--strict"], in: repo.path, home: home)
        // git computes the same ids.
        let expected = try git(["hash-object", "--stdin"], in: folder.path, home: home, input: contents[5])
        #expect(expected.trimmingCharacters(in: .whitespacesAndNewlines) == ids[5])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: repo.path).filter { $0.hasPrefix("docsync-pack") }
                .isEmpty,
            "the temporary file is gone")
    }

    /// Mapped pack pages count in a run's memory: libgit2 maps packs in small windows.
    @Test func libgit2MapsPacksInSmallWindows() {
        _ = GitLibrary.initialised
        #expect(docsync_git_mwindow_size() == 4 << 20)
        #expect(docsync_git_mwindow_mapped_limit() == 16 << 20)
    }
}
