import Foundation
import Testing

@testable import DocSyncKit

/// The pieces every run goes through on every file, made faster for issue 13 (the
/// parallel walk, byte order, the in-place index and state readers): checked against
/// independent answers, not against themselves.
@Suite struct ScanPathTests {
    /// Byte order of the paths' UTF-8, computed without the code under test.
    static func byteSorted(_ paths: [String]) -> [String] {
        paths.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    @Test func parallelWalkFindsEveryFileInByteOrder() throws {
        let dir = TempFolder("walk")
        // Names whose byte order differs from folder-first or String order: "-" and "."
        // sort before "/", "0" after it; "é" in two normal forms are different files.
        var expected: [String] = []
        for folder in ["a", "a-b", "a.c", "a0", "b/c/d", "z", "\u{e9}", "e\u{301}"] {
            for name in ["x.json", "a.json", "A.json", "a-.json"] {
                dir.write(folder + "/" + name, "{}")
                expected.append(folder + "/" + name)
            }
        }
        for i in 0..<40 {
            dir.write("many/f\(i % 7)/doc\(i).json", "{}")
            expected.append("many/f\(i % 7)/doc\(i).json")
        }
        // The same below the root: a file, a folder of its name and one past it by "-".
        for path in ["b/c.json", "b/c/a.json", "b/c-x/y.json", "b/c0.json", "b/c/d.json"] {
            dir.write(path, "{}")
            expected.append(path)
        }
        dir.write("top.json", "{}")
        dir.write("a.json", "{}")
        dir.write("notes.txt", "not a document")
        dir.write("many/f1/readme.md", "not a document")
        expected += ["top.json", "a.json"]
        let walk = TreeWalker(root: dir.path, ignore: IgnoreRules(text: "")).walk()
        #expect(walk.files.map(\.path) == Self.byteSorted(expected))
        #expect(walk.skipped.isEmpty)
        // The same answer every time, whichever worker finished first.
        for _ in 0..<5 {
            #expect(
                TreeWalker(root: dir.path, ignore: IgnoreRules(text: "")).walk().files.map(\.path)
                    == walk.files.map(\.path))
        }
    }

    @Test func parallelWalkHonoursIgnoreRulesAndNestedTrees() throws {
        let dir = TempFolder("walk-ignore")
        dir.write("keep/a.json", "{}")
        dir.write("skip/a.json", "{}")
        dir.write("deep/x/skip/b.json", "{}")
        dir.write("deep/x/c.json", "{}")
        dir.write("other/.docsync/config.json", "{}")
        dir.write("other/d.json", "{}")
        let walk = TreeWalker(root: dir.path, ignore: IgnoreRules(text: "skip/\n")).walk()
        #expect(walk.files.map(\.path) == ["deep/x/c.json", "keep/a.json"])
        #expect(walk.skipped.map(\.path) == ["other"])
    }

