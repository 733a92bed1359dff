import DocSyncJSON
import DocSyncKit
import Testing

private func stamp(_ input: [UInt8], refId: String?, changesetId: String?) throws -> [UInt8] {
    let scanned = try JSONScanner.scanDocument(input)
    return IdentityStamper.stamp(input, scanned: scanned, refId: refId, changesetId: changesetId)
}

private func show(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }

/// The members other than the reserved ones, as raw key and value bytes.
private func otherMembers(_ bytes: [UInt8], _ scanned: ScannedDocument) -> [[UInt8]] {
    scanned.members.filter { $0.key != "refId" && $0.key != "changesetId" }
        .map { Array(bytes[$0.keyRange]) + [0] + Array(bytes[$0.valueRange]) }
}

/// What every stamp must satisfy: the output scans, carries the ids, keeps every other
/// member's bytes and order, and keeps everything before '{' and after '}'.
private func checkInvariants(
    input: [UInt8], output: [UInt8], refId: String?, changesetId: String?,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let before = try JSONScanner.scanDocument(input)
    let after = try #require(
        try? JSONScanner.scanDocument(output), "stamped output does not scan: \(show(output))",
        sourceLocation: sourceLocation)
    let expectedRef = refId ?? before.member(named: "refId")?.stringValue
    let expectedChangeset = changesetId ?? before.member(named: "changesetId")?.stringValue
    #expect(after.member(named: "refId")?.stringValue == expectedRef, sourceLocation: sourceLocation)
    #expect(after.member(named: "changesetId")?.stringValue == expectedChangeset, sourceLocation: sourceLocation)
    #expect(otherMembers(output, after) == otherMembers(input, before), sourceLocation: sourceLocation)
    #expect(output[..<after.openBrace] == input[..<before.openBrace], sourceLocation: sourceLocation)
    #expect(output[(after.closeBrace + 1)...] == input[(before.closeBrace + 1)...], sourceLocation: sourceLocation)
    // A kept value keeps its exact bytes (escapes and all).
    for key in ["refId", "changesetId"] where (key == "refId" ? refId : changesetId) == nil {
        if let old = before.member(named: key), let new = after.member(named: key) {
            #expect(output[new.valueRange] == input[old.valueRange], sourceLocation: sourceLocation)
        }
    }
}

/// Checks that `output` is `input` with `inserted` placed at `offset` and nothing else changed.
private func expectInsertion(
    _ input: [UInt8], _ output: [UInt8], at offset: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
    let insertedCount = output.count - input.count
    #expect(insertedCount > 0, sourceLocation: sourceLocation)
    #expect(output[..<offset] == input[..<offset], "prefix changed", sourceLocation: sourceLocation)
    #expect(output[(offset + insertedCount)...] == input[offset...], "suffix changed", sourceLocation: sourceLocation)
}

