import Foundation
import Testing

@testable import DocSyncKit

/// A conflict record's Swift shape (`kind`, `resolution`) against its JSON (docs/JSON.md,
/// docs/FORMATS.md): the flat keys other replicas, older versions and `conflicts --json`
/// read, each written only by the kind it belongs to.
@Suite struct ConflictRecordCodingTests {
    static func encoded(_ record: ConflictStore.Record) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(record), as: UTF8.self)
    }

    static func record(_ kind: ConflictStore.Record.Kind, reason: String? = nil) -> ConflictStore.Record {
        ConflictStore.Record(
            refId: "r1", changesetId: "c1", path: "a.json", side: .remote, winner: "w1", time: 5, kind: kind,
            replica: "aaaaaaaaaaaa", lostBy: "bbbbbbbbbbbb", reason: reason)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var kind: ConflictStore.Record.Kind
        var reason: String?
        var resolution: ConflictStore.Record.Resolution?
        var json: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a lost version: its policy and fields, its name (the losing and the winning version)",
            kind: .version(policy: .merge, fields: ["city"]),
            json:
                #"{"changesetId":"c1","fields":["city"],"file":".docsync/conflicts/r1/c1.version.w1.json","lostBy":"bbbbbbbbbbbb","name":"c1.version.w1","path":"a.json","policy":"merge","refId":"r1","replica":"aaaaaaaaaaaa","side":"remote","time":5,"winner":"w1"}"#
        ),
        Case(
            name: "a lost version from before policies were kept: no policy, no fields",
            kind: .version(policy: nil, fields: nil),
            json:
                #"{"changesetId":"c1","file":".docsync/conflicts/r1/c1.version.w1.json","lostBy":"bbbbbbbbbbbb","name":"c1.version.w1","path":"a.json","refId":"r1","replica":"aaaaaaaaaaaa","side":"remote","time":5,"winner":"w1"}"#
        ),
        Case(
            name: "a lost deletion: deleted, its own store name",
            kind: .deletion, reason: "an edit beat a deletion",
            json:
                #"{"changesetId":"c1","deleted":true,"file":".docsync/conflicts/r1/c1.deletion.w1.bbbbbbbbbbbb.json","lostBy":"bbbbbbbbbbbb","path":"a.json","reason":"an edit beat a deletion","refId":"r1","replica":"aaaaaaaaaaaa","side":"remote","time":5,"winner":"w1"}"#
        ),
        Case(
            name: "a lost rename: renameLost, its own store name",
            kind: .rename, reason: "renamed on both sides",
            json:
                #"{"changesetId":"c1","file":".docsync/conflicts/r1/c1.rename.w1.bbbbbbbbbbbb.json","lostBy":"bbbbbbbbbbbb","path":"a.json","reason":"renamed on both sides","refId":"r1","renameLost":true,"replica":"aaaaaaaaaaaa","side":"remote","time":5,"winner":"w1"}"#
        ),
        Case(
            name: "a resolved record: resolved, take, resolvedBy",
            kind: .version(policy: .lww, fields: []),
            resolution: .init(time: 9, take: "local", by: "cccccccccccc"),
            json:
                #"{"changesetId":"c1","fields":[],"file":".docsync/conflicts/r1/c1.version.w1.json","lostBy":"bbbbbbbbbbbb","name":"c1.version.w1","path":"a.json","policy":"lww","refId":"r1","replica":"aaaaaaaaaaaa","resolved":9,"resolvedBy":"cccccccccccc","side":"remote","take":"local","time":5,"winner":"w1"}"#
        )
    ]

    @Test(arguments: cases)
    func writesTheFlatShapeAndReadsItBack(_ c: Case) throws {
        var record = Self.record(c.kind, reason: c.reason)
        record.resolution = c.resolution
        #expect(try Self.encoded(record) == c.json)
        let read = try JSONDecoder().decode(ConflictStore.Record.self, from: Data(c.json.utf8))
        #expect(read == record)
        #expect(read.isOpen == (c.resolution == nil))
    }

    /// What older replicas wrote: `deleted: false` is a version, and a record with both
    /// flags cannot be made, so `deleted` decides.
    @Test func readsWhatOlderReplicasWrote() throws {
        let json =
            #"{"changesetId":"c1","deleted":false,"path":"a.json","refId":"r1","side":"local","time":5,"winner":"w1"}"#
        let read = try JSONDecoder().decode(ConflictStore.Record.self, from: Data(json.utf8))
        #expect(read.kind == .version(policy: nil, fields: nil))
        #expect(read.storeName == "c1")
        // Saved again (a resolve), it keeps the name it is stored under.
        let again = try JSONDecoder().decode(
            ConflictStore.Record.self, from: Data(try Self.encoded(read).utf8))
        #expect(again.storeName == "c1" && again.name == nil)
    }

    /// Two replicas that lost the same version, each to its own merge, keep two records
    /// (daemon seed 1127300, step 25): the name says what the version lost to.
    @Test func oneVersionLostToTwoMergesIsTwoRecords() {
        let toFirst = ConflictStore.Record(
            refId: "r1", changesetId: "c1", path: "a.json", side: .remote, winner: "w1", time: 5,
            kind: .version(policy: .merge, fields: ["a"]), replica: "aaaaaaaaaaaa", lostBy: "bbbbbbbbbbbb")
        let toSecond = ConflictStore.Record(
            refId: "r1", changesetId: "c1", path: "a.json", side: .remote, winner: "w2", time: 6,
            kind: .version(policy: .merge, fields: ["b"]), replica: "cccccccccccc", lostBy: "bbbbbbbbbbbb")
        #expect(toFirst.storeName != toSecond.storeName)
        #expect(toFirst.file != toSecond.file)
    }
}
