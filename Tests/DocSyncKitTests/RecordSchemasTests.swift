import DocSyncJSON
import Foundation
import Testing

@testable import DocSyncKit

/// Which schema a record gets, and what it says, from the engine without the CLI: real
/// schema files in a temporary folder.
@Suite final class RecordSchemasTests {
    let root: String

    init() throws {
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent("docsync-schemas-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/schemas/with space", withIntermediateDirectories: true)
        try write("schemas/any.json", "{\"type\": \"object\"}")
        try write("schemas/named.json", "{\"required\": [\"name\"]}")
        try write(
            "schemas/priced.json", "{\"properties\": {\"price\": {\"$ref\": \"with%20space/money.json#/$defs/money\"}}}"
        )
        try write("schemas/with space/money.json", "{\"$defs\": {\"money\": {\"type\": \"number\", \"minimum\": 0}}}")
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func write(_ path: String, _ text: String) throws {
        try text.write(toFile: root + "/" + path, atomically: true, encoding: .utf8)
    }

    func schemas(_ keys: [String: String], forced: String? = nil) -> RecordSchemas {
        RecordSchemas(root: root, config: Config(values: keys), forced: forced)
    }

    func value(_ text: String) throws -> JSONValue { try JSONValueParser.parse(Array(text.utf8)) }

    @Test func theLastMatchingKeyInListOrderWins() throws {
        let s = schemas(["schema.contacts/**": "schemas/any.json", "schema.contacts/vip/*.json": "schemas/named.json"])
        #expect(s.assignment(for: "contacts/a.json", member: nil).schema == "schemas/any.json")
        #expect(s.assignment(for: "contacts/vip/b.json", member: nil).schema == "schemas/named.json")
        #expect(s.assignment(for: "notes/c.json", member: nil).schema == nil)
        #expect(
            s.verdict(path: "contacts/vip/b.json", value: try value("{}")).problems.map(\.description)
                == ["contacts/vip/b.json: (root): missing required property name"])
    }

    @Test func aRecordsOwnSchemaMemberWinsAndResolvesFromItsFolder() throws {
        let s = schemas(["schema.**": "schemas/named.json"])
        let verdict = s.verdict(
            path: "items/x.json", value: try value("{\"$schema\": \"../schemas/priced.json\", \"price\": -1}"))
        #expect(verdict.schema == "../schemas/priced.json")
        #expect(
            verdict.problems.map(\.pointer) == ["/price"],
            "a $ref to a file with a space in its name is followed: \(verdict)")
        let outside = s.verdict(path: "items/x.json", value: try value("{\"$schema\": \"../../x.json\"}"))
        #expect(outside.problems.first?.reason.contains("outside the tree") == true)
    }

    @Test func aURLSchemaMemberIsNotFetchedAndMetaSchemasAreNotNoted() throws {
        let s = schemas(["schema.**": "schemas/any.json"])
        let url = s.verdict(path: "a.json", value: try value("{\"$schema\": \"https://example.com/s.json\"}"))
        #expect(url.schema == "schemas/any.json" && url.note?.contains("does not fetch") == true)
        let meta = s.verdict(
            path: "schemas/named.json",
            value: try value("{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"}"))
        #expect(meta.note == nil)
    }

    @Test func aSchemaFileIsNotCheckedAgainstItself() throws {
        #expect(
            schemas(["schema.**": "schemas/named.json"]).assignment(for: "schemas/named.json", member: nil).schema
                == nil)
        let forced = schemas([:], forced: root + "/schemas/named.json")
        #expect(forced.assignment(for: "schemas/named.json", member: nil).schema == nil)
        #expect(
            forced.assignment(for: "a.json", member: "schemas/any.json").schema == root + "/schemas/named.json",
            "--schema wins over everything")
    }

    @Test func aBrokenSchemaIsAProblemOfEveryRecordItApplies() throws {
        try write("schemas/broken.json", "{\"type\": ")
        let s = schemas(["schema.**": "schemas/broken.json"])
        let verdict = s.verdict(path: "a.json", value: try value("{}"))
        #expect(verdict.problems.count == 1)
        #expect(verdict.problems.first?.reason.hasPrefix("schema schemas/broken.json: ") == true, "\(verdict)")
        #expect(s.checkSchemaFile(root + "/schemas/missing.json")?.contains("no such file") == true)
    }

    @Test func recordsAreParsedOnlyWhenASchemaCanApply() {
        #expect(!schemas([:]).mightApply(to: Array("{\"a\": 1}".utf8)))
        #expect(schemas([:]).mightApply(to: Array("{\"$schema\": \"x.json\"}".utf8)))
        #expect(schemas(["schema.x/*": "schemas/any.json"]).mightApply(to: Array("{}".utf8)))
    }
}
