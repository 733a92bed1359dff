import DocSyncJSON
import DocSyncSchema
import Foundation
import Testing

/// Opt-in: `DOCSYNC_SCHEMA_BENCH=100000 swift test --filter SchemaBenchmarkTests` parses that
/// many small records and validates them, printing both times (issue 12: validating must
/// cost less than reading). Use a release build for figures worth quoting.
@Suite struct SchemaBenchmarkTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DOCSYNC_SCHEMA_BENCH"] != nil))
    func validateVersusParse() throws {
        let count = Int(ProcessInfo.processInfo.environment["DOCSYNC_SCHEMA_BENCH"] ?? "") ?? 100_000
        let schema = try Schema(
            JSONValueParser.parse(
                Array(
                    """
                    {"type": "object", "required": ["id", "name", "qty", "created", "lines"],
                     "additionalProperties": false,
                     "properties": {
                       "id": {"type": "string", "pattern": "^rec-[0-9]+$"},
                       "name": {"type": "string", "minLength": 1, "maxLength": 80},
                       "qty": {"type": "integer", "minimum": 0},
                       "price": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.01},
                       "created": {"type": "string", "format": "date-time"},
                       "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "uniqueItems": true},
                       "lines": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/line"}}},
                     "$defs": {"line": {"type": "object", "required": ["sku", "qty"],
                       "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}}}}
                    """.utf8)))
        let texts = (0..<count).map { i in
            Array(
                """
                {"id": "rec-\(i)", "name": "Widget \(i)", "qty": \(i % 7), "price": \(i % 100).99,
                 "created": "2026-11-23T10:\(10 + i % 50):00Z", "tags": ["red", "blue"],
                 "lines": [{"sku": "A-\(i)", "qty": 2}, {"sku": "B-\(i)", "qty": 1}]}
                """.utf8)
        }
        let clock = ContinuousClock()
        var values: [JSONValue] = []
        values.reserveCapacity(count)
        let parseTime = try clock.measure {
            for text in texts { values.append(try JSONValueParser.parse(text)) }
        }
        var errors = 0
        let validateTime = clock.measure {
            for value in values { errors += schema.validate(value).count }
        }
        print("schema benchmark: \(count) records: parse \(parseTime), validate \(validateTime), errors \(errors)")
        #expect(errors == 0)
    }
}
