import DocSyncKit
import Foundation
import Testing

/// A tree made by a docsync from before the binary index (issue 23) keeps its text index
/// (`docsync-index 1`): the built binary reads it, trusts it as it did, writes it back as
/// the binary file once, and the tree keeps syncing with a replica whose index is binary.
@Suite struct IndexUpgradeTests {
    /// The text index an older docsync wrote (docs/FORMATS.md), sealed as it sealed it.
    static func textIndex(_ entries: [String: StatCache.Entry]) -> String {
        var body = "docsync-index 1\n"
        for (path, e) in entries {
            let fields = [
                path, "\(e.inode)", "\(e.size)", "\(e.mtimeNanos)", "\(e.ctimeNanos)", e.hash, e.refId, e.changesetId,
                e.racy ? "r" : "-"
            ]
            body += fields.joined(separator: "\t") + "\n"
        }
        return body + "#sha256 \(ContentHash.of(body))\n"
    }

    static let binaryMagic = Array("docsync-index 2\n".utf8)

    /// Replica A with three documents synced to a folder remote, and B cloned from it.
    static func twoSyncedReplicas() -> (Sandbox, Replica, Replica) {
        let box = Sandbox()
        let a = box.initReplica(
            "A", files: ["a.json": "{\"v\": 1}\n", "b.json": "{\"v\": 2}\n", "c.json": "{\"v\": 3}\n"])
        a.sync()
        return (box, a, box.clone("B"))
    }

    @Test("a text index is read, trusted, converted once, and the tree keeps syncing")
    func textIndexConvertsOnce() throws {
        let (box, a, b) = Self.twoSyncedReplicas()
        defer { withExtendedLifetime(box) {} }  // it removes the trees when it goes
        let synced = StatCache.load(from: a.path(".docsync/index")).entries
        #expect(synced.count == 3 && a.bytes(".docsync/index")?.starts(with: Self.binaryMagic) == true)

        // c.json changes without a sync; the text index still vouches for its old content
        // (its stat data as it is now), so only a tree that reads the text index misses it.
        a.write("c.json", a.read("c.json")!.replacing("\"v\": 3", with: "\"v\": 4"))
        var entries = synced
        for path in entries.keys {
            let now = try FileSystem.linkStatus(a.path(path))
            entries[path]!.size = now.size
            entries[path]!.mtimeNanos = now.mtimeNanos
            entries[path]!.ctimeNanos = now.ctimeNanos
            entries[path]!.inode = now.inode
            entries[path]!.racy = false
        }
        a.write(".docsync/index", Self.textIndex(entries))

        let status = a.run("status")
        #expect(status.exit == 0 && status.stdout.contains("Nothing to sync."), status.comment)
        // `status` saved what it read (as it saves a refreshed index): in the binary layout.
        #expect(a.bytes(".docsync/index")?.starts(with: Self.binaryMagic) == true)
        #expect(StatCache.load(from: a.path(".docsync/index")).entries == entries)
        #expect(a.sync().stdout.contains("0 recorded, 0 pulled, 0 pushed"))

        // Once c.json's stat data moves, its content is read and recorded.
        a.write("c.json", a.read("c.json")!)
        #expect(a.sync().stdout.contains("1 recorded, 0 pulled, 1 pushed"))
        b.write("a.json", b.read("a.json")!.replacing("\"v\": 1", with: "\"v\": 10"))
        #expect(b.sync().stdout.contains("1 recorded, 1 pulled, 1 pushed"))
        #expect(a.sync().stdout.contains("0 recorded, 1 pulled, 0 pushed"))
        #expect(a.documents() == b.documents())
        #expect(a.json("c.json")?["v"] as? Int == 4 && a.json("a.json")?["v"] as? Int == 10)
        #expect(a.bytes(".docsync/index")?.starts(with: Self.binaryMagic) == true)
        #expect(a.run("verify").exit == 0)
    }

    @Test("a bit flipped in the binary index drops it: every file is read again, nothing is recorded or lost")
    func damagedBinaryIndex() throws {
        let box = Sandbox()
        let a = box.initReplica("A", files: ["a.json": "{\"v\": 1}\n", "b.json": "{\"v\": 2}\n"])
        a.sync()
        let docs = a.documents()
        var bytes = try #require(a.bytes(".docsync/index"))
        bytes[40] ^= 1
        a.writeBytes(".docsync/index", bytes)
        #expect(StatCache.load(from: a.path(".docsync/index")).count == 0)
        #expect(a.sync().stdout.contains("0 recorded, 0 pulled, 0 pushed"))
        #expect(StatCache.load(from: a.path(".docsync/index")).count == 2)
        #expect(a.documents() == docs)
    }

    /// The state as a docsync from before the base came last wrote it: the base's lines
    /// (from the base file, which that version did not have) first, the pending actions
    /// after them, resealed, with the header of that version.
    static func baseFirst(_ r: Replica) throws -> String {
        let state = try #require(r.bytes(".docsync/state"))
        let baseName = try #require(BaseFileTests.baseFiles(r).first)
        let baseFile = String(decoding: try #require(r.bytes(".docsync/" + baseName)), as: UTF8.self)
        let lines = String(decoding: state, as: UTF8.self).split(separator: "\n").map(String.init)
        let body = lines.filter { !$0.hasPrefix("#sha256") && !$0.hasPrefix("basefile\t") }
        let position = body.dropFirst().filter { !$0.hasPrefix("pending\t") && !$0.hasPrefix("end\t") }
        let base = baseFile.split(separator: "\n").map(String.init).filter { $0.hasPrefix("base\t") }
        let reordered =
            ["docsync-state 1"] + position + base + body.filter { $0.hasPrefix("pending\t") }
            + body.filter { $0.hasPrefix("end\t") }
        let text = reordered.joined(separator: "\n") + "\n"
        r.remove(".docsync/" + baseName)
        return text + "#sha256 \(ContentHash.of(text))\n"
    }

    @Test("a state with its base first and an action pending after it opens, syncs, and is written base last once")
    func stateWithTheBaseFirstConverts() throws {
        let (box, a, b) = Self.twoSyncedReplicas()
        defer { withExtendedLifetime(box) {} }  // it removes the trees when it goes
        // A deletion recorded and not pushed yet: pending in the state.
        #expect(a.run("rm", "b.json").exit == 0)
        let old = try Self.baseFirst(a)
        #expect(
            old.contains("\npending\t")
                && old.range(of: "\nbase\t")!.lowerBound < old.range(of: "\npending\t")!.lowerBound)
        a.write(".docsync/state", old)

        let status = a.run("status")
        #expect(status.exit == 0 && status.stdout.contains("b.json"), status.comment)
        #expect(a.sync().stdout.contains("0 recorded, 0 pulled, 1 pushed"))
        let converted = String(decoding: try #require(a.bytes(".docsync/state")), as: UTF8.self)
        #expect(converted.hasPrefix("docsync-state 2\n") && converted.contains("\nbasefile\t"))
        #expect(!converted.contains("\nbase\t"), "the base is in its own file once converted")
        #expect(b.sync().stdout.contains("0 recorded, 1 pulled, 0 pushed"))
        #expect(a.documents() == b.documents() && !b.exists("b.json"))
        #expect(a.run("verify").exit == 0 && b.run("verify").exit == 0)
    }
}
