import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// Stops a sync dead at every named step and checks that the next runs lose nothing
/// and converge. In-process, a "crash" is an error thrown at the step; the durable
/// state left behind (journal, state, files, remote) is what a kill would leave. The
/// stop is task-local, so the cases run in parallel, each stopping only its own sync.
@Suite struct CrashRecoveryTests {
    /// Every value a user saved, gathered from the live documents and the conflict
    /// stores of all replicas.
    func savedValues(_ set: ReplicaSet, _ dirs: [String]) -> Set<String> {
        var values = Set<String>()
        for dir in dirs {
            for text in set.snapshot(dir).values { if let v = field(text, "v") { values.insert(v) } }
            let conflicts = dir + "/.docsync/conflicts"
            if let e = FileManager.default.enumerator(atPath: conflicts) {
                for case let p as String in e where p.hasSuffix(".json") && !p.hasSuffix(".meta.json") {
                    if let v = field(set.read(conflicts, p), "v") { values.insert(v) }
                }
            }
        }
        return values
    }

    /// Runs `body` with `CrashPoint.throwAt` bound to `point`; true when it stopped there.
    func stopsAt(_ point: String, _ body: () throws -> Void) throws -> Bool {
        do {
            try CrashPoint.$throwAt.withValue(point) { try body() }
            return false
        } catch let crash as CrashPoint.Simulated {
            #expect(crash.point == point)
            return true
        }
    }

    // ReplicaSet syncs through a folder remote: every sync step fires there.
    @Test(arguments: CrashPoint.points(for: .dir))
    func crashAtEveryStepLosesNothing(_ point: String) throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        for name in ["edit", "both", "gone", "move"] { set.write(a, "\(name).json", "{\"v\": \"\(name)-0\"}") }
        try set.sync(a)
        let b = try set.make("b")
        func edit(_ dir: String, _ file: String, _ value: String) {
            set.write(dir, file, set.read(dir, file)!.replacing(#/"v": "[^"]*"/#, with: "\"v\": \"\(value)\""))
        }
        // b changes things and pushes; a changes overlapping things, then crashes mid-sync.
        edit(b, "both.json", "both-b")
        edit(b, "edit.json", "edit-b")
        try set.sync(b)
        edit(a, "both.json", "both-a")
        try FileManager.default.removeItem(atPath: a + "/gone.json")
        try FileManager.default.moveItem(atPath: a + "/move.json", toPath: a + "/moved.json")
        set.write(a, "new.json", "{\"v\": \"new-a\"}")
        let expected: Set<String> = ["both-a", "both-b", "edit-b", "move-0", "new-a"]

        // The stop is bound to this test's task only (parallel tests run undisturbed), and
        // it must really happen: a step the sync never reaches would test nothing.
        let stopped = try stopsAt(point) { try set.sync(a) }
        #expect(stopped, "the sync never reached \(point)")

        // Recovery: the next runs finish the job.
        try set.sync(a)
        try set.sync(b)
        try set.sync(a)
        #expect(set.snapshot(a) == set.snapshot(b), "replicas converge after a crash at \(point)")
        #expect(expected.isSubset(of: savedValues(set, [a, b])), "nothing lost after a crash at \(point)")
        #expect(set.snapshot(a)["gone.json"] == nil)
        for dir in [a, b] {
            let ws = try Workspace.open(at: dir, readOnly: true)
            #expect(ws.checks.verify() == [], "verify after a crash at \(point)")
            ws.close()
        }
        // No temp file is left where a scan could take it for a document.
        let leftovers = FileManager.default.enumerator(atPath: a)!.compactMap { $0 as? String }.filter {
            $0.contains(".docsync-tmp-") && !$0.hasPrefix(".docsync/")
        }
        #expect(leftovers.isEmpty)
        print("RELIABILITY crash-point kind=engine point=\(point) killed=\(stopped ? 1 : 0)")
    }
}

@Suite struct DirectoryRemoteTests {
    func makeRemote() throws -> (TempFolder, DirectoryRemote) {
        let folder = TempFolder("remote")
        try DirectoryRemote.create(at: folder.sub("r"))
        return (folder, DirectoryRemote(url: folder.sub("r"), lockStaleSeconds: 600, lockWaitSeconds: 0.2))
    }

