import Foundation
import Testing

@testable import DocSyncKit

@Suite struct JournalTests {
    func sampleEntries() -> [JournalEntry] {
        [
            JournalEntry(
                .local(
                    .create,
                    version: DocVersion(
                        refId: "r1", changesetId: "c1", hash: String(repeating: "a", count: 64), path: "a.json"),
                    fromPath: nil)),
            JournalEntry(
                .local(
                    .update,
                    version: DocVersion(
                        refId: "r1", changesetId: "c2", hash: String(repeating: "b", count: 64), path: "a.json"),
                    fromPath: nil)),
            JournalEntry(
                .local(
                    .rename,
                    version: DocVersion(
                        refId: "r1", changesetId: "c2", hash: String(repeating: "b", count: 64), path: "b/ü \"x\".json"),
                    fromPath: "a.json"))
        ]
    }

    @Test func appendsNumberedEntriesAndReadsThemBack() throws {
        let dir = TempFolder()
        let journal = Journal(path: dir.sub("journal"))
        _ = try journal.read(repair: true)
        let sample = sampleEntries()
        let seqs = try journal.append(sample)
        #expect(Array(seqs) == [1, 2, 3])
        let reread = Journal(path: dir.sub("journal"))
        let entries = try reread.read(repair: false)
        let written = zip(sample, seqs).map { entry, seq in
            var numbered = entry
            numbered.seq = seq
            return numbered
        }
        #expect(entries == written)
        #expect(reread.nextSeq == 4)
        #expect(reread.warnings.isEmpty)
    }

    /// A batch is all or nothing: cut anywhere inside it (between its lines too), only
    /// the entries before it are read, with a warning, and repair cuts the file back.
    @Test func aBatchCutAnywhereIsDroppedWhole() throws {
        let dir = TempFolder()
        let path = dir.sub("journal")
        let journal = Journal(path: path)
        _ = try journal.read(repair: true)
        try journal.append([sampleEntries()[0]])
        let before = try FileSystem.readFile(path).count
        try journal.append(Array(sampleEntries().dropFirst()))
        let full = try FileSystem.readFile(path)
        for cut in before..<full.count {
            try FileSystem.writeAtomically(path, Array(full[0..<cut]), durable: false)
            let reader = Journal(path: path)
            let entries = try reader.read(repair: cut > before)
            #expect(entries.map(\.seq) == [1], "cut at \(cut)")
            #expect(reader.nextSeq == 2)
            #expect(cut == before || reader.warnings.count == 1, "cut at \(cut)")
            if cut > before {
                #expect(try FileSystem.readFile(path).count == before, "repaired to the end of the last whole batch")
            }
        }
        // Whole, it reads back whole, and entries carry no batch marker outside the file.
        try FileSystem.writeAtomically(path, full, durable: false)
        let whole = try Journal(path: path).read(repair: false)
        #expect(whole.map(\.seq) == [1, 2, 3] && whole.allSatisfy { $0.more == nil })
    }

    /// A crash mid-append can leave any prefix of the last line. Every such cut must
    /// keep all earlier entries, drop the torn one with a warning, and be repaired.
    @Test func tornLastLineAtEveryByteOffsetKeepsEarlierEntries() throws {
        let dir = TempFolder()
        let path = dir.sub("journal")
        let journal = Journal(path: path)
        _ = try journal.read(repair: true)
        try journal.append(Array(sampleEntries().prefix(2)))
        let goodLength = try FileSystem.readFile(path).count
        try journal.append([sampleEntries()[2]])
        let full = try FileSystem.readFile(path)
        #expect(full.count > goodLength)
        for cut in goodLength..<full.count {
            try FileSystem.writeAtomically(path, Array(full[0..<cut]), durable: false)
            let reader = Journal(path: path)
            let entries = try reader.read(repair: true)
            #expect(entries.map(\.seq) == [1, 2], "cut at \(cut)")
            if cut > goodLength {
                #expect(reader.warnings.count == 1, "cut at \(cut)")
                #expect(try FileSystem.readFile(path).count == goodLength, "repaired at \(cut)")
            }
            // Appending after a repair continues the numbering on a clean line.
            let next = try reader.append([sampleEntries()[0]])
            #expect(next == 3..<4)
            #expect(try Journal(path: path).read(repair: false).map(\.seq) == [1, 2, 3])
        }
    }

