import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

/// The state's base in a file of its own, named by its checksum (`BaseFile`): written
/// only when the base changed, read only when asked for, the one before removed, and a
/// state an older version wrote (its base as its own lines) converted by its next save.
@Suite struct BaseFileFormatTests {
    private static func version(_ i: Int, _ n: Int = 0) -> DocVersion {
        DocVersion(
            refId: String(format: "%08x-0000-4000-8000-%012d", i &* 2_654_435_761 % 4_294_967_291, i),
            changesetId: "01a2\(n)-0000-aaaa", hash: ContentHash.of("\(i)/\(n)"), path: "d/\(i).json")
    }

    private static func baseFiles(_ folder: String) -> [String] {
        ((try? FileSystem.listDirectory(folder)) ?? []).filter { $0.hasPrefix("base-") }.sorted()
    }

    @Test func theBaseIsAFileNamedByItsChecksumWrittenOnlyWhenItChanges() throws {
        let dir = TempFolder("base-file")
        var model: [String: DocVersion] = [:]
        for i in 0..<300 { model[Self.version(i).refId] = Self.version(i) }
        var state = SyncState()
        state.base = model
        state.cursor = "drive:3"
        try state.save(to: dir.sub("state"))

        // One base file; its name is the SHA-256 of its body, and the state names it.
        let files = Self.baseFiles(dir.path)
        try #require(files.count == 1)
        let bytes = try FileSystem.readFile(dir.sub(files[0]))
        let (end, digest) = try #require(SealedFile.bodyAndDigest(bytes))
        #expect(files[0] == "base-" + ContentHash.of(bytes[0..<end]) && files[0] == "base-" + digest)
        let stateText = String(decoding: try FileSystem.readFile(dir.sub("state")), as: UTF8.self)
        #expect(stateText.hasPrefix("docsync-state 2\n"))
        #expect(stateText.contains("basefile\t\(digest)\t300\t\(bytes.count)\n"))
        #expect(!stateText.contains("\nbase\t") && stateText.utf8.count < 300, "the state holds no base line")

        // Loaded: counted without reading; read at the first lookup.
        var loaded = try SyncState.load(from: dir.sub("state"))
        #expect(!loaded.baseFileRead && loaded.baseCount == 300)
        // A save of an unchanged base writes no base file (the same inode) and reads none.
        let inode = try FileSystem.status(dir.sub(files[0])).inode
        loaded.cursor = "drive:4"
        try loaded.save(to: dir.sub("state"))
        #expect(!loaded.baseFileRead, "saving an unchanged base read it")
        let inodeAfter = try FileSystem.status(dir.sub(files[0])).inode
        #expect(Self.baseFiles(dir.path) == files && inodeAfter == inode)

        // A changed base: a new file, the one before removed.
        var again = try SyncState.load(from: dir.sub("state"))
        #expect(again.baseVersions[Self.version(7).refId] == model[Self.version(7).refId])
        #expect(again.baseFileRead)
        again.base[Self.version(7).refId] = Self.version(7, 1)
        model[Self.version(7).refId] = Self.version(7, 1)
        try again.save(to: dir.sub("state"))
        let after = Self.baseFiles(dir.path)
        #expect(after.count == 1 && after != files, "\(files) → \(after)")
        #expect(try SyncState.load(from: dir.sub("state")).base == model)

        // A base file a killed run wrote and no state names is removed by the next save.
        try FileSystem.writeAtomically(dir.sub("base-" + String(repeating: "0", count: 64)), [1])
        try again.save(to: dir.sub("state"))
        #expect(Self.baseFiles(dir.path) == after)

        // An empty base has no file.
        try SyncState().save(to: dir.sub("state"))
        #expect(Self.baseFiles(dir.path).isEmpty)
        #expect(try SyncState.load(from: dir.sub("state")).baseCount == 0)
    }

    /// The digest in a state names a file: nothing but 64 hex digits is taken.
    @Test func aBaseFileNameThatIsNotADigestIsRefused() throws {
        let dir = TempFolder("base-file-name")
        for digest in ["../../etc/passwd", String(repeating: "a", count: 63) + "/", String(repeating: "A", count: 64)] {
            let body = "docsync-state 2\njournal\t0\t0\ncursor\t\nbasefile\t\(digest)\t1\t10\nend\t1\t0\n"
            try FileSystem.writeAtomically(dir.sub("state"), SealedFile.seal(body))
            #expect(throws: SyncState.Damaged.self) { try SyncState.load(from: dir.sub("state")) }
        }
    }

    /// The upgrade: a tree whose state an older version wrote (`docsync-state 1`, the base
    /// as its last lines) opens, converts at its first save, and syncs with a replica that
    /// converted already; both end with what their files hold.
    @Test func anOlderStateConvertsOnceAndSyncsWithAConvertedReplica() throws {
        let set = ReplicaSet()
        let (a, b) = try set.twoReplicas(
            Dictionary(uniqueKeysWithValues: (0..<20).map { ("r/\($0).json", "{\"n\": \($0)}") }))
        let layout = TreeLayout(root: a)
        try Self.writeInOlderFormat(layout)
        #expect(Self.baseFiles(layout.metadata).isEmpty)
        #expect(try SyncState.load(from: layout.state).baseCount == 20)

        set.write(a, "r/3.json", "{\"n\": 33}")
        set.write(b, "r/4.json", "{\"n\": 44}")
        for root in [a, b, a] {
            let workspace = try Workspace.open(at: root, readOnly: false, baseOnDemand: true)
            _ = try workspace.sync.run(.both)
            workspace.close()
        }
        let text = String(decoding: try FileSystem.readFile(layout.state), as: UTF8.self)
        #expect(text.hasPrefix("docsync-state 2\n") && Self.baseFiles(layout.metadata).count == 1)
        for root in [a, b] {
            let base = try SyncState.load(from: TreeLayout(root: root).state).base
            #expect(base.count == 20)
            #expect(set.read(root, "r/3.json")?.contains("33") == true)
            #expect(set.read(root, "r/4.json")?.contains("44") == true)
            for (_, version) in base {
                let text = try #require(set.read(root, version.path))
                #expect(text.contains(version.changesetId), "\(root): \(version.path)")
            }
        }
    }

    /// Rewrites the tree's state as the version before this one wrote it: no base file,
    /// its lines after the others, header 1.
    static func writeInOlderFormat(_ layout: TreeLayout) throws {
        let state = String(decoding: try FileSystem.readFile(layout.state), as: UTF8.self)
        let names = baseFiles(layout.metadata)
        let baseName = try #require(names.first)
        let base = String(decoding: try FileSystem.readFile(layout.metadata + "/" + baseName), as: UTF8.self)
        let baseLines = base.split(separator: "\n", omittingEmptySubsequences: false).filter { $0.hasPrefix("base\t") }
        var lines = state.split(separator: "\n").filter { !$0.hasPrefix("#sha256") && !$0.hasPrefix("basefile\t") }
        lines[0] = "docsync-state 1"
        let end = lines.removeLast()
        #expect(end.hasPrefix("end\t"))
        let body = (lines + baseLines + [end]).joined(separator: "\n") + "\n"
        try FileSystem.writeAtomically(layout.state, SealedFile.seal(body))
        #expect(unlink(layout.metadata + "/" + baseName) == 0)
    }
}