    @Test func utf8OrderIsByteOrder() {
        let samples = ["", "a", "a/b", "a-b", "a.b", "a0", "\u{e9}", "e\u{301}", "\u{1F600}", "Z", "a\u{0}b", "ab", "a"]
        for x in samples {
            for y in samples {
                #expect(
                    UTF8Order.precedes(x, y) == Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8)),
                    "\(x.debugDescription) < \(y.debugDescription)")
            }
        }
        // A bridged (non-native) string takes the other path and agrees.
        let bridged = NSString(string: "a-b") as String
        #expect(UTF8Order.precedes(bridged, "a/b") && !UTF8Order.precedes("a/b", bridged))
    }

    @Test func indexRoundTripsEveryFieldThroughTheInPlaceReader() throws {
        let dir = TempFolder("index")
        var cache = StatCache()
        let odd = "tab\there/back\\slash/new\nline.json"
        let stat = try FileSystem.linkStatus(dir.path)
        cache.record(
            path: "plain.json", stat: stat, hash: String(repeating: "a", count: 64), refId: "r1", changesetId: "c1",
            readAtNanos: 0)
        cache.record(
            path: odd, stat: stat, hash: String(repeating: "b", count: 64), refId: "r\t2", changesetId: "",
            readAtNanos: .max)
        try cache.save(to: dir.sub("index"))
        let loaded = StatCache.load(from: dir.sub("index"))
        #expect(loaded.entries == cache.entries)
        #expect(loaded[odd]?.refId == "r\t2")
        // Read at time 0: within the racy window of its own mtime. Read at the end of time: not.
        #expect(loaded[odd]?.racy == false && loaded["plain.json"]?.racy == true)

        // Written by hand: the largest inode, a negative time (before 1970).
        let body = "docsync-index 1\nx.json\t18446744073709551615\t5\t-1000\t7\th\tr\tc\tr\n"
        try FileSystem.writeAtomically(dir.sub("hand"), SealedFile.seal(body))
        let hand = StatCache.load(from: dir.sub("hand"))
        #expect(
            hand["x.json"]
                == StatCache.Entry(
                    inode: .max, size: 5, mtimeNanos: -1000, ctimeNanos: 7, hash: "h", refId: "r", changesetId: "c",
                    racy: true))
    }

    @Test func damagedIndexIsDroppedWhole() throws {
        let dir = TempFolder("index-damage")
        for body in [
            "docsync-index 2\n", "docsync-index 1\nx.json\t1\t2\n",
            "docsync-index 1\nx.json\t99999999999999999999999\t1\t1\t1\th\tr\tc\t-\n",
            "docsync-index 1\nx.json\t1\tfive\t1\t1\th\tr\tc\t-\n"
        ] {
            try FileSystem.writeAtomically(dir.sub("index"), SealedFile.seal(body))
            #expect(StatCache.load(from: dir.sub("index")).entries.isEmpty, "\(body.debugDescription)")
        }
        var sealed = SealedFile.seal("docsync-index 1\nx.json\t1\t2\t3\t4\th\tr\tc\t-\n")
        #expect(
            StatCache.load(
                from: {
                    try! FileSystem.writeAtomically(dir.sub("good"), sealed)
                    return dir.sub("good")
                }()
            ).entries.count == 1)
        sealed[20] ^= 1
        try FileSystem.writeAtomically(dir.sub("flipped"), sealed)
        #expect(StatCache.load(from: dir.sub("flipped")).entries.isEmpty)
    }

    @Test func stateRoundTripsAndRefusesDamage() throws {
        let dir = TempFolder("state")
        var state = SyncState()
        state.base["r1"] = DocVersion(
            refId: "r1", changesetId: "c1", hash: String(repeating: "c", count: 64), path: "a b/\u{e9}\t.json")
        state.base["r2"] = DocVersion(
            refId: "r2", changesetId: "c2", hash: String(repeating: "d", count: 64), path: "x.json")
        state.cursor = "cursor\\with\ttab"
        state.lastSync = 1_700_000_000_000
        state.journalSeq = 12
        state.journalOffset = 3456
        state.pending = [
            JournalEntry(
                .local(
                    .update,
                    version: DocVersion(
                        refId: "r2", changesetId: "c3", hash: String(repeating: "e", count: 64), path: "x.json"),
                    fromPath: nil))
        ]
        try state.save(to: dir.sub("state"))
        let loaded = try SyncState.load(from: dir.sub("state"))
        #expect(loaded.base == state.base)
        #expect(loaded.cursor == state.cursor && loaded.lastSync == state.lastSync)
        #expect(loaded.journalSeq == 12 && loaded.journalOffset == 3456)
        #expect(loaded.pending.map(\.refId) == ["r2"])

        var bytes = try FileSystem.readFile(dir.sub("state"))
        bytes[30] ^= 1
        try FileSystem.writeAtomically(dir.sub("state"), bytes)
        #expect(throws: SyncState.Damaged.self) { try SyncState.load(from: dir.sub("state")) }
        try FileSystem.writeAtomically(dir.sub("state"), SealedFile.seal("docsync-state 1\nbase\tr1\tc1\th\tp.json\n"))
        #expect(throws: SyncState.Damaged.self) { try SyncState.load(from: dir.sub("state")) }  // no end record
        try FileSystem.writeAtomically(
            dir.sub("state"), SealedFile.seal("docsync-state 1\nbase\tr1\tc1\th\tp.json\nend\t2\t0\n"))
        #expect(throws: SyncState.Damaged.self) { try SyncState.load(from: dir.sub("state")) }  // count mismatch
    }

    @Test func atomicWritesLeaveNoTemporaryFilesAndNameDistinctTemporaries() throws {
        let dir = TempFolder("atomic")
        for i in 0..<200 {
            try FileSystem.writeAtomically(dir.sub("f\(i % 10).json"), Array("\(i)".utf8), durable: false)
        }
        let names = try FileSystem.listDirectory(dir.path).sorted()
        #expect(names == (0..<10).map { "f\($0).json" }.sorted())
        #expect(dir.read("f3.json") == "193")
        for (path, folder, name) in [
            ("/a/b.json", "/a", "b.json"), ("/b.json", "/", "b.json"), ("b.json", "", "b.json"),
            ("a/\u{e9}/c d.json", "a/\u{e9}", "c d.json")
        ] {
            let split = FileSystem.splitLast(path)
            #expect(split.folder == folder && split.name == name, "\(path)")
        }
    }

    @Test func sealedBuilderWritesNumbersAndEscapesLikeTheTextFormat() throws {
        let dir = TempFolder("sealed")
        try SealedFile.write(to: dir.sub("f"), durable: false) { out in
            for value in [Int64(0), 7, -7, 1_795_624_385_801_208_788, .max, .min] {
                out.number(value)
                out.tab()
            }
            out.number(UInt64.max)
            out.newline()
            out.text("a\tb\\c\nd")
            out.tab()
            out.raw("plain")
            out.newline()
        }
        let body =
            "0\t7\t-7\t1795624385801208788\t\(Int64.max)\t\(Int64.min)\t\(UInt64.max)\n"
            + FieldEscaping.escape("a\tb\\c\nd") + "\tplain\n"
        #expect(try FileSystem.readFile(dir.sub("f")) == SealedFile.seal(body))
    }

    /// A body of several megabytes is written a megabyte at a time: the bytes and the
    /// trailer are exactly those of the body sealed whole.
    @Test func aSealedFileWrittenInPartsIsTheBodySealedWhole() throws {
        let dir = TempFolder("sealed-parts")
        let lines = (0..<60_000).map { "line\t\($0)\t" + String(repeating: "\u{e9}", count: $0 % 40) + "\n" }
        #expect(lines.reduce(0) { $0 + $1.utf8.count } > 2 * SealedFile.chunkBytes)
        try SealedFile.write(to: dir.sub("f"), durable: true) { out in
            for (n, _) in lines.enumerated() {
                out.raw("line")
                out.tab()
                out.number(n)
                out.tab()
                out.raw(String(repeating: "\u{e9}", count: n % 40))
                out.newline()
            }
        }
        #expect(try FileSystem.readFile(dir.sub("f")) == SealedFile.seal(lines.joined()))
        var read = 0
        #expect(SealedFile.forEachLine(try FileSystem.readFile(dir.sub("f"))) { _ in read += 1 } && read == lines.count)
    }

    /// A build that fails half-way (after parts of it were written) leaves the old file.
    @Test func aSealedFileWhoseBuildFailsLeavesTheOldOne() throws {
        struct Stop: Error {}
        let dir = TempFolder("sealed-fail")
        try FileSystem.writeAtomically(dir.sub("f"), SealedFile.seal("old\n"))
        #expect(throws: Stop.self) {
            try SealedFile.write(to: dir.sub("f"), durable: true) { out in
                for n in 0..<400_000 {
                    out.raw("new")
                    out.tab()
                    out.number(n)
                    out.newline()
                }
                throw Stop()
            }
        }
        #expect(try FileSystem.readFile(dir.sub("f")) == SealedFile.seal("old\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["f"], "no temporary file left")
    }

    /// The inside of an ignore pattern's `[…]`: a list, ranges, and `!` or `^` negating.
    @Test(arguments: [
        ("abc", "b", true), ("abc", "d", false), ("a-c", "b", true), ("a-c", "-", false),
        ("!a-c", "b", false), ("^a-c", "d", true), ("a-", "-", true), ("x0-9", "5", true)
    ])
    func ignoreBracketAdmits(inside: String, byte: String, admitted: Bool) {
        #expect(Glob.bracket(Array(inside.utf8)[...], admits: byte.utf8.first!) == admitted)
    }
}
