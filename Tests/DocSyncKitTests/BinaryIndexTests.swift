import Foundation
import Testing

@testable import DocSyncKit

/// The binary index (`docsync-index 2`, issue 23): every field survives a save and a load,
/// the records are in the walk's order, a damaged file is never trusted, the racy rule
/// holds, and the file-plus-changes lookups agree with a plain dictionary.
@Suite struct BinaryIndexTests {
    static func stat(inode: UInt64, size: Int64 = 10, mtime: Int64 = 1_000, ctime: Int64 = 2_000) -> FileStat {
        var st = Glibc.stat()
        st.st_ino = UInt(inode)
        st.st_size = Int(size)
        st.st_mtim = time(mtime)
        st.st_ctim = time(ctime)
        return FileStat(st)
    }

    /// Nanoseconds as a timespec (seconds rounded down: before 1970 too).
    static func time(_ nanos: Int64) -> timespec {
        let seconds = nanos >= 0 ? nanos / 1_000_000_000 : (nanos - 999_999_999) / 1_000_000_000
        return timespec(tv_sec: Int(seconds), tv_nsec: Int(nanos - seconds * 1_000_000_000))
    }

    static func hash(_ n: Int) -> String { ContentHash.of("content \(n)") }

    /// Ids of every shape a file can carry: packed ones and ones kept as text.
    static let idPairs: [(refId: String, changesetId: String)] = [
        ("5b25b1d0-2702-4a62-90af-3449bddf727e", "01a205488200-0000-9461eb2315bc"),  // both packed
        ("5B25B1D0-2702-4A62-90AF-3449BDDF727E", "01a205488200-0000-abcd"),  // upper case; a 4-letter replica
        ("contact-ada", "01A205488200-0000-9461EB2315BC"),
        ("", ""),
        ("r\t2/é", "not-an-id"),
        ("5b25b1d0-2702-4a62-90af-3449bddf727", "01a205488200-0000-9461eb2315bcd")  // one short, one long
    ]

    static let paths = [
        "plain.json", "\u{e9}t\u{e9}/caf\u{e9}.json", "e\u{301}t\u{e9}.json", "\u{1F600}.json", "a-b.json",
        "a/b.json", "tab\there/new\nline.json", "Z.json"
    ]