    @Test func damageBeforeTheLastLineIsRefused() throws {
        let dir = TempFolder()
        let path = dir.sub("journal")
        let journal = Journal(path: path)
        try journal.append(sampleEntries())
        var bytes = try FileSystem.readFile(path)
        let firstNewline = bytes.firstIndex(of: 10)!
        bytes[firstNewline / 2] ^= 0x20
        try FileSystem.writeAtomically(path, bytes, durable: false)
        #expect(throws: Journal.Damaged.self) { try Journal(path: path).read(repair: true) }
        // Refusing must not have modified the file.
        #expect(try FileSystem.readFile(path) == bytes)
    }

    @Test func readsFromAnOffset() throws {
        let dir = TempFolder()
        let journal = Journal(path: dir.sub("journal"))
        try journal.append(Array(sampleEntries().prefix(1)))
        let offset = journal.length
        try journal.append(Array(sampleEntries().suffix(2)))
        let tail = try Journal(path: dir.sub("journal")).read(from: offset, lastKnownSeq: 1, repair: false)
        #expect(tail.map(\.seq) == [2, 3])
    }
}

@Suite struct SyncStateTests {
    func sample() -> SyncState {
        var state = SyncState()
        state.base["r1"] = DocVersion(
            refId: "r1", changesetId: "c1", hash: String(repeating: "a", count: 64), path: "tab\there.json")
        state.base["r2"] = DocVersion(
            refId: "r2", changesetId: "c9", hash: String(repeating: "b", count: 64), path: "x/y.json")
        var pending = JournalEntry(
            .local(
                .update,
                version: DocVersion(
                    refId: "r1", changesetId: "c2", hash: String(repeating: "c", count: 64), path: "new\nline.json"),
                fromPath: nil))
        pending.seq = 7
        state.pending = [pending]
        state.cursor = "id:3:400"
        state.journalSeq = 7
        state.journalOffset = 1234
        return state
    }

    @Test func roundTripsThroughItsFile() throws {
        let dir = TempFolder()
        let original = sample()
        try original.save(to: dir.sub("state"))
        let loaded = try SyncState.load(from: dir.sub("state"))
        #expect(loaded.base == original.base)
        #expect(loaded.pending == original.pending)
        #expect(loaded.cursor == "id:3:400")
        #expect(loaded.journalOffset == 1234)
        #expect(loaded.tracked["r1"]?.changesetId == "c2")
    }

    @Test func missingOrTruncatedStateIsRefusedNotEmpty() throws {
        let dir = TempFolder()
        #expect(throws: SyncState.Damaged.self) { try SyncState.load(from: dir.sub("state")) }
        try sample().save(to: dir.sub("state"))
        let bytes = try FileSystem.readFile(dir.sub("state"))
        // Cutting the file at any line boundary (or inside a line) must be detected.
        for cut in stride(from: 0, to: bytes.count, by: 7) {
            try FileSystem.writeAtomically(dir.sub("state"), Array(bytes[0..<cut]), durable: false)
            #expect(throws: SyncState.Damaged.self, "cut at \(cut)") { try SyncState.load(from: dir.sub("state")) }
        }
    }

    @Test func foldingPushedActionsMovesThemIntoTheBase() {
        var state = sample()
        var done = JournalEntry(.done(refId: nil, seqs: [7], reason: .pushed))
        done.seq = 8
        state.fold(done)
        #expect(state.pending.isEmpty)
        #expect(state.base["r1"]?.changesetId == "c2")
        #expect(state.base["r1"]?.path == "new\nline.json")
    }

    @Test func foldingSupersededActionsLeavesTheBase() {
        var state = sample()
        var done = JournalEntry(.done(refId: nil, seqs: [7], reason: .superseded))
        done.seq = 8
        state.fold(done)
        #expect(state.pending.isEmpty)
        #expect(state.base["r1"]?.changesetId == "c1")
    }
}
