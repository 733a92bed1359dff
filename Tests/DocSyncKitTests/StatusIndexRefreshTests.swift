import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// `status` keeps what it read in the index (as `git status` refreshes git's index), so
/// files a push just stamped are read once after it, not by every `status` until the next
/// sync; and it never saves over another run's index.
@Suite struct StatusIndexRefreshTests {
    /// A tree of three documents just pushed: every entry in its index is racy (docsync
    /// wrote the files within the racy window), then the files are aged an hour, so that a
    /// read from now on is past the window.
    private func pushedTree() throws -> (ReplicaSet, String, TreeLayout) {
        let set = ReplicaSet()
        let a = try set.make("a")
        for name in ["one", "two", "sub/three"] { set.write(a, "\(name).json", "{\"name\": \"\(name)\"}") }
        try set.sync(a)
        let layout = TreeLayout(root: a)
        #expect(StatCache.load(from: layout.index).entries.values.filter(\.racy).count == 3, "stamped files start racy")
        for file in TreeWalker(root: a, ignore: IgnoreRules(text: "")).walk().files {
            age(a + "/" + file.path, seconds: 3600)
        }
        return (set, a, layout)
    }

    private func age(_ path: String, seconds: Int) {
        let then = timespec(tv_sec: time(nil) - seconds, tv_nsec: 0)
        var times = [then, then]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    /// Whether the saved index would let the next run skip every file (none read again).
    private func indexCoversEveryFile(_ root: String, _ layout: TreeLayout) throws -> Bool {
        let index = StatCache.load(from: layout.index)
        let files = TreeWalker(root: root, ignore: IgnoreRules(text: "")).walk().files
        return !files.isEmpty && files.allSatisfy { index[$0.path]?.matches($0.stat) == true }
    }

    private func status(_ root: String) throws -> StatusReport {
        let workspace = try Workspace.open(at: root, readOnly: true)
        defer { workspace.close() }
        return try workspace.sync.status()
    }

    @Test func aStatusSavesWhatItReadSoTheNextRunReadsNothing() throws {
        let (set, a, layout) = try pushedTree()
        defer { withExtendedLifetime(set) {} }
        #expect(try !indexCoversEveryFile(a, layout))
        let report = try status(a)
        #expect(report.unrecorded.isEmpty && report.pending.isEmpty && report.problems.isEmpty)
        #expect(try indexCoversEveryFile(a, layout), "the refreshed index was saved, nothing racy left")
        let saved = try FileSystem.status(layout.index)
        _ = try status(a)
        #expect(try FileSystem.status(layout.index) == saved, "a second status had nothing to refresh")
    }

    @Test func anUnrecordedEditIsStillReportedAndRecordedAfterAStatusSavedTheIndex() throws {
        let (set, a, layout) = try pushedTree()
        let before = set.read(a, "one.json")!
        set.write(a, "one.json", before.replacingOccurrences(of: "\"one\"", with: "\"uno\""))
        age(a + "/one.json", seconds: 1800)
        #expect(try status(a).unrecorded.map(\.kind) == [.update])
        #expect(try indexCoversEveryFile(a, layout))
        // The index caches what the file holds, not what was recorded: still an edit.
        #expect(try status(a).unrecorded.map(\.kind) == [.update])
        let report = try set.sync(a)
        #expect(report.recorded.map(\.kind) == [.update])
        let b = try set.make("b")
        #expect(set.read(b, "one.json")?.contains("\"uno\"") == true)
    }

    @Test func aStatusLeavesTheIndexAloneWhileAnotherRunHoldsTheTree() throws {
        let (set, a, layout) = try pushedTree()
        defer { withExtendedLifetime(set) {} }
        let before = try FileSystem.readFile(layout.index)
        let held = try TreeLock(path: layout.lock, waitSeconds: 0)
        _ = try status(a)
        #expect(try FileSystem.readFile(layout.index) == before, "the lock was held: nothing saved")
        held.release()
        _ = try status(a)
        #expect(try indexCoversEveryFile(a, layout))
    }

    @Test func aStatusDoesNotSaveOverAnIndexAnotherRunSavedSinceItOpened() throws {
        let (set, a, layout) = try pushedTree()
        let reader = try Workspace.open(at: a, readOnly: true)
        defer { reader.close() }
        // Another run saves a newer index after `reader` read the old one.
        set.write(a, "four.json", "{\"name\": \"four\"}")
        try set.sync(a)
        // A save replaces the file (a new inode), so its stat data tells whether one happened.
        let newer = try FileSystem.status(layout.index)
        _ = try reader.sync.status()
        #expect(try FileSystem.status(layout.index) == newer, "the newer index is kept")
        #expect(StatCache.load(from: layout.index)["four.json"] != nil)
    }
}
