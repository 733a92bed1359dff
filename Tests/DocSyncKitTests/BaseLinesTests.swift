import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// The state's base read in place (`BaseStorage`): its lines in refId order, searched for
/// the versions a run asks for, with the run's changes merged in when it saves. Checked
/// against a dictionary doing the same operations, and through a real pull.
@Suite struct BaseLinesTests {
    /// RefIds in every shape the file must keep in order: uuids, escaped characters (a
    /// tab, a backslash, a newline sort differently once escaped), non-ASCII, prefixes.
    private static func refId(_ i: Int) -> String {
        switch i % 6 {
        case 0: return String(format: "%08x-0000-4000-8000-%012d", i * 2_654_435_761 % 4_294_967_291, i)
        case 1: return "tab\t\(i)"
        case 2: return "back\\slash\(i)"
        case 3: return "line\nbreak\(i)"
        case 4: return "ünïcode-\(i)"
        default: return "p\(i % 50)"
        }
    }

    private static func version(_ refId: String, _ n: Int) -> DocVersion {
        DocVersion(
            refId: refId, changesetId: "01a2\(n)-0000-aaaa", hash: ContentHash.of("\(refId)\(n)"),
            path: "d/\(n)\t\(refId.count).json")
    }

    private static func state(_ base: [String: DocVersion]) -> SyncState {
        var state = SyncState()
        state.base = base
        state.cursor = "drive:7"
        state.journalSeq = 4
        return state
    }

    @Test func lookupsAndChangesAgreeWithADictionary() throws {
        let dir = TempFolder("base-lines")
        var model: [String: DocVersion] = [:]
        for i in 0..<300 { model[Self.refId(i)] = Self.version(Self.refId(i), i) }
        try Self.state(model).save(to: dir.sub("state"))
        let loaded = try SyncState.load(from: dir.sub("state"))
        let storage = loaded.baseStorage
        #expect(storage.isInOrder, "a state this version wrote is not in refId order")

        var random = SystemRandomNumberGenerator()
        var lookups = 0
        for step in 0..<600 {
            // RefIds 0..<400: a quarter of them not in the file.
            let refId = Self.refId(Int.random(in: 0..<400, using: &random))
            switch Int.random(in: 0..<4, using: &random) {
            case 0: #expect(storage.set(refId, nil) == model.removeValue(forKey: refId), "step \(step): remove")
            case 1:
                let version = Self.version(refId, 1000 + step)
                #expect(storage.set(refId, version) == model.updateValue(version, forKey: refId), "step \(step): set")
            default:
                lookups += 1
                #expect(storage.version(refId) == model[refId], "step \(step): lookup of \(refId.debugDescription)")
            }
            #expect(storage.count == model.count, "step \(step): count")
        }
        #expect(storage.isUnparsed, "lookups and changes parsed the lines whole")
        #expect(storage.linesParsed <= 600 && storage.linesParsed > 0)

        // Merged in, the file is the one the same versions make written whole.
        try loaded.save(to: dir.sub("merged"))
        try Self.state(model).save(to: dir.sub("whole"))
        #expect(try FileSystem.readFile(dir.sub("merged")) == FileSystem.readFile(dir.sub("whole")))
        let again = try SyncState.load(from: dir.sub("merged"))
        #expect(again.baseStorage.isInOrder && again.base == model)
    }

    /// An older version wrote the lines in any order: read whole on the first lookup,
    /// written in order by the next save, read in place after that.
    @Test func aStateInAnOlderOrderIsReadWholeOnceThenInPlace() throws {
        let dir = TempFolder("base-lines-old")
        var model: [String: DocVersion] = [:]
        var body = "docsync-state 1\njournal\t0\t0\ncursor\t\n"
        for i in (0..<40).reversed() {
            let v = Self.version(Self.refId(i), i)
            model[v.refId] = v
            body +=
                "base\t\(FieldEscaping.escape(v.refId))\t\(v.changesetId)\t\(v.hash)\t\(FieldEscaping.escape(v.path))\n"
        }
        body += "end\t40\t0\n"
        try FileSystem.writeAtomically(dir.sub("state"), SealedFile.seal(body))
        var old = try SyncState.load(from: dir.sub("state"))
        #expect(!old.baseStorage.isInOrder)
        #expect(old.baseVersions[Self.refId(3)] == model[Self.refId(3)])
        #expect(old.baseLinesParsed == 40, "lines out of order must be read whole")
        old.journalSeq = 1  // any change: the save writes the base again
        try old.save(to: dir.sub("state"))
        let upgraded = try SyncState.load(from: dir.sub("state"))
        #expect(upgraded.baseStorage.isInOrder)
        #expect(upgraded.baseVersions[Self.refId(3)] == model[Self.refId(3)])
        #expect(upgraded.baseVersions["absent"] == nil)
        #expect(upgraded.baseLinesParsed == 1)
        #expect(upgraded.base == model)
    }

    /// A 1% push and the pull of it look up the documents they change, not every
    /// document: parsed lines are counted on the real replicas, whose base afterwards
    /// holds what their files hold.
    @Test func aSmallPushAndPullParseOnlyTheDocumentsTheyTouch() throws {
        let set = ReplicaSet()
        let (a, b) = try set.twoReplicas(
            Dictionary(uniqueKeysWithValues: (0..<200).map { ("r/\($0).json", "{\"name\": \"r\($0)\", \"n\": 1}") }))
        // Files older than the racy window, so the scan trusts the index for all of them.
        for root in [a, b] {
            #expect(ageEveryFile(root))
            _ = try Workspace.open(at: root, readOnly: true).sync.status()
        }
        for i in [3, 77] {
            set.write(
                a, "r/\(i).json", set.read(a, "r/\(i).json")!.replacingOccurrences(of: "\"n\": 1", with: "\"n\": 2"))
        }
        #expect(unlink(a + "/r/150.json") == 0)
        for (root, direction) in [(a, SyncService.Direction.push), (b, .pull)] {
            let workspace = try Workspace.open(at: root, readOnly: false)
            let report = try workspace.sync.run(direction)
            let parsed = workspace.store.state.baseLinesParsed
            workspace.close()
            #expect((direction == .push ? report.pushed : report.pulled).count == 3)
            #expect(parsed > 0 && parsed <= 20, "\(direction) of 3 documents parsed \(parsed) of 200 base lines")
        }

        // The rule: after a sync, each file's ids are its document's base version.
        let base = try SyncState.load(from: TreeLayout(root: b).state).base
        #expect(base.count == 199)
        for file in TreeWalker(root: b, ignore: IgnoreRules(text: "")).walk().files {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: b + "/" + file.path)))
                    as? [String: Any])
            let refId = try #require(object["refId"] as? String)
            #expect(base[refId]?.changesetId == object["changesetId"] as? String, "\(file.path)")
            #expect(base[refId]?.path == file.path)
        }
    }
}
