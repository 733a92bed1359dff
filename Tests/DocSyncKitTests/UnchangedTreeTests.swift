import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// A no-op `status` or `sync` knows nothing changed from the index's synced flags and the
/// walk, without reading the state's base (`UnchangedTree`); every change still shows, and
/// flags set against another state are never trusted.
@Suite struct UnchangedTreeTests {
    /// A tree of four documents synced to a folder remote, aged past the racy window, and
    /// read once by `status` (which saves the index it refreshed, flags and all).
    private func settledTree() throws -> (ReplicaSet, String) {
        let set = ReplicaSet()
        let a = try set.make("a")
        for name in ["one", "two", "sub/three", "sub/four"] {
            set.write(a, "\(name).json", "{\"name\": \"\(name)\", \"n\": 1}")
        }
        try set.sync(a)
        #expect(ageEveryFile(a))
        _ = try status(a)
        return (set, a)
    }

    /// A read-only status, opened as the command opens it, and whether it read the base
    /// file (every run that parses a base line reads it first).
    private func status(_ root: String) throws -> (report: StatusReport, baseRead: Bool) {
        let workspace = try Workspace.open(at: root, readOnly: true, baseOnDemand: true)
        defer { workspace.close() }
        let report = try workspace.sync.status()
        #expect(workspace.store.state.baseFileRead || workspace.store.state.baseLinesParsed == 0)
        return (report, workspace.store.state.baseFileRead)
    }

    @Test func aNoOpStatusAndSyncNeverReadTheBase() throws {
        let (set, a) = try settledTree()
        defer { withExtendedLifetime(set) {} }  // it removes the trees when it goes
        let (report, baseRead) = try status(a)
        #expect(report.unrecorded.isEmpty && report.pending.isEmpty && report.problems.isEmpty)
        #expect(!baseRead, "a no-op status parsed the base")
        let workspace = try Workspace.open(at: a, readOnly: false, baseOnDemand: true)
        let synced = try workspace.sync.run(.both)
        #expect(synced.recorded.isEmpty && synced.pulled.isEmpty && synced.pushed.isEmpty)
        #expect(!workspace.store.state.baseFileRead, "a no-op sync read the base file")
        workspace.close()
        #expect(try !status(a).baseRead, "the no-op sync left the flags as they were")
    }

    @Test func aNoOpSyncWithAGitRemoteNeverReadsTheBase() throws {
        let set = try GitReplicaSet()
        let a = try set.make("a")
        for name in ["one", "two"] {
            try Data("{\"name\": \"\(name)\"}".utf8).write(to: URL(fileURLWithPath: a + "/\(name).json"))
        }
        try set.sync(a)
        #expect(ageEveryFile(a))
        _ = try status(a)
        let workspace = try Workspace.open(at: a, readOnly: false, baseOnDemand: true)
        defer { workspace.close() }
        let synced = try workspace.sync.run(.both)
        #expect(synced.recorded.isEmpty && synced.pulled.isEmpty && synced.pushed.isEmpty)
        #expect(!workspace.store.state.baseFileRead, "a no-op sync read the base file")
    }

    /// Each change from a settled tree, and what `status` must say of it (the rules: an
    /// edit is an update, a removed file a deletion, a new file or a copy a creation, a
    /// moved file a rename, a file that is not JSON a problem and no deletion).
    static var changes: [(String, (ReplicaSet, String) -> Void, [ChangeKind], Int)] {
        [
            (
                "an edit",
                { s, a in
                    s.write(
                        a, "one.json", s.read(a, "one.json")!.replacingOccurrences(of: "\"n\": 1", with: "\"n\": 2"))
                }, [.update], 0
            ),
            ("a deletion", { _, a in unlink(a + "/sub/three.json") }, [.delete], 0),
            ("a new file", { s, a in s.write(a, "five.json", "{\"name\": \"five\"}") }, [.create], 0),
            ("a copy", { s, a in s.write(a, "copy.json", s.read(a, "two.json")!) }, [.create], 0),
            ("a move", { _, a in rename(a + "/two.json", a + "/moved.json") }, [.rename], 0),
            ("a half-saved file", { s, a in s.write(a, "sub/four.json", "{\"name\": ") }, [], 1),
            ("the same bytes written again", { s, a in s.write(a, "one.json", s.read(a, "one.json")!) }, [], 0)
        ]
    }

