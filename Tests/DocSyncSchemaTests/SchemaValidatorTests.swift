import DocSyncJSON
import Foundation
import Testing

@testable import DocSyncSchema

/// The public API beyond the official suite: every error with its pointer and reason,
/// exact numbers, draft selection, compile errors.
@Suite struct SchemaValidatorTests {
    func json(_ text: String) throws -> JSONValue {
        try JSONValueParser.parse(Array(text.utf8))
    }

    func errors(_ schema: String, _ value: String) throws -> [String] {
        try Schema(json(schema)).validate(json(value)).map { "\($0.instancePath) \($0.keyword): \($0.reason)" }
    }

    @Test func reportsEveryErrorWithItsPointer() throws {
        let schema = """
            {"type": "object", "additionalProperties": false,
             "properties": {"items": {"type": "array", "items": {
                "type": "object", "required": ["qty"],
                "properties": {"qty": {"type": "integer", "minimum": 1}}}}}}
            """
        let found = try errors(schema, #"{"items": [{"qty": "2"}, {"qty": 0}, {}, {"qty": 3}], "extra": 1}"#)
        #expect(
            found == [
                "/items/0/qty type: expected integer, found string",
                "/items/1/qty minimum: expected at least 1, found 0",
                "/items/2 required: missing required property qty",
                "/extra additionalProperties: property extra is not allowed"
            ])
    }