    func put(_ refId: String, _ path: String, _ text: String) -> RemoteWrite {
        let bytes = Array(text.utf8)
        return RemoteWrite(
            refId: refId,
            new: DocVersion(
                refId: refId, changesetId: "000000000001-0000-aaaa", hash: ContentHash.of(bytes), path: path),
            previous: nil, content: bytes)
    }

    let me = ReplicaInfo(replicaId: "aaaa", name: "test")

    @Test func commitIsCompareAndSwapOnTheCursor() throws {
        let (folder, remote) = try makeRemote()
        _ = folder
        let start = try remote.changes(since: nil).cursor
        let next = try remote.commit([put("r1", "a.json", "{}")], expecting: start, replica: me)
        #expect(next != start)
        // A second writer still at the old cursor is told the remote moved.
        #expect(throws: RemoteError.self) {
            try remote.commit([put("r2", "b.json", "{}")], expecting: start, replica: me)
        }
        let changes = try remote.changes(since: start)
        #expect(changes.entries.map(\.refId) == ["r1"])
        #expect(try remote.changes(since: next).entries.isEmpty)
    }

    @Test func aLiveLockMakesOthersWaitThenGiveUp() throws {
        let (folder, remote) = try makeRemote()
        let info = #"{"host":"elsewhere","pid":1,"replica":"bbbb","time":0}"#
        folder.write("r/.docsync/lock", info + "\n")
        let cursor = try remote.changes(since: nil).cursor
        #expect(throws: RemoteError.self) {
            try remote.commit([put("r1", "a.json", "{}")], expecting: cursor, replica: me)
        }
        #expect(folder.read("r/.docsync/lock") == info + "\n")
    }

    @Test func aStaleLockIsRecovered() throws {
        let (folder, _) = try makeRemote()
        // Held by a process on this host that no longer exists.
        let dead = #"{"host":"\#(ProcessInfo.processInfo.hostName)","pid":999999,"replica":"bbbb","time":0}"#
        folder.write("r/.docsync/lock", dead + "\n")
        let remote = DirectoryRemote(url: folder.sub("r"), lockStaleSeconds: 600, lockWaitSeconds: 0.2)
        let cursor = try remote.changes(since: nil).cursor
        _ = try remote.commit([put("r1", "a.json", "{}")], expecting: cursor, replica: me)
        // Held by another host but older than lockStaleSeconds.
        folder.write("r/.docsync/lock", #"{"host":"elsewhere","pid":1}"# + "\n")
        var old = [timespec(tv_sec: 1000, tv_nsec: 0), timespec(tv_sec: 1000, tv_nsec: 0)]
        utimensat(AT_FDCWD, folder.sub("r/.docsync/lock"), &old, 0)
        let cursor2 = try remote.changes(since: nil).cursor
        _ = try remote.commit([put("r2", "b.json", "{}")], expecting: cursor2, replica: me)
        #expect(!folder.exists("r/.docsync/lock"))
    }

    @Test func hostilePathsInTheFeedAreRefused() throws {
        let (folder, remote) = try makeRemote()
        let entry =
            #"{"changesetId":"000000000001-0000-aaaa","deleted":false,"hash":"\#(String(repeating: "0", count: 64))","path":"../escape.json","refId":"x","replica":"bbbb","time":0}"#
        let line = ChecksummedLines.encode(entry)
        folder.write("r/.docsync/feed", line)
        folder.write("r/.docsync/generation", "1 \(line.utf8.count)\n")
        // Refused by name and left out; the rest of the feed stays readable.
        let changes = try remote.changes(since: nil)
        #expect(changes.entries.isEmpty)
        #expect(changes.warnings.count == 1 && changes.warnings[0].contains("'../escape.json'"))
    }

    @Test func symlinkedFolderOnTheRemoteIsNotFollowed() throws {
        let (folder, remote) = try makeRemote()
        let outside = TempFolder("outside")
        try FileManager.default.createSymbolicLink(atPath: folder.sub("r/linked"), withDestinationPath: outside.path)
        let cursor = try remote.changes(since: nil).cursor
        #expect(throws: RemoteError.self) {
            try remote.commit([put("r1", "linked/a.json", "{}")], expecting: cursor, replica: me)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }

    @Test func missingFolderIsUnreachableNotEmpty() throws {
        let folder = TempFolder("remote")
        let remote = DirectoryRemote(url: folder.sub("nothing-here"))
        do {
            _ = try remote.changes(since: nil)
            Issue.record("expected unreachable")
        } catch RemoteError.unreachable {
        }
        try FileManager.default.createDirectory(
            atPath: folder.sub("empty-mount-point"), withIntermediateDirectories: true)
        do {
            _ = try DirectoryRemote(url: folder.sub("empty-mount-point")).changes(since: nil)
            Issue.record("expected unreachable")
        } catch RemoteError.unreachable {
        }
    }

    @Test func readerFallsBackToObjectsWhileAPushIsHalfDone() throws {
        let (folder, remote) = try makeRemote()
        let start = try remote.changes(since: nil).cursor
        _ = try remote.commit([put("r1", "a.json", "{\"v\":1}")], expecting: start, replica: me)
        // Another pusher died after overwriting the readable copy, before its feed entry.
        folder.write("r/a.json", "{\"v\":2}")
        let changes = try remote.changes(since: start)
        #expect(try remote.read(changes.entries[0]) == Array("{\"v\":1}".utf8))
        #expect(!remote.verify().isEmpty)
    }
}