    @Test(arguments: 0..<7)
    func everyChangeIsStillSeen(_ i: Int) throws {
        let (name, change, kinds, problems) = Self.changes[i]
        let (set, a) = try settledTree()
        #expect(try !status(a).baseRead, "\(name): the tree did not start settled")
        change(set, a)
        // Twice: the first status saves the index it refreshed (a deleted file's entry
        // gone, the others flagged), and the second must still see the change.
        for run in ["first", "second"] {
            let (report, baseRead) = try status(a)
            #expect(report.unrecorded.map(\.kind) == kinds, "\(name), \(run) status")
            #expect(report.problems.count == problems, "\(name), \(run) status")
            // A new file without ids is the one change that needs no base version looked up.
            #expect(
                baseRead || kinds.isEmpty && problems == 0 || kinds == [.create],
                "\(name): a changed tree must be compared with the base")
        }
    }

    /// docs/SYNC.md: excluding a synced document deletes it nowhere; docsync stops
    /// recording it. The walk has a file fewer than the flags: the long way says so.
    @Test func aNewlyIgnoredDocumentIsSeenAsTheFullScanSeesIt() throws {
        let (set, a) = try settledTree()
        set.write(a, ".docsyncignore", "sub/four.json\n")
        let (fast, baseRead) = try status(a)
        #expect(baseRead)
        // The oracle: the same tree with no index at all (every file read, no flag).
        unlink(TreeLayout(root: a).index)
        let full = try status(a).report
        #expect(fast.unrecorded.map(\.kind) == full.unrecorded.map(\.kind))
        #expect(fast.unrecorded.map(\.path) == full.unrecorded.map(\.path))
        #expect(fast.unrecorded.isEmpty, "excluding a document is not its deletion")
    }

    @Test func aPendingActionTurnsTheShortcutOff() throws {
        let (set, a) = try settledTree()
        unlink(a + "/one.json")
        let workspace = try Workspace.open(at: a, readOnly: false)
        var report = SyncReport()
        _ = try workspace.recordLocalChanges(write: true, report: &report)
        workspace.close()
        let after = try status(a)
        #expect(after.report.pending.map(\.kind) == [.delete])
        #expect(after.baseRead)
        _ = set
    }

    /// Flags set against another state (here: the same base, another last-sync time) are
    /// not trusted; the status that reads the base sets them again for the next one.
    @Test func flagsOfAnotherStateAreNotTrustedAndAreSetAgain() throws {
        let (set, a) = try settledTree()
        let layout = TreeLayout(root: a)
        var other = try SyncState.load(from: layout.state)
        other.lastSync = (other.lastSync ?? 0) + 1
        try other.save(to: layout.state)
        #expect(try status(a).baseRead, "flags of another state were trusted")
        #expect(try !status(a).baseRead, "the status did not set the flags again")
        _ = set
    }

    /// A damaged index or one with no flags only costs the shortcut.
    @Test func anIndexWithoutFlagsIsReadTheLongWay() throws {
        let (set, a) = try settledTree()
        let layout = TreeLayout(root: a)
        var index = StatCache.load(from: layout.index)
        try index.save(to: layout.index)
        #expect(StatCache.load(from: layout.index).stamp == 0)
        let (report, baseRead) = try status(a)
        #expect(baseRead && report.unrecorded.isEmpty)
        // That status set the flags: the next one takes the shortcut.
        #expect(StatCache.load(from: layout.index).stamp != 0)
        #expect(try !status(a).baseRead)
        _ = set
    }
}

/// The state file with the base last, read without parsing it, written back unchanged.
@Suite struct DeferredBaseTests {
    private func sample() -> SyncState {
        var state = SyncState()
        for i in 0..<50 {
            let refId = String(format: "00000000-0000-4000-8000-%012d", i)
            state.base[refId] = DocVersion(
                refId: refId, changesetId: "cs\(i)", hash: ContentHash.of("\(i)"), path: "d\t\(i).json")
        }
        state.cursor = "7"
        var pending = JournalEntry(.local(.delete, version: state.base.values.first!, fromPath: nil))
        pending.seq = 3
        state.fold(pending)
        return state
    }

    @Test func anUnreadBaseIsWrittenBackAsItWas() throws {
        let dir = TempFolder("deferred-base")
        let original = sample()
        let digest = try original.save(to: dir.sub("state"))
        let loaded = try SyncState.load(from: dir.sub("state"))
        #expect(loaded.baseLinesParsed == 0 && loaded.baseCount == 50 && loaded.savedDigest == digest)
        #expect(try loaded.save(to: dir.sub("copy")) == digest, "the lines were not copied as they were")
        #expect(try FileSystem.readFile(dir.sub("copy")) == FileSystem.readFile(dir.sub("state")))
        #expect(loaded.base == original.base)
        #expect(loaded.pending.map(\.seq) == [3])
    }

    @Test func aChangedBaseIsWrittenWhole() throws {
        let dir = TempFolder("deferred-base-change")
        try sample().save(to: dir.sub("state"))
        var loaded = try SyncState.load(from: dir.sub("state"))
        let refId = loaded.base.keys.sorted()[7]
        loaded.base.removeValue(forKey: refId)
        #expect(loaded.savedDigest == nil, "a changed state still named the file")
        try loaded.save(to: dir.sub("state"))
        let again = try SyncState.load(from: dir.sub("state"))
        #expect(again.baseCount == 49 && again.base[refId] == nil && again.base.count == 49)
    }

    /// An older docsync wrote the pending and held lines after the base: read whole.
    @Test func aStateWithTheBaseFirstIsReadWhole() throws {
        let dir = TempFolder("deferred-base-old")
        let original = sample()
        let version = original.base.values.sorted { $0.refId < $1.refId }[0]
        var body = "docsync-state 1\njournal\t3\t0\ncursor\t7\n"
        body += "base\t\(version.refId)\t\(version.changesetId)\t\(version.hash)\td\\t0.json\n"
        body += "pending\t" + FieldEscaping.escape(try original.pending[0].encodedLine()) + "\n"
        body += "base\tother\tcs\t\(version.hash)\tother.json\n"
        body += "end\t2\t1\n"
        try FileSystem.writeAtomically(dir.sub("state"), SealedFile.seal(body))
        let loaded = try SyncState.load(from: dir.sub("state"))
        #expect(!loaded.baseStorage.isUnparsed)
        #expect(loaded.base[version.refId] == version && loaded.base["other"]?.path == "other.json")
        #expect(loaded.pending.count == 1)
    }

    /// Copies of a state share the unread base until one changes it.
    @Test func copiesKeepValueSemantics() throws {
        let dir = TempFolder("deferred-base-copies")
        try sample().save(to: dir.sub("state"))
        let loaded = try SyncState.load(from: dir.sub("state"))
        var copy = loaded
        copy.base["new"] = DocVersion(refId: "new", changesetId: "c", hash: ContentHash.of("x"), path: "new.json")
        #expect(loaded.baseLinesParsed == 0, "changing a copy parsed the original's lines in place")
        #expect(copy.baseCount == 51 && loaded.baseCount == 50 && loaded.base["new"] == nil)
    }
}
