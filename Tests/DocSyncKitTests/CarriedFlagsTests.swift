import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// The index's synced flags, once a run changed the state, are carried over from the
/// flags it read for every path whose document did not change (`UnchangedTree.Against
/// .Carried`) and looked up for the others. Checked here against the rule itself, worked
/// out from the saved state alone: a record is flagged exactly when its refId, content
/// hash and path are its document's version in that state's base.
@Suite struct CarriedFlagsTests {
    /// Each record of the index at `root` whose flag differs from the rule's answer, and
    /// how many records are flagged; fails when the flags are not set against the state
    /// file as saved.
    private func flagsAgainstTheRule(_ root: String, _ context: String) throws -> (wrong: [String], flagged: Int) {
        let layout = TreeLayout(root: root)
        let state = try SyncState.load(from: layout.state)
        let base = state.base
        let buffer = try #require(IndexFile.readWhole(layout.index), "\(context): no index")
        let file = try #require(IndexFile.open(adopting: buffer), "\(context): the index is not sound")
        #expect(file.stamp == state.readStamp, "\(context): the flags are not set against the saved state")
        var wrong: [String] = []
        var flagged = 0
        for i in 0..<file.count {
            let entry = file.entry(i)
            let path = file.pathString(i)
            let version = base[entry.refId]
            let rule = version?.hash == entry.hash && version?.path == path
            if file.isSynced(i) { flagged += 1 }
            if file.isSynced(i) != rule { wrong.append("\(path) flagged \(file.isSynced(i)), the rule says \(rule)") }
        }
        return (wrong, flagged)
    }

    private func status(_ root: String) throws {
        let workspace = try Workspace.open(at: root, readOnly: true)
        defer { workspace.close() }
        _ = try workspace.sync.status()
    }

    /// The base changes under files that do not: a run that changed nothing on disk
    /// must still unflag the document that moved away, was deleted or got another version,
    /// and flag the file that became its document's version.
    @Test func aBaseChangedUnderUnchangedFilesIsFlaggedByTheRule() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        for name in ["one", "two", "sub/three", "sub/four"] {
            set.write(a, "\(name).json", "{\"name\": \"\(name)\"}")
        }
        try set.sync(a)
        let extraId = "0f4e2c1a-9d3b-4c5e-8a7f-112233445566"
        set.write(a, "extra.json", "{\"refId\": \"\(extraId)\", \"name\": \"extra\"}")
        #expect(ageEveryFile(a))
        try status(a)
        let before = try flagsAgainstTheRule(a, "settled")
        #expect(before.wrong.isEmpty, "\(before.wrong)")
        #expect(before.flagged == 4, "the four synced documents are flagged, the new file is not")

        let workspace = try Workspace.open(at: a, readOnly: false)
        let state = workspace.store.state
        let index = workspace.store.index
        #expect(state.readStamp != 0 && state.readStamp == index.stamp, "the carried flags would not be used")
        func version(_ path: String) throws -> DocVersion {
            try #require(state.base.values.first { $0.path == path }, "\(path)")
        }
        let one = try version("one.json")
        let two = try version("two.json")
        let three = try version("sub/three.json")
        let extraHash = try #require(index["extra.json"]?.hash)
        var another = one
        another.hash = String(repeating: "ab", count: 32)
        var moved = two
        moved.path = "elsewhere/two.json"
        let seen: [(String, JournalEntry.RemoteState)] = [
            (one.refId, .version(another)),
            (two.refId, .version(moved)),
            (three.refId, .deleted(changesetId: three.changesetId, path: three.path)),
            (
                extraId,
                .version(DocVersion(refId: extraId, changesetId: one.changesetId, hash: extraHash, path: "extra.json"))
            )
        ]
        try workspace.store.append(seen.map { JournalEntry(.seen(refId: $0.0, $0.1, reason: nil)) })
        try workspace.store.checkpoint()
        workspace.close()

        let after = try flagsAgainstTheRule(a, "after the base changed")
        #expect(after.wrong.isEmpty, "\(after.wrong)")
        #expect(after.flagged == 2, "sub/four.json and extra.json")
    }

    /// Flags set against an earlier state (an index put back, or a run killed between
    /// its state checkpoint and its index save) say nothing of the state now: the scan
    /// must look the document up, and see that its file is not the base's version.
    @Test func theScanTrustsFlagsOnlyOfTheStateTheyWereSetAgainst() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        for name in ["one", "two"] { set.write(a, "\(name).json", "{\"name\": \"\(name)\"}") }
        try set.sync(a)
        #expect(ageEveryFile(a))
        try status(a)
        let layout = TreeLayout(root: a)
        let earlierIndex = try Data(contentsOf: URL(fileURLWithPath: layout.index))

        let workspace = try Workspace.open(at: a, readOnly: false)
        var one = try #require(workspace.store.state.base.values.first { $0.path == "one.json" })
        one.hash = String(repeating: "cd", count: 32)
        try workspace.store.append([JournalEntry(.seen(refId: one.refId, .version(one), reason: nil))])
        try workspace.store.checkpoint()
        workspace.close()
        try earlierIndex.write(to: URL(fileURLWithPath: layout.index))

        let reader = try Workspace.open(at: a, readOnly: true)
        defer { reader.close() }
        #expect(reader.store.index.stamp != 0 && reader.store.index.stamp != reader.store.state.readStamp)
        let report = try reader.sync.status()
        #expect(report.unrecorded.map(\.path) == ["one.json"], "one.json is not the base's version")
        #expect(report.unrecorded.map(\.kind) == [.update])
    }

    /// Real runs on two replicas, each changing what the other then pulls (edits, a move,
    /// a deletion, a new file, an edit on both sides): after every sync the flags are the
    /// rule's.
    @Test func flagsAfterRealSyncsAreTheRules() throws {
        let set = ReplicaSet()
        let (a, b) = try set.twoReplicas(
            Dictionary(uniqueKeysWithValues: (0..<12).map { ("d/\($0).json", "{\"n\": \($0)}") }))
        try set.sync(b)
        for root in [a, b] {
            #expect(ageEveryFile(root))
            try status(root)
        }
        let steps: [(String, String, () -> Void)] = [
            (
                "b edits and moves", b,
                {
                    set.write(b, "d/1.json", set.read(b, "d/1.json")!.replacingOccurrences(of: "1", with: "101"))
                    rename(b + "/d/2.json", b + "/e/2.json")
                }
            ),
            (
                "a pulls, deletes and adds", a,
                {
                    unlink(a + "/d/3.json")
                    set.write(a, "d/new.json", "{\"n\": 99}")
                }
            ),
            (
                "b pulls and edits", b,
                {
                    set.write(b, "d/4.json", set.read(b, "d/4.json")!.replacingOccurrences(of: "4", with: "44"))
                }
            ),
            (
                "a edits what b edited", a,
                {
                    set.write(a, "d/4.json", set.read(a, "d/4.json")!.replacingOccurrences(of: "4", with: "45"))
                }
            ),
            ("b pulls the merge", b, {})
        ]
        try FileManager.default.createDirectory(atPath: b + "/e", withIntermediateDirectories: true)
        for (name, root, change) in steps {
            change()
            try set.sync(root)
            let flags = try flagsAgainstTheRule(root, name)
            #expect(flags.wrong.isEmpty, "\(name): \(flags.wrong)")
        }
    }
}