    @Test func descriptionReadsAsPathAndReason() throws {
        let error = try Schema(json(#"{"type": "string"}"#)).validate(json("1"))
        #expect(error.map(\.description) == ["(root): expected string, found integer"])
        #expect(ValidationError(instancePath: "/a~1b/0", keyword: "type", reason: "x").description == "/a~1b/0: x")
        #expect(
            try errors(#"{"properties": {"a/b": false}}"#, #"{"a/b": 1}"#) == [
                "/a~1b properties: property a/b is not allowed"
            ])
    }

    @Test func numbersCompareExactly() throws {
        // Beyond Double's 53 bits: 2^53 + 1 and its neighbours.
        #expect(try errors(#"{"maximum": 9007199254740993}"#, "9007199254740993") == [])
        #expect(try errors(#"{"maximum": 9007199254740993}"#, "9007199254740994").count == 1)
        // Beyond Double's range.
        #expect(try errors(#"{"maximum": 1e308}"#, "1e400") == [" maximum: expected at most 1e308, found 1e400"])
        #expect(try errors(#"{"minimum": 1e400}"#, "1e401") == [])
        #expect(try errors(#"{"exclusiveMaximum": 1e-400}"#, "0") == [])
        #expect(try errors(#"{"exclusiveMinimum": -1e-400}"#, "-1e-399").count == 1)
        // Decimal multiples that binary floating point gets wrong.
        #expect(try errors(#"{"multipleOf": 0.01}"#, "19.99") == [])
        #expect(try errors(#"{"multipleOf": 0.1}"#, "0.3") == [])
        #expect(try errors(#"{"multipleOf": 0.01}"#, "19.995").count == 1)
        #expect(try errors(#"{"multipleOf": 3}"#, "123456789012345678901234567890") == [])
        // Integers by value.
        #expect(try errors(#"{"type": "integer"}"#, "1.0") == [])
        #expect(try errors(#"{"type": "integer"}"#, "1e400") == [])
        #expect(try errors(#"{"type": "integer"}"#, "1.5").count == 1)
    }

    @Test func equalityIsByValue() throws {
        #expect(try errors(#"{"const": 1}"#, "1.0") == [])
        #expect(try errors(#"{"enum": [{"a": 1, "b": [2]}]}"#, #"{"b": [2.0], "a": 10e-1}"#) == [])
        #expect(try errors(#"{"uniqueItems": true}"#, "[1, 1.0]") == [" uniqueItems: items 0 and 1 are equal"])
        #expect(try errors(#"{"uniqueItems": true}"#, "[12345678901234567890, 12345678901234567891]") == [])
    }

    @Test func lengthsCountCodePoints() throws {
        #expect(try errors(#"{"maxLength": 1}"#, #""😀""#) == [])
        #expect(try errors(#"{"maxLength": 1}"#, #""e\u0301""#).count == 1)
    }

    @Test func formatsAreAsserted() throws {
        #expect(try errors(#"{"format": "date"}"#, #""2024-02-29""#) == [])
        #expect(try errors(#"{"format": "date"}"#, #""2023-02-29""#) == [" format: not a valid date"])
        #expect(try errors(#"{"format": "date-time"}"#, #""2024-01-01T10:00:00Z""#) == [])
        #expect(try errors(#"{"format": "email"}"#, #""a@example.com""#) == [])
        #expect(try errors(#"{"format": "uuid"}"#, #""2EB8AA08-AA98-11EA-B4AA-73B441D16380""#) == [])
        #expect(try errors(#"{"format": "uri"}"#, #""relative/path""#).count == 1)
        #expect(try errors(#"{"format": "no-such-format"}"#, #""anything""#) == [])
    }

    @Test func draftComesFromSchemaMember() throws {
        #expect(try Schema(json(#"{"$schema": "http://json-schema.org/draft-07/schema#"}"#)).draft == .draft7)
        #expect(try Schema(json("{}")).draft == .draft2020_12)
        #expect(try Schema(json("{}"), defaultDraft: .draft7).draft == .draft7)
        #expect(throws: SchemaError.unsupportedDraft("http://json-schema.org/draft-04/schema#")) {
            try Schema(json(#"{"$schema": "http://json-schema.org/draft-04/schema#"}"#))
        }
        // draft-07: items as an array with additionalItems; 2020-12 ignores additionalItems.
        let draft7 =
            #"{"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}"#
        #expect(try errors(draft7, #"["a", 1]"#) == ["/1 additionalItems: expected at most 1 items, found 2"])
        #expect(
            try errors(#"{"prefixItems": [{"type": "string"}], "items": false}"#, #"["a", 1]"#) == [
                "/1 items: expected at most 1 items, found 2"
            ])
    }

    @Test func compileErrors() throws {
        #expect(throws: SchemaError.unresolvedReference("https://docsync.invalid/schema.json#/$defs/missing")) {
            try Schema(json(##"{"$ref": "#/$defs/missing"}"##))
        }
        #expect(throws: SchemaError.invalidPattern("([a-z")) {
            try Schema(json(#"{"pattern": "([a-z"}"#))
        }
    }

    @Test func referencesAndUnevaluatedProperties() throws {
        let schema = """
            {"$defs": {"qty": {"$anchor": "qty", "type": "integer"}},
             "properties": {"a": {"$ref": "#/$defs/qty"}, "b": {"$ref": "#qty"}},
             "allOf": [{"properties": {"c": true}}],
             "unevaluatedProperties": false}
            """
        #expect(try errors(schema, #"{"a": 1, "b": 2, "c": 3}"#) == [])
        #expect(
            try errors(schema, #"{"a": "x", "d": 4}"#) == [
                "/a type: expected integer, found string",
                "/d unevaluatedProperties: property d is not allowed"
            ])
    }

    @Test func deepValuesDoNotExhaustTheStack() throws {
        let schema = try Schema(json(##"{"items": {"$ref": "#"}, "type": "array"}"##))
        let deep = String(repeating: "[", count: 990) + String(repeating: "]", count: 990)
        let found = schema.validate(try json(deep))
        #expect(found.count == 1)
        #expect(found.first?.reason.hasPrefix("schema references nest deeper") == true)
        let shallow = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(schema.validate(try json(shallow)) == [])
    }

    /// The project's own schemas (docs/schemas, for `--json` output) compile.
    @Test func projectSchemasCompile() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/schemas").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(!names.isEmpty)
        for name in names {
            let value = try JSONValueParser.parse(Array(Data(contentsOf: folder.appendingPathComponent(name))))
            #expect(throws: Never.self, "\(name)") { try Schema(value) }
        }
    }

    /// One compiled schema shared by concurrent validations (patterns included).
    @Test func oneSchemaValidatesConcurrently() async throws {
        let schema = try Schema(json(#"{"items": {"type": "string", "pattern": "^[a-z]+-[0-9]+$", "format": "date"}}"#))
        let value = try json(#"["abc-1", "abc", "2024-01-01"]"#)
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<200).reduce(0) { total, _ in total + schema.validate(value).count } }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        // "abc-1": not a date; "abc": pattern and date; "2024-01-01": pattern.
        #expect(counts == Array(repeating: 4 * 200, count: 8))
    }
}
