import DocSyncJSON
import Foundation
import Testing

@testable import DocSyncSchema

/// Runs the official JSON-Schema-Test-Suite (copied under JSON-Schema-Test-Suite/, see its
/// ORIGIN) for draft 2020-12 and draft-07: every case of every top-level keyword file, of
/// the optional files (bignum, float-overflow, ecmascript-regex …) and of optional/format. Prints "passed/total" per draft and file. A failing case
/// fails the test unless its file or case is listed below with the reason.
///
/// `swift test --filter SchemaTestSuiteTests`
@Suite struct SchemaTestSuiteTests {
    static let suiteRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("JSON-Schema-Test-Suite")

    /// Files not supported at all: counted and printed, never failing.
    static let unsupportedFiles: [String: String] = {
        var files = [
            "draft2020-12/vocabulary.json": "custom metaschemas with $vocabulary are not supported",
            "draft2020-12/optional/format-assertion.json": "custom metaschemas with $vocabulary are not supported",
            "draft2020-12/optional/cross-draft.json":
                "one draft per document: a $ref into another draft's schema reads it with the root's draft",
            "draft7/optional/cross-draft.json":
                "one draft per document: a $ref into another draft's schema reads it with the root's draft",
            "draft7/optional/content.json": "contentMediaType and contentEncoding are annotations only"
        ]
        // Formats that are not asserted (see Formats.swift): any string passes.
        let notAsserted = [
            "duration", "idn-email", "idn-hostname", "iri", "iri-reference", "json-pointer",
            "relative-json-pointer", "uri-template", "unknown"
        ]
        for draft in ["draft2020-12", "draft7"] {
            for format in notAsserted {
                files["\(draft)/optional/format/\(format).json"] = "format \(format) is not asserted"
            }
            files["\(draft)/optional/format/ecmascript-regex.json"] =
                "format regex is checked with ICU (NSRegularExpression), not an ECMA-262 parser"
        }
        return files
    }()

    /// Single groups ("file: group description") or cases ("file: group description: case description").
    static let unsupportedCases: [String: String] = {
        var cases: [String: String] = [:]
        let metaschema = "needs the draft's metaschema, which is not bundled (no network fetches)"
        cases["draft2020-12/defs.json: validate definition against metaschema"] = metaschema
        cases["draft2020-12/ref.json: remote ref, containing refs itself"] = metaschema
        cases["draft7/definitions.json: validate definition against metaschema"] = metaschema
        cases["draft7/ref.json: remote ref, containing refs itself"] = metaschema
        // docsync asserts formats (issue 12: a record with a bad date must not sync), where
        // 2020-12 by default only annotates.
        for format in [
            "email", "regex", "ipv4", "ipv6", "hostname", "date", "date-time", "time", "uri", "uri-reference", "uuid"
        ] {
            cases[
                "draft2020-12/format.json: \(format) format: invalid \(format) string is only an annotation by default"] =
                "formats are asserted, not only annotated"
        }
        for draft in ["draft2020-12", "draft7"] {
            cases["\(draft)/optional/format/hostname.json: validation of A-label (punycode) host names"] =
                "IDNA2008 rules for xn-- labels are not checked"
        }
        return cases
    }()

    struct Tally {
        var passed = 0, total = 0
    }

    @Test func officialSuite() throws {
        let remotes = try Self.loadRemotes()
        var unexpected: [String] = []
        var summary: [String] = []
        for (folder, draft) in [("draft2020-12", SchemaDraft.draft2020_12), ("draft7", .draft7)] {
            var required = Tally(), optional = Tally()
            let directory = Self.suiteRoot.appendingPathComponent("tests/\(folder)")
            let files =
                try Self.jsonFiles(in: directory)
                + Self.jsonFiles(in: directory.appendingPathComponent("optional")).map { "optional/" + $0 }
                + Self.jsonFiles(in: directory.appendingPathComponent("optional/format")).map {
                    "optional/format/" + $0
                }
            var lines: [String] = []
            for name in files {
                let key = "\(folder)/\(name)"
                let document = try Self.parse(directory.appendingPathComponent(name))
                var tally = Tally()
                var failures: [String] = []
                for group in document.arrayValue {
                    let description = group["description"]?.stringValue ?? "?"
                    let schema = Result { () throws(SchemaError) in
                        try Schema(group["schema"] ?? .bool(true), defaultDraft: draft, remotes: remotes)
                    }
                    for test in group["tests"]?.arrayValue ?? [] {
                        let testDescription = test["description"]?.stringValue ?? "?"
                        let expected = test["valid"] == .bool(true)
                        let outcome: Bool? =
                            switch schema {
                            case .success(let compiled): compiled.isValid(test["data"] ?? .null)
                            case .failure: nil
                            }
                        tally.total += 1
                        if outcome == expected {
                            tally.passed += 1
                            continue
                        }
                        let caseKey = "\(key): \(description): \(testDescription)"
                        if Self.unsupportedFiles[key] != nil || Self.unsupportedCases["\(key): \(description)"] != nil
                            || Self.unsupportedCases[caseKey] != nil
                        {
                            continue
                        }
                        let got =
                            switch schema {
                            case .success: "valid \(!expected)"
                            case .failure(let error): "schema error: \(error)"
                            }
                        failures.append("\(caseKey) (expected valid \(expected), got \(got))")
                    }
                }
                if name.hasPrefix("optional/") {
                    optional.passed += tally.passed
                    optional.total += tally.total
                } else {
                    required.passed += tally.passed
                    required.total += tally.total
                }
                lines.append("  \(name) \(tally.passed)/\(tally.total)")
                unexpected += failures
            }
            summary.append(
                "\(folder): required \(required.passed)/\(required.total), optional \(optional.passed)/\(optional.total)"
            )
            summary += lines
        }
        print("JSON-Schema-Test-Suite results:\n" + summary.joined(separator: "\n"))
        if !unexpected.isEmpty {
            print("Unexpected failures:\n" + unexpected.joined(separator: "\n"))
        }
        #expect(unexpected.isEmpty, "\(unexpected.count) unexpected failures, listed above")
    }

    /// remotes/… served as http://localhost:1234/….
    static func loadRemotes() throws -> [String: JSONValue] {
        let root = suiteRoot.appendingPathComponent("remotes")
        var remotes: [String: JSONValue] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".json") else { continue }
            remotes["http://localhost:1234/" + relative] = try parse(root.appendingPathComponent(relative))
        }
        return remotes
    }

    static func jsonFiles(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    static func parse(_ url: URL) throws -> JSONValue {
        try JSONValueParser.parse(Array(Data(contentsOf: url)))
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    var arrayValue: [JSONValue] {
        if case .array(let items) = self { items } else { [] }
    }

    var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }
}
