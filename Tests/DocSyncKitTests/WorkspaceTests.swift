import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// The engine driven through its API (no CLI), on real folders and a real directory
/// remote.
@Suite struct WorkspaceTests {
    @Test func stampsIdsWithoutReformatting() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let original = "{\n    \"name\" :  \"Ann\",\n\n    \"n\": 1.50e3\n}\n"
        set.write(a, "ann.json", original)
        try set.sync(a)
        let stamped = set.read(a, "ann.json")!
        let refId = field(stamped, "refId")!
        let changesetId = field(stamped, "changesetId")!
        #expect(ChangesetID(changesetId) != nil)
        // Exactly the two members were inserted after '{'; every other byte is the user's.
        let inserted = "\n    \"refId\" :  \"\(refId)\",\n    \"changesetId\" :  \"\(changesetId)\","
        #expect(stamped == "{" + inserted + original.dropFirst())
    }

    @Test func editGetsNewChangesetIdAndKeepsRefId() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "x.json", "{\"v\": 1}")
        try set.sync(a)
        let first = set.read(a, "x.json")!
        set.write(a, "x.json", first.replacingOccurrences(of: "\"v\": 1", with: "\"v\": 2"))
        let report = try set.sync(a)
        let second = set.read(a, "x.json")!
        #expect(report.recorded.map(\.kind) == [.update])
        #expect(field(second, "refId") == field(first, "refId"))
        #expect(changesetOrder(field(first, "changesetId")!, field(second, "changesetId")!))
    }

    /// git's racy-index case: an edit of equal size in the same clock tick, with the
    /// mtime forced back to what the cache saw, must still be detected.
    @Test func sameSizeEditWithUnchangedMtimeIsDetected() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "r.json", "{\"v\": \"aaaa\"}")
        try set.sync(a)
        let path = a + "/r.json"
        let before = try FileSystem.linkStatus(path)
        let edited = set.read(a, "r.json")!.replacingOccurrences(of: "aaaa", with: "bbbb")
        // Rewrite in place (same inode, same size), then put the old mtime back.
        let fd = open(path, O_WRONLY | O_TRUNC)
        _ = Array(edited.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        var times = [
            timespec(tv_sec: Int(before.mtimeNanos / 1_000_000_000), tv_nsec: Int(before.mtimeNanos % 1_000_000_000)),
            timespec(tv_sec: Int(before.mtimeNanos / 1_000_000_000), tv_nsec: Int(before.mtimeNanos % 1_000_000_000))
        ]
        utimensat(AT_FDCWD, path, &times, 0)
        let after = try FileSystem.linkStatus(path)
        #expect(after.size == before.size && after.mtimeNanos == before.mtimeNanos && after.inode == before.inode)
        let report = try set.sync(a)
        #expect(report.recorded.map(\.kind) == [.update])
        #expect(field(set.read(set.remote, "r.json"), "v") == "bbbb")
    }

    @Test func unchangedFilesAreNotReadAgain() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "old.json", "{\"v\": 1}")
        // An mtime well in the past makes the cache entry trustworthy (not racy).
        try set.sync(a)
        var old = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        utimensat(AT_FDCWD, a + "/old.json", &old, 0)
        try set.sync(a)
        let cache = StatCache.load(from: a + "/.docsync/index")
        #expect(cache["old.json"]?.racy == false)
        // Make the file unreadable: a sync that re-read it would report a problem.
        chmod(a + "/old.json", 0)
        defer { chmod(a + "/old.json", 0o644) }
        if getuid() != 0 {
            let report = try set.sync(a)
            #expect(report.problems.isEmpty)
        }
        #expect(
            cache["old.json"]?.matches(try FileSystem.linkStatus(a + "/old.json")) == false
                || cache["old.json"]?.racy == false)
    }

    @Test func copyGetsNewRefIdAndMoveKeepsIt() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let b = try set.make("b")
        set.write(a, "orig.json", "{\"v\": 1}")
        try set.sync(a)
        let refId = field(set.read(a, "orig.json"), "refId")!
        try FileManager.default.copyItem(atPath: a + "/orig.json", toPath: a + "/copy.json")
        try FileManager.default.createDirectory(atPath: a + "/sub", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: a + "/orig.json", toPath: a + "/sub/moved.json")
        let report = try set.sync(a)
        #expect(Set(report.recorded.map(\.kind)) == [.create, .rename])
        #expect(field(set.read(a, "sub/moved.json"), "refId") == refId)
        let copyId = field(set.read(a, "copy.json"), "refId")!
        #expect(copyId != refId)
        try set.sync(b)
        #expect(set.snapshot(a) == set.snapshot(b))
        #expect(field(set.read(b, "sub/moved.json"), "refId") == refId)
        #expect(!FileManager.default.fileExists(atPath: b + "/orig.json"))
    }

    @Test func deletionTravelsAsTombstone() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "gone.json", "{\"v\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        let refId = field(set.read(a, "gone.json"), "refId")!
        try FileManager.default.removeItem(atPath: a + "/gone.json")
        try set.sync(a)
        // The remote records the deletion: who, which version, where it was.
        let deletion = try #require(try FolderRemoteFormat.open(set.remote).history(of: refId, path: nil).first)
        #expect(deletion.deleted && deletion.path == "gone.json")
        #expect(!FileManager.default.fileExists(atPath: set.remote + "/gone.json"))
        try set.sync(b)
        #expect(!FileManager.default.fileExists(atPath: b + "/gone.json"))
    }

    @Test func editBeatsDeleteInBothDirections() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "d1.json", "{\"v\": 1}")
        set.write(a, "d2.json", "{\"v\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        // d1: deleted on a, edited on b. d2: edited on a, deleted on b.
        try FileManager.default.removeItem(atPath: a + "/d1.json")
        set.write(a, "d2.json", set.read(a, "d2.json")!.replacingOccurrences(of: "1}", with: "2}"))
        set.write(b, "d1.json", set.read(b, "d1.json")!.replacingOccurrences(of: "1}", with: "3}"))
        try FileManager.default.removeItem(atPath: b + "/d2.json")
        try set.sync(a)
        let report = try set.sync(b)
        try set.sync(a)
        #expect(report.notices.count == 2)
        #expect(field(set.read(a, "d1.json"), "v") == "3")
        #expect(field(set.read(b, "d2.json"), "v") == "2")
        #expect(set.snapshot(a) == set.snapshot(b))
    }

    @Test func conflictKeepsTheLoserAndConverges() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "c.json", "{\"v\": 0}")
        try set.sync(a)
        let b = try set.make("b")
        set.write(a, "c.json", set.read(a, "c.json")!.replacingOccurrences(of: "0}", with: "1}"))
        try set.sync(a)  // a's version reaches the remote first…
        set.write(b, "c.json", set.read(b, "c.json")!.replacingOccurrences(of: "0}", with: "2}"))
        let report = try set.sync(b)  // …b's is later, so b's wins and a's is kept aside
        #expect(report.conflicts.count == 1)
        let conflict = try #require(report.conflicts.first)
        #expect(conflict.stored == .remote)
        let kept = try #require(conflict.file)
        #expect(field(set.read(b, kept), "v") == "1")
        try set.sync(a)
        #expect(field(set.read(a, "c.json"), "v") == "2")
        #expect(set.snapshot(a) == set.snapshot(b))
        let ws = try Workspace.open(at: b, readOnly: true)
        #expect(try ws.sync.status().conflicts.count == 1)
    }

    @Test func identicalChangesAreNotAConflict() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "same.json", "{\"v\": 0}")
        try set.sync(a)
        let b = try set.make("b")
        let edited = set.read(a, "same.json")!
        set.write(a, "same.json", edited.replacingOccurrences(of: "0}", with: "9}"))
        try set.sync(a)
        // b ends up with the very same bytes (say, copied over by hand).
        set.write(b, "same.json", set.read(a, "same.json")!)
        let report = try set.sync(b)
        #expect(report.conflicts.isEmpty)
        #expect(set.snapshot(a) == set.snapshot(b))
    }

    @Test func differentDocumentsCreatedAtTheSamePathAreBothKept() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let b = try set.make("b")
        set.write(a, "todo.json", "{\"who\": \"a\"}")
        set.write(b, "todo.json", "{\"who\": \"b\"}")
        try set.sync(a)
        let report = try set.sync(b)
        try set.sync(a)
        #expect(report.notices.contains { $0.contains("both sides have a different document") })
        let docs = set.snapshot(b)
        #expect(docs.count == 2)
        #expect(Set(docs.values.compactMap { field($0, "who") }) == ["a", "b"])
        #expect(field(docs["todo.json"], "who") == "b")
        #expect(set.snapshot(a) == docs)
    }

    @Test func invalidFileIsReportedLeftAloneAndNotDeleted() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "ok.json", "{\"v\": 1}")
        set.write(a, "doc.json", "{\"v\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        let good = set.read(a, "doc.json")!
        let broken = "{\n  \"v\": 1,\n  oops\n}"
        set.write(a, "doc.json", broken)
        set.write(a, "new.json", "{\"v\": 1}")
        let report = try set.sync(a)
        #expect(
            report.problems.map(\.message) == ["doc.json:3:3: expected a string key"]
                || report.problems.first?.message.hasPrefix("doc.json:3:3:") == true)
        #expect(set.read(a, "doc.json") == broken)
        #expect(set.read(set.remote, "doc.json") != nil)
        #expect(report.pushed.map(\.path) == ["new.json"])
        // A remote edit to the broken document is kept aside, never written over it.
        set.write(b, "doc.json", set.read(b, "doc.json")!.replacingOccurrences(of: "1}", with: "5}"))
        try set.sync(b)
        let second = try set.sync(a)
        #expect(set.read(a, "doc.json") == broken)
        #expect(
            second.conflicts.isEmpty && second.waiting.count == 1
                && second.waiting.first?.hasPrefix("doc.json:") == true)
        // Fixed by hand from the old version: merged with the waiting one.
        set.write(a, "doc.json", good.replacingOccurrences(of: "1}", with: "1, \"x\": 2}"))
        let third = try set.sync(a)
        #expect(third.waiting.isEmpty && third.problems.isEmpty)
        let merged =
            (try? JSONSerialization.jsonObject(with: Data((set.read(a, "doc.json") ?? "").utf8))) as? [String: Any]
        #expect(merged?["v"] as? Int == 5 && merged?["x"] as? Int == 2, "\(merged ?? [:])")
    }

    /// Found by the convergence fuzzer: the remote deletes a document and puts another one
    /// at its path, while this tree's copy is invalid JSON. The invalid file is the user's
    /// unfinished edit; the incoming document must not be written over it.
    @Test func aDocumentArrivingAtTheInvalidFileOfADeletedOneGoesBesideIt() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "doc.json", "{\"v\": \"first\"}")
        try set.sync(a)
        let b = try set.make("b")
        let firstText = set.read(a, "doc.json")!
        // Another refId: another document at the same path; the first one is deleted. (A
        // file without ids there would be a new version of the first one.)
        set.write(b, "doc.json", "{\"refId\": \"second-document\", \"v\": \"second\"}")
        try set.sync(b)
        let broken = "{\"v\": \"fir"
        set.write(a, "doc.json", broken)
        try set.sync(a)
        #expect(set.read(a, "doc.json") == broken)
        // The user finishes the edit; nothing anyone saved is lost, both trees agree.
        set.write(a, "doc.json", firstText.replacingOccurrences(of: "first", with: "first, fixed"))
        try set.sync(a)
        try set.sync(b)
        #expect(Set(set.snapshot(a).values.compactMap { field($0, "v") }) == ["first, fixed", "second"])
        #expect(set.snapshot(a) == set.snapshot(b))
    }

    @Test func missingStateIsRefusedAndResetBaseRecoversWithoutDeleting() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "one.json", "{\"v\": 1}")
        set.write(a, "two.json", "{\"v\": 2}")
        try set.sync(a)
        let b = try set.make("b")
        set.write(b, "three.json", "{\"v\": 3}")
        try set.sync(b)
        try FileManager.default.removeItem(atPath: a + "/.docsync/state")
        #expect(throws: SyncState.Damaged.self) { try Workspace.open(at: a, readOnly: false) }
        let (ws, _) = try TreeSetup.resetBase(at: a)
        let report = try ws.sync.run(.both)
        ws.close()
        #expect(report.conflicts.isEmpty)
        #expect(Set(set.snapshot(a).keys) == ["one.json", "two.json", "three.json"])
        try set.sync(b)
        #expect(set.snapshot(a) == set.snapshot(b))
    }

    @Test func unreachableRemoteKeepsActionsPendingAndReplaysThem() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let b = try set.make("b")
        try FileManager.default.moveItem(atPath: set.remote, toPath: set.remote + ".away")
        set.write(a, "offline.json", "{\"v\": 1}")
        let report = try set.sync(a)
        #expect(report.remoteUnreachable != nil)
        #expect(report.pendingAfter == 1)
        // An empty folder where the remote was (an unmounted share) is not "everything deleted".
        try FileManager.default.createDirectory(atPath: set.remote, withIntermediateDirectories: true)
        #expect(try set.sync(b).remoteUnreachable != nil)
        try FileManager.default.removeItem(atPath: set.remote)
        try FileManager.default.moveItem(atPath: set.remote + ".away", toPath: set.remote)
        #expect(try set.sync(a).pushed.count == 1)
        try set.sync(b)
        #expect(set.read(b, "offline.json") == set.read(a, "offline.json"))
    }

    @Test func pushRefusesMassDeletionWithoutForce() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        for i in 0..<6 { set.write(a, "d\(i).json", "{\"i\": \(i)}") }
        try set.sync(a)
        for i in 0..<4 { try FileManager.default.removeItem(atPath: a + "/d\(i).json") }
        // Refused, and reported as such (with the deletions and the command that undoes them).
        let refused = try set.sync(a)
        #expect(refused.refusedPush?.count == 4 && refused.refusedPush?.total == 6, "\(refused)")
        #expect(refused.refusedPush?.deletions.map(\.path).sorted() == ["d0.json", "d1.json", "d2.json", "d3.json"])
        #expect(refused.pushed.isEmpty && refused.pendingAfter == 4)
        #expect(FileManager.default.fileExists(atPath: set.remote + "/d0.json"))
        try set.sync(a, force: true)
        #expect(!FileManager.default.fileExists(atPath: set.remote + "/d0.json"))
    }

    @Test func repeatedSyncsChangeNothing() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "s.json", "{\"v\": 1}")
        try set.sync(a)
        let b = try set.make("b")
        try set.sync(a)
        try set.sync(b)
        func fingerprint() -> [String: Int64] {
            var result: [String: Int64] = [:]
            for dir in [a, b, set.remote] {
                let e = FileManager.default.enumerator(atPath: dir)!
                while let p = e.nextObject() as? String {
                    if p.hasSuffix("last-sync") || p.hasSuffix("/lock") || p == ".docsync/lock" { continue }
                    if let st = try? FileSystem.linkStatus(dir + "/" + p), !st.isDirectory {
                        result[dir + "/" + p] = st.mtimeNanos ^ Int64(st.inode)
                    }
                }
            }
            return result
        }
        let before = fingerprint()
        for _ in 0..<2 {
            try set.sync(a)
            try set.sync(b)
        }
        #expect(fingerprint() == before)
    }

    @Test func secondRunOnTheSameTreeIsRefused() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let ws = try Workspace.open(at: a, readOnly: false)
        defer { ws.close() }
        var config = try Config.load(from: a + "/.docsync/config")
        try config.set("lock.waitSeconds", "0")
        try config.save(to: a + "/.docsync/config")
        #expect(throws: Workspace.Failure.self) { try Workspace.open(at: a, readOnly: false) }
    }

    /// A pull that cannot write a document (edited on disk meanwhile, or tracked but
    /// ignored: then unknown, see `UnknownDocument`) must not move its base: the local edit later meets the remote one as a
    /// conflict instead of silently replacing it.
    @Test func skippedPullKeepsTheOldBaseSoNothingIsOverwritten() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "k.json", "{\"v\": \"base\"}")
        try set.sync(a)
        let b = try set.make("b")
        set.write(b, "k.json", set.read(b, "k.json")!.replacingOccurrences(of: "base", with: "from-b"))
        try set.sync(b)
        set.write(a, ".docsyncignore", "k.json\n")
        set.write(a, "k.json", set.read(a, "k.json")!.replacingOccurrences(of: "base", with: "from-a"))
        let first = try set.sync(a)
        // Ignored after it was synced: unknown, its remote version waits aside.
        #expect(first.unknown?.map(\.path) == ["k.json"])
        #expect(first.notices.contains { $0.contains("k.json: not looked at here") })
        #expect(field(set.read(a, "k.json"), "v") == "from-a")
        try FileManager.default.removeItem(atPath: a + "/.docsyncignore")
        try set.sync(a)
        try set.sync(b)
        try set.sync(a)
        #expect(set.snapshot(a) == set.snapshot(b))
        var values = Set(set.snapshot(a).values.compactMap { field($0, "v") })
        for dir in [a, b] {
            for record in ConflictStore(root: dir + "/.docsync/conflicts").list() {
                values.insert(field(set.read(dir, record.file!), "v") ?? "")
            }
        }
        #expect(values.isSuperset(of: ["from-a", "from-b"]))
    }

    @Test func pointingTheTreeAtANewRemoteMergesWithoutDeleting() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "one.json", "{\"v\": 1}")
        try set.sync(a)
        let ws = try Workspace.open(at: a, readOnly: false)
        // No remote there: refused as a likely typo, then another remote: refused without
        // an explicit reset of the base.
        #expect(throws: Workspace.Failure.self) { try ws.settings.set("remote.url", set.folder.sub("second-remote")) }
        #expect(throws: Workspace.Failure.self) {
            try ws.settings.set("remote.url", set.folder.sub("second-remote"), create: true)
        }
        #expect(!FileManager.default.fileExists(atPath: set.folder.sub("second-remote")))
        #expect(try ws.settings.set("remote.url", set.folder.sub("second-remote"), create: true, resetBase: true))
        let report = try ws.sync.run(.both)
        ws.close()
        #expect(report.pushed.map(\.path) == ["one.json"])
        #expect(set.read(set.folder.sub("second-remote"), "one.json") == set.read(a, "one.json"))
        #expect(report.conflicts.isEmpty)
    }

    @Test func handEditsInTheRemoteFolderAreKeptAsideNotOverwritten() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        set.write(a, "h.json", "{\"v\": 1}")
        try set.sync(a)
        set.write(set.remote, "h.json", "{\"v\": \"typed in the share\"}")
        set.write(a, "h.json", set.read(a, "h.json")!.replacingOccurrences(of: "1}", with: "2}"))
        try set.sync(a)
        let displaced = try FileManager.default.contentsOfDirectory(atPath: set.remote + "/.docsync/displaced")
        #expect(displaced.count == 1)
        #expect(field(set.read(set.remote + "/.docsync/displaced", displaced[0]), "v") == "typed in the share")
    }
}