    @Test func everyFieldRoundTripsIncludingIdsKeptAsTextAndNonASCIIPaths() throws {
        let dir = TempFolder("binary-index")
        var cache = StatCache()
        for (n, path) in Self.paths.enumerated() {
            let ids = Self.idPairs[n % Self.idPairs.count]
            let st = Self.stat(inode: n == 0 ? .max : UInt64(n), size: Int64(n), mtime: n == 1 ? -1_000 : 5_000_000_000)
            cache.record(
                path: path, stat: st, hash: Self.hash(n), refId: ids.refId, changesetId: ids.changesetId,
                readAtNanos: n % 2 == 0 ? 0 : .max)
        }
        try cache.save(to: dir.sub("index"))
        let bytes = try FileSystem.readFile(dir.sub("index"))
        #expect(bytes.starts(with: Array("docsync-index 2\n".utf8)))
        let loaded = StatCache.load(from: dir.sub("index"))
        #expect(loaded.count == Self.paths.count)
        #expect(loaded.entries == cache.entries)
        for path in Self.paths { #expect(loaded[path] == cache[path], "\(path.debugDescription)") }
        #expect(loaded["5b25b1d0.json"] == nil && loaded["plain"] == nil)

        // Saved again from the file read in place (records copied, texts moved): the same bytes.
        var copy = loaded
        copy.record(
            path: "new.json", stat: Self.stat(inode: 99), hash: Self.hash(99), refId: "x", changesetId: "y",
            readAtNanos: 0)
        copy.remove(path: "new.json")
        try copy.save(to: dir.sub("again"))
        #expect(try FileSystem.readFile(dir.sub("again")) == bytes)
    }

    @Test func recordsAreInTheWalksOrder() throws {
        let dir = TempFolder("binary-index-order")
        for path in Self.paths where !path.contains("\n") && !path.contains("\t") {
            dir.write("tree/" + path, "{}")
        }
        for folder in ["a", "a-b", "a.c", "a0", "b/c/d", "\u{e9}", "e\u{301}"] {
            dir.write("tree/\(folder)/x.json", "{}")
        }
        let walk = TreeWalker(root: dir.sub("tree"), ignore: IgnoreRules(text: "")).walk().files
        var cache = StatCache()
        // Recorded in reverse: the order on disk is the writer's, not the caller's.
        for entry in walk.reversed() {
            cache.record(
                path: entry.path, stat: entry.stat, hash: Self.hash(1), refId: "", changesetId: "", readAtNanos: 0)
        }
        try cache.save(to: dir.sub("index"))
        let buffer = try #require(IndexFile.readWhole(dir.sub("index")))
        let file = try #require(IndexFile.open(adopting: buffer))
        #expect((0..<file.count).map(file.pathString) == walk.map(\.path))
        #expect(walk.count == 14)
    }

    /// The synced flags agree with the tracked versions whether an entry is written from
    /// this run's changes or copied from the file read in place: a refId packed or kept
    /// as text, a hash that differs in its first or last digit, another path, no refId.
    @Test func syncedFlagsMatchTheTrackedVersionsExactly() throws {
        let dir = TempFolder("binary-index-synced")
        var cache = StatCache()
        var tracked: [String: DocVersion] = [:]
        for n in 0..<3 {
            let path = "doc\(n).json"
            cache.record(
                path: path, stat: Self.stat(inode: UInt64(n + 1)), hash: Self.hash(n), refId: Self.idPairs[n].refId,
                changesetId: Self.idPairs[n].changesetId, readAtNanos: .max)
            tracked[Self.idPairs[n].refId] = DocVersion(
                refId: Self.idPairs[n].refId, changesetId: "any", hash: Self.hash(n), path: path)
        }
        cache.record(
            path: "no-ids.json", stat: Self.stat(inode: 9), hash: Self.hash(9), refId: "", changesetId: "",
            readAtNanos: .max)
        var changed = tracked
        func alter(_ refId: String, _ change: (inout DocVersion) -> Void) { change(&changed[refId]!) }
        let first = Self.idPairs[0].refId, second = Self.idPairs[1].refId, third = Self.idPairs[2].refId
        alter(first) { v in v.hash = (v.hash.first == "0" ? "1" : "0") + v.hash.dropFirst() }
        alter(second) { v in v.hash = v.hash.dropLast() + (v.hash.last == "0" ? "1" : "0") }
        alter(third) { v in v.path = "elsewhere.json" }
        for (name, versions, expected) in [
            ("the same versions", tracked, [true, true, true, false]),
            ("one digit off, another path", changed, [false, false, false, false])
        ] {
            let against = UnchangedTree.Against(stamp: 7, tracked: VersionTable(versions))
            var fromChanges = cache
            try fromChanges.save(to: dir.sub("changes"), synced: against)
            var fromFile = StatCache.load(from: dir.sub("changes"))
            try fromFile.save(to: dir.sub("file"), synced: against)
            for saved in ["changes", "file"] {
                let file = try #require(IndexFile.readWhole(dir.sub(saved)).flatMap(IndexFile.open))
                #expect(file.stamp == 7)
                #expect((0..<file.count).map(file.isSynced) == expected, "\(name), written from \(saved)")
            }
        }
    }

    /// A sound file of three entries, and where each part of it starts.
    static func soundFile(_ dir: TempFolder) throws -> [UInt8] {
        var cache = StatCache()
        for (n, path) in ["a.json", "b.json", "user-ids.json"].enumerated() {
            cache.record(
                path: path, stat: stat(inode: UInt64(n + 1)), hash: hash(n), refId: idPairs[n].refId,
                changesetId: idPairs[n].changesetId, readAtNanos: .max)
        }
        try cache.save(to: dir.sub("sound"))
        return try FileSystem.readFile(dir.sub("sound"))
    }

    @Test func aDamagedOrTruncatedFileIsDroppedWhole() throws {
        let dir = TempFolder("binary-index-damage")
        let sound = try Self.soundFile(dir)
        let records = 32
        let strings = 32 + 3 * 112
        let checksum = sound.count - 32
        #expect(StatCache.load(from: dir.sub("sound")).count == 3)
        // A byte of each part: the magic, the count, the record size, the stamp; a record's
        // path reference, inode, hash, flags, ids; the string table; the checksum.
        let positions = [
            0, 15, 16, 20, 24, records, records + 8, records + 40, records + 72, records + 80,
            records + 112 + 96, strings, checksum - 1, checksum, sound.count - 1
        ]
        for position in positions {
            var damaged = sound
            damaged[position] ^= 0x20
            try FileSystem.writeAtomically(dir.sub("index"), damaged)
            #expect(StatCache.load(from: dir.sub("index")).count == 0, "byte \(position) flipped")
        }
        for length in [0, 16, 31, 32, records + 50, strings, strings + 3, checksum, sound.count - 1] {
            try FileSystem.writeAtomically(dir.sub("index"), Array(sound[0..<length]))
            #expect(StatCache.load(from: dir.sub("index")).count == 0, "cut at \(length)")
        }
        // Damage that a checksum made afterwards would pass: still refused by the checks.
        for (name, change) in Self.resealedDamage {
            var damaged = Array(sound[0..<checksum])
            change(&damaged)
            damaged += ContentHash.raw(ContentHash.of(damaged))!
            try FileSystem.writeAtomically(dir.sub("index"), damaged)
            #expect(StatCache.load(from: dir.sub("index")).count == 0, "\(name)")
        }
    }

    /// Changes to a body (header and records) that keep it the right size.
    static var resealedDamage: [(String, (inout [UInt8]) -> Void)] {
        [
            ("a path past the string table", { $0[32 + 4] = 200 }),
            ("an id past the string table", { $0[32 + 2 * 112 + 80 + 1] = 5 }),
            ("an unknown flag", { $0[32 + 72] |= 16 }),
            (
                "two records swapped",
                { b in
                    let first = Array(b[32..<(32 + 112)])
                    b.replaceSubrange(32..<(32 + 112), with: b[(32 + 112)..<(32 + 224)])
                    b.replaceSubrange((32 + 112)..<(32 + 224), with: first)
                }
            ),
            ("more entries than records", { $0[16] = 4 })
        ]
    }

    @Test func theRacyRuleSurvivesTheFile() throws {
        let dir = TempFolder("binary-index-racy")
        let mtime: Int64 = 1_800_000_000_000_000_000
        var cache = StatCache()
        // Read 1 s after its last change: it could change again unseen, so it is re-read.
        cache.record(
            path: "fresh.json", stat: Self.stat(inode: 1, mtime: mtime), hash: Self.hash(1), refId: "", changesetId: "",
            readAtNanos: mtime + 1_000_000_000)
        // Read 3 s after: trusted while its stat data stays the same.
        cache.record(
            path: "settled.json", stat: Self.stat(inode: 2, mtime: mtime), hash: Self.hash(2), refId: "",
            changesetId: "", readAtNanos: mtime + 3_000_000_000)
        try cache.save(to: dir.sub("index"))
        let loaded = StatCache.load(from: dir.sub("index"))
        #expect(loaded["fresh.json"]?.racy == true)
        #expect(loaded["fresh.json"]?.matches(Self.stat(inode: 1, mtime: mtime)) == false)
        #expect(loaded["settled.json"]?.matches(Self.stat(inode: 2, mtime: mtime)) == true)
        #expect(loaded["settled.json"]?.matches(Self.stat(inode: 2, mtime: mtime + 1)) == false)
        #expect(loaded["settled.json"]?.matches(Self.stat(inode: 3, mtime: mtime)) == false)
    }

    @Test func lookupsAgreeWithADictionaryOverRandomChanges() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("BinaryIndexTests seed \(seed)")
        var random = SeededGenerator(seed: seed)
        let dir = TempFolder("binary-index-model")
        let names = (0..<60).map { n in ["d\(n % 7)/", "", "\u{e9}\(n % 3)-"][n % 3] + "f\(n).json" }
        var cache = StatCache()
        var model: [String: StatCache.Entry] = [:]
        for step in 0..<400 {
            let path = names.randomElement(using: &random)!
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let n = Int.random(in: 0..<1000, using: &random)
                let st = Self.stat(inode: UInt64(n), size: Int64(n))
                let ids = Self.idPairs[n % Self.idPairs.count]
                cache.record(
                    path: path, stat: st, hash: Self.hash(n), refId: ids.refId, changesetId: ids.changesetId,
                    readAtNanos: .max)
                model[path] = StatCache.Entry(
                    inode: UInt64(n), size: Int64(n), mtimeNanos: 1_000, ctimeNanos: 2_000, hash: Self.hash(n),
                    refId: ids.refId, changesetId: ids.changesetId, racy: false)
            case 5..<8:
                cache.remove(path: path)
                model[path] = nil
            case 8:
                let kept = names.filter { _ in Bool.random(using: &random) }.sorted(by: UTF8Order.precedes)
                cache.retain(walkOrder: kept)
                model = model.filter { kept.contains($0.key) }
            default:
                try cache.save(to: dir.sub("index"))
                cache = StatCache.load(from: dir.sub("index"))
            }
            try Self.expectAgreement(cache, model, names, "seed \(seed), step \(step)")
        }
    }

    static func expectAgreement(
        _ cache: StatCache, _ model: [String: StatCache.Entry], _ names: [String], _ context: String
    ) throws {
        #expect(cache.count == model.count, "\(context)")
        var cursor = StatCache.Cursor()
        for path in names.sorted(by: UTF8Order.precedes) {
            #expect(cache.entry(path, cursor: &cursor) == model[path], "\(context): \(path) in walk order")
        }
        for path in names { #expect(cache[path] == model[path], "\(context): \(path)") }
        #expect(cache.entries == model, "\(context)")
    }
}