@Suite("IdentityStamper")
struct IdentityStamperTests {
    @Test(arguments: [
        // Pretty-printed: one member per line, the file's indentation and separator.
        StampCase(
            "two spaces",
            "{\n  \"title\": \"Hello\",\n  \"n\": 1\n}\n", refId: "R1", changesetId: "C1",
            "{\n  \"refId\": \"R1\",\n  \"changesetId\": \"C1\",\n  \"title\": \"Hello\",\n  \"n\": 1\n}\n"),
        StampCase(
            "four spaces",
            "{\n    \"title\": \"Hello\",\n    \"list\": [\n        1\n    ]\n}", refId: "R1", changesetId: "C1",
            "{\n    \"refId\": \"R1\",\n    \"changesetId\": \"C1\",\n    \"title\": \"Hello\",\n    \"list\": [\n        1\n    ]\n}"
        ),
        StampCase(
            "tabs",
            "{\n\t\"title\": \"Hello\"\n}", refId: "R1", changesetId: "C1",
            "{\n\t\"refId\": \"R1\",\n\t\"changesetId\": \"C1\",\n\t\"title\": \"Hello\"\n}"),
        StampCase(
            "pretty without space after colon",
            "{\n  \"a\":1,\n  \"b\":2\n}", refId: "R1", changesetId: "C1",
            "{\n  \"refId\":\"R1\",\n  \"changesetId\":\"C1\",\n  \"a\":1,\n  \"b\":2\n}"),
        StampCase(
            "space before colon",
            "{\n  \"a\" : 1\n}", refId: "R1", changesetId: "C1",
            "{\n  \"refId\" : \"R1\",\n  \"changesetId\" : \"C1\",\n  \"a\" : 1\n}"),
        StampCase(
            "CRLF",
            "{\r\n  \"a\": 1,\r\n  \"b\": [\r\n    2\r\n  ]\r\n}\r\n", refId: "R1", changesetId: "C1",
            "{\r\n  \"refId\": \"R1\",\r\n  \"changesetId\": \"C1\",\r\n  \"a\": 1,\r\n  \"b\": [\r\n    2\r\n  ]\r\n}\r\n"
        ),
        StampCase(
            "trailing space after brace",
            "{ \n  \"a\": 1\n}", refId: "R1", changesetId: "C1",
            "{ \n  \"refId\": \"R1\",\n  \"changesetId\": \"C1\",\n  \"a\": 1\n}"),
        // One line.
        StampCase(
            "one line",
            "{\"a\": 1, \"b\": 2}", refId: "R1", changesetId: "C1",
            "{\"refId\": \"R1\", \"changesetId\": \"C1\", \"a\": 1, \"b\": 2}"),
        StampCase(
            "one line with padding",
            "{ \"a\": 1, \"b\": 2 }", refId: "R1", changesetId: "C1",
            "{ \"refId\": \"R1\", \"changesetId\": \"C1\", \"a\": 1, \"b\": 2 }"),
        StampCase(
            "one line, single member",
            "{\"a\": 1}", refId: "R1", changesetId: "C1",
            "{\"refId\": \"R1\", \"changesetId\": \"C1\", \"a\": 1}"),
        StampCase(
            "minified",
            "{\"a\":1,\"b\":{\"c\":[2,3]}}", refId: "R1", changesetId: "C1",
            "{\"refId\":\"R1\",\"changesetId\":\"C1\",\"a\":1,\"b\":{\"c\":[2,3]}}"),
        StampCase(
            "minified, single member",
            "{\"a\":1}", refId: "R1", changesetId: "C1",
            "{\"refId\":\"R1\",\"changesetId\":\"C1\",\"a\":1}"),
        StampCase(
            "first member on the brace line, others below",
            "{\"a\": 1,\n \"b\": 2}", refId: "R1", changesetId: "C1",
            "{\"refId\": \"R1\",\n \"changesetId\": \"C1\",\n \"a\": 1,\n \"b\": 2}"),
        // Empty objects.
        StampCase("empty", "{}", refId: "R1", changesetId: "C1", "{\"refId\": \"R1\", \"changesetId\": \"C1\"}"),
        StampCase(
            "empty with space", "{ }", refId: "R1", changesetId: "C1", "{ \"refId\": \"R1\", \"changesetId\": \"C1\" }"),
        StampCase(
            "empty on two lines", "{\n}", refId: "R1", changesetId: "C1",
            "{\n  \"refId\": \"R1\",\n  \"changesetId\": \"C1\"\n}"),
        StampCase(
            "empty on two lines, CRLF", "{\r\n}\r\n", refId: "R1", changesetId: "C1",
            "{\r\n  \"refId\": \"R1\",\r\n  \"changesetId\": \"C1\"\r\n}\r\n"),
        StampCase("empty, only refId", "{}", refId: "R1", changesetId: nil, "{\"refId\": \"R1\"}"),
        // refId present, changesetId missing: inserted right after refId.
        StampCase(
            "changesetId after refId, pretty",
            "{\n  \"refId\": \"R0\",\n  \"a\": 1\n}", refId: nil, changesetId: "C1",
            "{\n  \"refId\": \"R0\",\n  \"changesetId\": \"C1\",\n  \"a\": 1\n}"),
        StampCase(
            "changesetId after a last refId",
            "{\n  \"a\": 1,\n  \"refId\": \"R0\"\n}", refId: nil, changesetId: "C1",
            "{\n  \"a\": 1,\n  \"refId\": \"R0\",\n  \"changesetId\": \"C1\"\n}"),
        StampCase(
            "changesetId after an only refId, pretty",
            "{\n    \"refId\": \"R0\"\n}", refId: nil, changesetId: "C1",
            "{\n    \"refId\": \"R0\",\n    \"changesetId\": \"C1\"\n}"),
        StampCase(
            "changesetId after an only refId, one line",
            "{\"refId\": \"R0\"}", refId: nil, changesetId: "C1",
            "{\"refId\": \"R0\", \"changesetId\": \"C1\"}"),
        StampCase(
            "changesetId after an only refId, minified",
            "{\"refId\":\"R0\"}", refId: nil, changesetId: "C1",
            "{\"refId\":\"R0\",\"changesetId\":\"C1\"}"),
        StampCase(
            "changesetId after refId, minified",
            "{\"x\":0,\"refId\":\"R0\",\"a\":1}", refId: nil, changesetId: "C1",
            "{\"x\":0,\"refId\":\"R0\",\"changesetId\":\"C1\",\"a\":1}"),
        StampCase(
            "changesetId after refId, CRLF",
            "{\r\n  \"refId\": \"R0\"\r\n}", refId: nil, changesetId: "C1",
            "{\r\n  \"refId\": \"R0\",\r\n  \"changesetId\": \"C1\"\r\n}"),
        StampCase(
            "new refId replaced, changesetId inserted after it",
            "{\"refId\": \"R0\", \"a\": 1}", refId: "R1", changesetId: "C1",
            "{\"refId\": \"R1\", \"changesetId\": \"C1\", \"a\": 1}"),
        // changesetId present, refId missing: refId goes first.
        StampCase(
            "refId inserted first, changesetId replaced",
            "{\n  \"a\": 1,\n  \"changesetId\": \"old\"\n}", refId: "R1", changesetId: "C2",
            "{\n  \"refId\": \"R1\",\n  \"a\": 1,\n  \"changesetId\": \"C2\"\n}"),
        // Both present: values replaced in place, nothing else moves.
        StampCase(
            "both present",
            "{\"a\": 1, \"changesetId\": \"old\", \"refId\": \"R0\"}", refId: "R1", changesetId: "C2",
            "{\"a\": 1, \"changesetId\": \"C2\", \"refId\": \"R1\"}"),
        StampCase(
            "both present, keep refId",
            "{\n  \"refId\": \"R0\",\n  \"changesetId\": \"old\"\n}", refId: nil, changesetId: "C2",
            "{\n  \"refId\": \"R0\",\n  \"changesetId\": \"C2\"\n}"),
        StampCase(
            "non-string refId replaced",
            "{\"refId\": 12, \"changesetId\": null}", refId: "R1", changesetId: "C1",
            "{\"refId\": \"R1\", \"changesetId\": \"C1\"}"),
        StampCase(
            "escaped existing values replaced",
            #"{"refId": "a\"b\u00e9", "changesetId": "\\"}"#, refId: "R1", changesetId: "C1",
            #"{"refId": "R1", "changesetId": "C1"}"#),
        StampCase(
            "nothing to do", #"{"refId": "R0", "changesetId": "C0"}"#, refId: nil, changesetId: nil,
            #"{"refId": "R0", "changesetId": "C0"}"#),
        // Values that need escaping.
        StampCase(
            "escaped values",
            "{\"a\": 1}", refId: "q\"b\\s/é\n\t", changesetId: "\u{1}\u{1F}\u{7F}",
            #"{"refId": "q\"b\\s/é\n\t", "changesetId": "\u0001\u001f"# + "\u{7F}" + #"", "a": 1}"#),
        // Surroundings.
        StampCase(
            "BOM and outer whitespace",
            bytes: [0xEF, 0xBB, 0xBF] + Array("  {\n  \"a\": 1\n}  \n".utf8), refId: "R1", changesetId: "C1",
            expected: [0xEF, 0xBB, 0xBF]
                + Array("  {\n  \"refId\": \"R1\",\n  \"changesetId\": \"C1\",\n  \"a\": 1\n}  \n".utf8))
    ])
    func stampsExactly(_ c: StampCase) throws {
        let output = try stamp(c.input, refId: c.refId, changesetId: c.changesetId)
        #expect(output == c.expected, "got \(show(output)), expected \(show(c.expected))")
        try checkInvariants(input: c.input, output: output, refId: c.refId, changesetId: c.changesetId)
    }

    @Test func insertionLeavesEveryOtherByteAlone() throws {
        let input = Array("{\n  \"title\": \"Hello\",\n  \"n\": [1, 2]\n}\n".utf8)
        let output = try stamp(input, refId: "R1", changesetId: "C1")
        expectInsertion(input, output, at: 1)

        let oneLine = Array(#"{"a": {"b": 1}, "c": "d"}"#.utf8)
        expectInsertion(oneLine, try stamp(oneLine, refId: "R1", changesetId: "C1"), at: 1)

        let withRef = Array("{\n  \"refId\": \"R0\",\n  \"a\": 1\n}".utf8)
        let refEnd = try #require(try JSONScanner.scanDocument(withRef).member(named: "refId")).valueRange.upperBound
        expectInsertion(withRef, try stamp(withRef, refId: nil, changesetId: "C1"), at: refEnd)
    }

    @Test func replacementTouchesOnlyTheValue() throws {
        let input = Array("{\n  \"x\": [1,\n    2],\n  \"refId\":   \"old-ref\" ,\n  \"y\": null\n}".utf8)
        let member = try #require(try JSONScanner.scanDocument(input).member(named: "refId"))
        let output = try stamp(input, refId: "new", changesetId: nil)
        #expect(output[..<member.valueRange.lowerBound] == input[..<member.valueRange.lowerBound])
        #expect(Array(output[member.valueRange.lowerBound..<member.valueRange.lowerBound + 5]) == Array("\"new\"".utf8))
        #expect(output[(member.valueRange.lowerBound + 5)...] == input[member.valueRange.upperBound...])
    }

    @Test func missingRefIdWithNilIsLeftAbsent() throws {
        let input = Array("{\"a\": 1}".utf8)
        let output = try stamp(input, refId: nil, changesetId: "C1")
        #expect(output == Array("{\"changesetId\": \"C1\", \"a\": 1}".utf8))
        #expect(try JSONScanner.scanDocument(output).member(named: "refId") == nil)
    }

    @Test func escapedValuesRoundTrip() throws {
        let values = [
            "", "plain", "quote\"", "back\\slash", "nl\ncr\rtab\t", "\u{0}\u{8}\u{C}\u{1F}", "ünï😀", "\u{2028}", "/"
        ]
        for value in values {
            let output = try stamp(Array("{}".utf8), refId: value, changesetId: value + "!")
            let scanned = try JSONScanner.scanDocument(output)
            #expect(scanned.member(named: "refId")?.stringValue == value)
            #expect(scanned.member(named: "changesetId")?.stringValue == value + "!")
        }
    }

    // MARK: Property test

    /// Random documents in random layouts, with and without existing ids: stamping then
    /// re-scanning yields the ids and keeps every other member's raw bytes.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func stampingGeneratedDocuments(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<250 {
            let doc = DocumentGenerator.make(&rng)
            let before = try JSONScanner.scanDocument(doc)
            let hasRef = before.member(named: "refId") != nil
            let hasChangeset = before.member(named: "changesetId") != nil
            // nil only where the key exists (the stamper's contract), sometimes.
            let refId: String? = hasRef && rng.next() % 2 == 0 ? nil : DocumentGenerator.idValue(&rng)
            let changesetId: String? = hasChangeset && rng.next() % 3 == 0 ? nil : DocumentGenerator.idValue(&rng)
            let output = IdentityStamper.stamp(doc, scanned: before, refId: refId, changesetId: changesetId)
            try checkInvariants(input: doc, output: output, refId: refId, changesetId: changesetId)

            // Stamping again with the same ids changes nothing.
            let again = IdentityStamper.stamp(
                output, scanned: try JSONScanner.scanDocument(output),
                refId: refId, changesetId: changesetId)
            #expect(again == output, "restamp changed \(show(output))")

            // With neither id present, the ids arrive as one block and nothing else moves.
            if !hasRef && !hasChangeset {
                let prefix = zip(doc, output).prefix { $0 == $1 }.count
                let suffix = zip(doc.reversed(), output.reversed()).prefix { $0 == $1 }.count
                #expect(prefix + suffix >= doc.count, "more than one span changed: \(show(doc)) -> \(show(output))")
            }
        }
    }
}

// MARK: - Generated documents

private enum DocumentGenerator {
    struct Style {
        var pretty: Bool
        var newline: String
        var indent: String
        var colon: String
        var comma: String
    }

    static func make(_ rng: inout SeededGenerator) -> [UInt8] {
        let pretty = Bool.random(using: &rng)
        let style = Style(
            pretty: pretty,
            newline: ["\n", "\r\n"].randomElement(using: &rng)!,
            indent: ["  ", "    ", "\t", " "].randomElement(using: &rng)!,
            colon: [": ", ":", " : ", ":  "].randomElement(using: &rng)!,
            comma: pretty ? "," : [", ", ",", " , "].randomElement(using: &rng)!
        )
        var members: [String] = []
        var names: Set<String> = []
        for _ in 0..<Int.random(in: 0...5, using: &rng) {
            // A document repeats no member name (I-JSON): a repeat is left out.
            let name = key(&rng)
            guard names.insert(name).inserted else { continue }
            members.append(quoted(name) + style.colon + value(&rng, style: style, depth: 1))
        }
        // Existing reserved members at random places, string-valued or not.
        for reserved in ["refId", "changesetId"] where Int.random(in: 0..<3, using: &rng) == 0 {
            let existing =
                Bool.random(using: &rng)
                ? quoted(idValue(&rng)) : ["7", "null", "[]", "{\"x\": 1}"].randomElement(using: &rng)!
            members.insert(
                quoted(reserved) + style.colon + existing, at: Int.random(in: 0...members.count, using: &rng))
        }
        var body: String
        if members.isEmpty {
            body = ["{}", "{ }", "{" + style.newline + "}"].randomElement(using: &rng)!
        } else if style.pretty {
            body = "{" + members.map { style.newline + style.indent + $0 }.joined(separator: ",") + style.newline + "}"
        } else {
            let pad = Bool.random(using: &rng) ? " " : ""
            body = "{" + pad + members.joined(separator: style.comma) + pad + "}"
        }
        let lead = ["", " ", style.newline].randomElement(using: &rng)!
        let trail = ["", style.newline, " \t" + style.newline].randomElement(using: &rng)!
        let bom: [UInt8] = Int.random(in: 0..<8, using: &rng) == 0 ? [0xEF, 0xBB, 0xBF] : []
        return bom + Array((lead + body + trail).utf8)
    }

    static func key(_ rng: inout SeededGenerator) -> String {
        ["title", "n", "ключ", "emoji😀", "a\"b", "tab\tkey", "refIdX", "changeset", "", "x"].randomElement(using: &rng)!
    }

    static func idValue(_ rng: inout SeededGenerator) -> String {
        let pieces = ["01HZX", "ref", "-", "é", "\"", "\\", "\n", "\u{1}", "😀", "0000", "/"]
        return (0..<Int.random(in: 1...5, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    static func value(_ rng: inout SeededGenerator, style: Style, depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
        case 0: return ["0", "-0", "1e400", "12345678901234567890.1234567890", "-3.25E-2"].randomElement(using: &rng)!
        case 1: return quoted(["", "text", "é\u{1F600}", "line\nbreak", "q\"uote", "\\"].randomElement(using: &rng)!)
        case 2: return ["true", "false"].randomElement(using: &rng)!
        case 3: return "null"
        case 4: return #""\ud83d\ude00 \u00e9 \/""#
        case 5:
            let items = (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(&rng, style: style, depth: depth + 1)
            }
            return "[" + items.joined(separator: style.pretty ? ", " : style.comma) + "]"
        default:
            var names: Set<String> = []
            let items = (0..<Int.random(in: 0...3, using: &rng)).compactMap { _ -> String? in
                // Nested reserved keys are ordinary members and must not be touched.
                let name = Bool.random(using: &rng) ? "refId" : key(&rng)
                guard names.insert(name).inserted else { return nil }
                return quoted(name) + style.colon + value(&rng, style: style, depth: depth + 1)
            }
            guard style.pretty, !items.isEmpty else { return "{" + items.joined(separator: style.comma) + "}" }
            let inner = String(repeating: style.indent, count: depth + 1)
            let outer = String(repeating: style.indent, count: depth)
            return "{" + items.map { style.newline + inner + $0 }.joined(separator: ",") + style.newline + outer + "}"
        }
    }

    /// A JSON string literal (escaping what JSON requires).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20:
                out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

extension IdentityStamperTests {
    /// One stamping case: input, ids to stamp, and the exact expected output.
    struct StampCase: Sendable, CustomTestStringConvertible {
        var name: String
        var input: [UInt8]
        var refId: String?
        var changesetId: String?
        var expected: [UInt8]
        var testDescription: String { name }

        init(_ name: String, _ input: String, refId: String?, changesetId: String?, _ expected: String) {
            self.init(
                name, bytes: Array(input.utf8), refId: refId, changesetId: changesetId, expected: Array(expected.utf8))
        }

        init(_ name: String, bytes: [UInt8], refId: String?, changesetId: String?, expected: [UInt8]) {
            self.name = name
            self.input = bytes
            self.refId = refId
            self.changesetId = changesetId
            self.expected = expected
        }
    }
}
