import Foundation
import Testing

@testable import DocSyncKit

/// The journal's lines and a folder remote's feed lines are written by hand
/// (`JSONObjectLine`), not by `JSONEncoder`. Every kind of entry, with awkward text in
/// every string field, must come out byte for byte as the encoder writes it (the format
/// every earlier version wrote), and read back as the same entry.
@Suite struct JournalLineTests {
    /// Text with everything a JSON string escapes or might: quotes, backslashes, every
    /// control character, slashes, non-ASCII (two-, three- and four-byte UTF-8), U+2028.
    static let awkward: [String] = [
        "", "plain.json", "d/e/f.json", "quote\"d", "back\\slash", "tab\there", "line\nbreak", "cr\rlf",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7f}del", "é/ü/ß.json", "日本語.json",
        "emoji 🗂️", "sep\u{2028}\u{2029}", "</script>", "a\\/b"
    ]

    static func version(_ i: Int) -> DocVersion {
        let text = awkward[i % awkward.count]
        return DocVersion(
            refId: "ref-\(text)", changesetId: "cs-\(i)-\(text)", hash: String(repeating: "ab", count: 32),
            path: text + ".json")
    }

    static func entries() -> [JournalEntry] {
        var all: [JournalEntry] = []
        for (i, text) in awkward.enumerated() {
            let v = version(i)
            let events: [JournalEntry.Event] = [
                .local(.create, version: v, fromPath: nil),
                .local(.rename, version: v, fromPath: text),
                .local(.delete, version: v, fromPath: nil),
                .done(refId: nil, seqs: [], reason: .pushed),
                .done(refId: v.refId, seqs: [1, 2, 1_000_000_007], reason: .superseded),
                .apply(.init(refId: v.refId, changesetId: v.changesetId, result: v, fromPath: text, fromHash: v.hash)),
                .apply(.init(refId: v.refId, changesetId: v.changesetId, result: nil, fromPath: nil, fromHash: nil)),
                .seen(refId: v.refId, .version(v), reason: nil),
                .seen(refId: v.refId, .deleted(changesetId: text, path: nil), reason: .other(text)),
                .seen(refId: v.refId, .version(v), reason: .leftSelection),
                .held(refId: v.refId, .version(v), replica: text),
                .held(refId: v.refId, .deleted(changesetId: text, path: text), replica: nil),
                .conflict(refId: v.refId, changesetId: text, path: text, side: .local, deleted: true),
                .conflict(refId: v.refId, changesetId: text, path: nil, side: .remote, deleted: false),
                .cursor(text),
                .resolve(refId: v.refId, changesetId: nil, path: nil, take: .named(text)),
                .resolve(refId: v.refId, changesetId: text, path: text, take: .asIs),
                .resolve(refId: v.refId, changesetId: text, path: nil, take: .remote)
            ]
            for (j, event) in events.enumerated() {
                var entry = JournalEntry(event)
                entry.seq = i * 100 + j
                entry.time = [0, -1, 1_764_000_000_000, Int64.max][j % 4]
                entry.more = [nil, true, false][j % 3]
                all.append(entry)
            }
        }
        return all
    }

    /// The encoder the journal used to write with: the model the hand-written lines are
    /// held to.
    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    @Test func everyLineIsWhatJSONEncoderWrites() throws {
        let entries = Self.entries()
        #expect(entries.count == Self.awkward.count * 18)
        for entry in entries {
            let model = String(decoding: try Self.encoder.encode(entry), as: UTF8.self)
            #expect(try entry.encodedLine() == model)
        }
    }

    @Test func everyLineReadsBackAsTheSameEntry() throws {
        for entry in Self.entries() {
            let line = try entry.encodedLine()
            let back = try JournalEntry.decode(line)
            #expect(
                back.event == entry.event && back.seq == entry.seq && back.time == entry.time
                    && back.more == entry.more, "\(line)")
        }
    }

    /// Document versions, tombstones, purged deletions, renamed versions naming their
    /// parents, and lines sharing a conflict record (which take the encoder's path).
    @Test func everyFeedLineIsWhatJSONEncoderWrites() throws {
        var entries: [FeedLine] = []
        for (i, text) in Self.awkward.enumerated() {
            let v = Self.version(i)
            entries.append(
                FeedLine(
                    refId: v.refId, changesetId: v.changesetId, hash: v.hash, path: v.path, deleted: false,
                    replica: text, time: Int64(i)))
            entries.append(
                FeedLine(
                    refId: v.refId, changesetId: text, hash: nil, path: nil, deleted: true, replica: "r", time: -1))
            entries.append(
                FeedLine(
                    refId: v.refId, changesetId: text, hash: v.hash, path: text, deleted: true, replica: "r",
                    time: .max,
                    publishedHash: v.hash))
            entries.append(
                FeedLine(
                    refId: FeedLine.purgedKey(v.refId), changesetId: text, hash: nil, path: nil, deleted: true,
                    replica: text, time: 0, purgedDeletion: true))
        }
        for (i, text) in Self.awkward.enumerated() {
            var moved = FeedLine(
                refId: text, changesetId: "cs-\(i)", hash: "h", path: text + ".json", deleted: false, replica: text,
                time: 1)
            moved.movedAt = [0, -1, .max][i % 3]
            moved.parents = [[], [text], ["a", text, "b/c"]][i % 3]
            entries.append(moved)
            let record = ConflictStore.Record(
                refId: "ref-\(text)", changesetId: "cs-\(i)", path: text + ".json", side: i % 2 == 0 ? .local : .remote,
                winner: text, time: Int64(i), kind: i % 2 == 0 ? .deletion : .version(policy: nil, fields: [text]),
                replica: text)
            entries.append(
                FeedLine(
                    refId: FeedLine.conflictKey(record), changesetId: text, hash: nil, path: nil, deleted: false,
                    replica: text, time: 2, conflict: record))
        }
        // A git tombstone file is a document line alone: the same bytes as its feed line.
        for line in entries where line.isDocument {
            #expect(try line.entry.encodedLine() == (try line.encodedLine()))
        }
        for entry in entries {
            let model = String(decoding: try Self.encoder.encode(entry), as: UTF8.self)
            let line = try entry.encodedLine()
            #expect(line == model)
            #expect(try JSONDecoder().decode(FeedLine.self, from: Data(line.utf8)) == entry)
        }
    }

    /// The reasons' texts are the journal's format (earlier versions wrote them): each
    /// reads back as its case, and a text this version does not know stays as it was.
    @Test func seenReasonsKeepTheirJournalText() throws {
        let known: [(SeenReason, String)] = [
            (.notApplied, "not applied"), (.leftSelection, "left the selection"),
            (.historyRewritten, "history rewritten")
        ]
        for (reason, text) in known {
            #expect(reason.text == text)
            #expect(SeenReason(text: text) == reason)
        }
        #expect(SeenReason(text: "from the future") == .other("from the future"))
        let v = Self.version(0)
        var entry = JournalEntry(.seen(refId: v.refId, .version(v), reason: .leftSelection))
        entry.seq = 7
        let line = try entry.encodedLine()
        #expect(line.contains("\"reason\":\"left the selection\""), "\(line)")
    }

    /// `resolve --take`'s words as the journal and the records keep them (earlier versions
    /// wrote them); an entry without one took nothing; `--take` never means "as is".
    @Test func resolveTakesKeepTheirText() {
        let known: [(ResolveTake, String)] = [(.local, "local"), (.remote, "remote"), (.asIs, "as is")]
        for (take, text) in known {
            #expect(take.text == text)
            #expect(ResolveTake(text: text) == take)
        }
        #expect(ResolveTake(text: nil) == .asIs)
        #expect(ResolveTake(text: "laptop") == .named("laptop"))
        #expect(ResolveTake(argument: "as is") == .named("as is"))
        #expect(ResolveTake(argument: "remote") == .remote)
    }
}
