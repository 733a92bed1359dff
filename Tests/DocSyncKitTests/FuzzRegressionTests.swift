import Foundation
import Testing

@testable import DocSyncKit

/// Inputs the libFuzzer targets in Fuzz/ found to break the engine, kept as ordinary
/// tests (see Fuzz/RESULTS.md). Each file in Fuzz/regressions/ is used by a test here.
@Suite struct FuzzRegressionTests {
    static let regressions = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/regressions")

    static func input(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: regressions.appendingPathComponent(name)))
    }

    /// A journal line with a valid checksum and `"seq": Int.max` (a hand edit) made
    /// `Journal.read` trap on `seq + 1`. It is now refused as damage, like any other line
    /// that is no entry this version understands, and the lines before it still count.
    @Test func journalSeqOverflowIsRefusedNotATrap() throws {
        let bytes = try Self.input("journal-seq-overflow.journal")
        let dir = TempFolder()
        let path = dir.sub("journal")
        try FileSystem.writeAtomically(path, bytes, durable: false)
        #expect(throws: Journal.Damaged.self) { try Journal(path: path).read(repair: true) }
        #expect(try FileSystem.readFile(path) == bytes, "refusing must not modify the journal")

        // The first line alone is a good journal.
        let firstLine = Array(bytes[...bytes.firstIndex(of: 10)!])
        try FileSystem.writeAtomically(path, firstLine, durable: false)
        let journal = Journal(path: path)
        #expect(try journal.read(repair: false).map(\.seq) == [1])
        #expect(journal.nextSeq == 2)

        // The largest seq still accepted leaves room to number on.
        let line = ChecksummedLines.encode(
            "{\"seq\":\(Journal.maxSeq),\"kind\":\"update\",\"time\":1,\"refId\":\"r\",\"changesetId\":\"c\",\"hash\":\"h\",\"path\":\"p.json\"}"
        )
        try FileSystem.writeAtomically(path, Array(line.utf8), durable: false)
        let big = Journal(path: path)
        #expect(try big.read(repair: false).map(\.seq) == [Journal.maxSeq])
        #expect(
            try big.append([
                JournalEntry(
                    .local(
                        .update, version: DocVersion(refId: "r", changesetId: "c", hash: "h", path: "p.json"),
                        fromPath: nil))
            ]) == Journal.maxSeq + 1..<Journal.maxSeq + 2)
    }

    /// A line whose payload is not UTF-8 but whose checksum is that of the payload with
    /// its bad bytes replaced by U+FFFD was accepted, as a payload other than its bytes
    /// (the fuzzer got there by comparing checksums). The checksum is now of the bytes,
    /// and a line that is not UTF-8 is damage.
    @Test func aLineThatIsNotUTF8IsNeverAccepted() throws {
        let bytes = try Self.input("journal-invalid-utf8-checksum.journal")
        let parsed = ChecksummedLines.parse(bytes[...])
        var start = 0
        for line in parsed.lines {
            #expect(
                Array(line.payload.utf8) + [9] == Array(bytes[start..<line.endOffset - 18]),
                "an accepted payload is exactly its bytes")
            start = line.endOffset
        }
        let bad = bytes[parsed.validLength...]
        #expect(
            !bad.isEmpty && String(validating: bad, as: UTF8.self) == nil, "the line with invalid UTF-8 is not accepted"
        )
        #expect(
            bad.starts(with: Array(#"{"kind":"done","reason":"pushed""#.utf8)) && bad.contains(0xFF),
            "it is the crafted line that stops the parse")
    }
}