extension CrashRecoveryTests {
    /// `docsync gc` stopped at each of its steps (folder remote), with a local action
    /// pending and a tombstone old enough to purge: a second gc and the next syncs lose
    /// nothing and converge.
    @Test(
        arguments: CrashPoint.gcPoints(for: .dir, format: .shared).map { ($0, FolderRemoteFormat.shared) }
            + CrashPoint.gcPoints(for: .dir, format: .drive).map { ($0, FolderRemoteFormat.drive) })
    func gcStoppedAtEveryStepLosesNothing(_ point: String, _ format: FolderRemoteFormat) throws {
        let set = ReplicaSet(format: format)
        let a = try set.make("a")
        for name in ["keep", "gone", "pending"] { set.write(a, "\(name).json", "{\"v\": \"\(name)-0\"}") }
        try set.sync(a)
        let b = try set.make("b")
        try FileManager.default.removeItem(atPath: a + "/gone.json")
        try set.sync(a)
        try set.sync(b)
        set.write(a, "pending.json", set.read(a, "pending.json")!.replacing("pending-0", with: "pending-a"))
        try set.sync(a, .pull)

        func gc() throws -> GCReport {
            let ws = try Workspace.open(at: a, readOnly: false)
            defer { ws.close() }
            _ = try ws.settings.set("gc.tombstoneMaxAgeDays", "0.000001")
            return try ws.gc.collect(dryRun: false)
        }
        Thread.sleep(forTimeInterval: 0.1)
        let stopped = try stopsAt(point) { _ = try gc() }
        #expect(stopped, "gc never reached \(point)")

        let again = try gc()
        #expect(again.pendingKept == 1)
        let ws = try Workspace.open(at: a, readOnly: true)
        #expect(ws.state.pending.map(\.path) == ["pending.json"])
        ws.close()
        try set.sync(a)
        try set.sync(b)
        try set.sync(a)
        #expect(set.snapshot(a) == set.snapshot(b), "replicas converge after gc stopped at \(point)")
        #expect(field(set.snapshot(b)["pending.json"], "v") == "pending-a")
        #expect(set.snapshot(b)["gone.json"] == nil)
        if format == .shared { #expect(try FileSystem.listDirectory(set.remote + "/.docsync/tombstones").isEmpty) }
        // Purged: the remote's whole state names no deletion any more.
        #expect(try FolderRemoteFormat.open(set.remote).changes(since: nil).entries.allSatisfy { !$0.deleted })
        for dir in [a, b] {
            let check = try Workspace.open(at: dir, readOnly: true)
            #expect(check.checks.verify() == [], "verify after gc stopped at \(point)")
            check.close()
        }
        print("RELIABILITY crash-point kind=engine point=\(point) killed=\(stopped ? 1 : 0)")
    }
}
