import DocSyncJSON
import DocSyncKit
import Testing

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func parse(_ text: String, maxDepth: Int? = JSONValueParser.defaultMaxDepth) throws -> JSONValue {
    try JSONValueParser.parse(Array(text.utf8), maxDepth: maxDepth)
}

private func parseError(_ bytes: [UInt8], maxDepth: Int? = JSONValueParser.defaultMaxDepth) -> JSONSyntaxError? {
    do {
        _ = try JSONValueParser.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

/// Random values with awkward strings and exactly written numbers.
private struct RandomValues {
    var rng: SeededGenerator

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func string() -> String {
        let pieces: [String] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\r", "\u{0}", "\u{1F}", "\u{7F}", "\u{8}",
            "\u{C}", "é", "e\u{301}", "ß", "名", "😀", "\u{2028}", "\u{FEFF}", "~", "."
        ]
        var out = ""
        for _ in 0..<int(0...8) { out += pieces[int(0...pieces.count - 1)] }
        return out
    }

    mutating func digits(_ count: Int, leadingNonZero: Bool) -> String {
        var out = ""
        for i in 0..<count { out += String(i == 0 && leadingNonZero ? int(1...9) : int(0...9)) }
        return out
    }

    mutating func number() -> String {
        var out = int(0...3) == 0 ? "-" : ""
        out += int(0...4) == 0 ? "0" : digits(int(1...25), leadingNonZero: true)
        if int(0...2) == 0 { out += "." + digits(int(1...12), leadingNonZero: false) }
        if int(0...3) == 0 {
            out += ["e", "E"][int(0...1)] + ["", "+", "-"][int(0...2)] + digits(int(1...3), leadingNonZero: false)
        }
        return out
    }

    mutating func value(depth: Int) -> JSONValue {
        switch int(0...(depth > 0 ? 7 : 4)) {
        case 0: return .string(string())
        case 1: return .number(number())
        case 2: return .bool(int(0...1) == 0)
        case 3: return .null
        case 4: return .string(string())
        case 5: return .array((0..<int(0...4)).map { _ in value(depth: depth - 1) })
        default: return JSONValue(members: (0..<int(0...4)).map { _ in (string(), value(depth: depth - 1)) })
        }
    }
}

@Suite("JSONValue")
struct JSONValueTests {
    // MARK: Parsing

    @Test func parsesEveryKindKeepingKeyOrder() throws {
        let value = try parse(#"{"z": 1, "a": [true, false, null, "s"], "m": {"y": {}, "b": []}}"#)
        let expected: JSONValue = ["z": 1, "a": [true, false, .null, "s"], "m": ["y": [:], "b": []]]
        #expect(value == expected)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(Array(members.keys) == ["z", "a", "m"])
        #expect(value.kind == .object)
    }

    @Test(arguments: [
        "1.0", "-0", "0.000", "12345678901234567890.1234567890", "1e400", "-1E+2", "2.5e-308",
        "123456789012345678901234567890", "1E400", "0e0"
    ])
    func numbersKeepTheirExactText(_ number: String) throws {
        let value = try parse("[\(number)]")
        #expect(value == .array([.number(number)]))
        #expect(text(JSONValueWriter.writeCompact(value)) == "[\(number)]")
        #expect(try parse(number) == .number(number))
    }

    @Test func numbersCompareByText() {
        #expect(JSONValue.number("1.0") != .number("1"))
        #expect(JSONValue.number("1e2") != .number("100"))
        #expect(JSONValue.number("7") == 7)
    }

    @Test func duplicateKeysLastValueWinsAtFirstPosition() throws {
        let value = try parse(#"{"a": 1, "b": 2, "a": {"deep": [3]}}"#)
        #expect(value == ["a": ["deep": [3]], "b": 2])
        #expect(text(JSONValueWriter.writeCompact(value)) == #"{"a":{"deep":[3]},"b":2}"#)
    }

    @Test func leadingByteOrderMarkIsSkipped() throws {
        #expect(try JSONValueParser.parse([0xEF, 0xBB, 0xBF] + utf8(#" {"a": "b"} "#)) == ["a": "b"])
        #expect(try JSONValueParser.parse([0xEF, 0xBB, 0xBF] + utf8("7")) == 7)
    }

    @Test func escapesDecode() throws {
        let value = try parse(#"["\"\\\/\b\f\n\r\t", "\u00e9\u0041", "\ud83d\ude00", "\ud800x", "\udc00", "é名😀"]"#)
        #expect(value == ["\"\\/\u{8}\u{C}\n\r\t", "éA", "😀", "\u{FFFD}x", "\u{FFFD}", "é名😀"])
    }

    @Test func keysAndStringsCompareByBytes() {
        // Canonically equivalent to Swift, but not the same text.
        #expect(JSONValue.string("\u{E9}") != .string("e\u{301}"))
        #expect(JSONValue.string("\u{E9}") == .string("\u{E9}"))
    }

    @Test func objectEqualityIsOrderSensitive() {
        let ab: JSONValue = ["a": 1, "b": 2]
        let ba: JSONValue = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab == ["a": 1, "b": 2])
        #expect(JSONValue.array([]) != .object([:]))
        #expect(JSONValue.array([1, [2]]) != [1, [3]])
        #expect(JSONValue.array([1, [2]]) != [1, [2], 3])
    }

    // MARK: Errors

    /// (input, line, column, reason): the same errors, lines and columns as JSONScanner.
    static let invalid: [(String, Int, Int, String)] = [
        ("", 1, 1, "empty file"),
        ("{\n  \"a\": tru\n}", 2, 11, "invalid literal, expected 'true'"),
        ("[1,]", 1, 4, "trailing comma before ']'"),
        ("{\"a\" 1}", 1, 6, "expected ':' after object key"),
        ("[1 2]", 1, 4, "expected ',' or ']' after array element"),
        ("{\n  \"é\": 01\n}", 2, 9, "leading zero in number"),
        ("[\"x\"] [", 1, 7, "trailing characters after the top-level value"),
        ("\u{FEFF}[", 1, 2, "unexpected end of file, expected a value")
    ]

    @Test(arguments: invalid)
    func invalidInputThrowsWithLineAndColumn(_ input: String, _ line: Int, _ column: Int, _ reason: String) {
        let error = parseError(utf8(input))
        #expect(error?.line == line)
        #expect(error?.column == column)
        #expect(error?.reason == reason)
        #expect(throws: JSONSyntaxError.self) { try JSONValueParser.parse(utf8(input)) }
    }

    @Test func invalidUTF8Throws() {
        #expect(parseError([UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\"")])?.reason == "invalid UTF-8")
    }

    // MARK: Depth

    @Test func defaultDepthLimitRefusesCleanly() throws {
        let limit = JSONValueParser.defaultMaxDepth
        let ok =
            [UInt8](repeating: UInt8(ascii: "["), count: limit) + [UInt8](repeating: UInt8(ascii: "]"), count: limit)
        #expect(try JSONValueParser.parse(ok).kind == .array)
        let deep = [UInt8(ascii: "[")] + ok + [UInt8(ascii: "]")]
        #expect(
            parseError(deep)
                == JSONSyntaxError(
                    offset: limit, line: 1, column: limit + 1,
                    reason: "nesting deeper than \(limit) levels"))
        #expect(parseError(utf8(#"{"a": [{"b": 1}]}"#), maxDepth: 2)?.column == 8)
        #expect(try parse(#"{"a": [{"b": 1}]}"#, maxDepth: 3) == ["a": [["b": 1]]])
    }

    @Test func hundredThousandDeepArray() throws {
        let depth = 100_000
        let bytes =
            [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
        #expect(parseError(bytes)?.reason == "nesting deeper than \(JSONValueParser.defaultMaxDepth) levels")

        var parsed = try JSONValueParser.parse(bytes, maxDepth: nil)
        var built = JSONValue.array([])
        for _ in 1..<depth { built = .array([built]) }
        var different = JSONValue.array([.null])
        for _ in 1..<depth { different = .array([different]) }

        let same = parsed == built, differs = parsed == different
        #expect(same)
        #expect(!differs)
        #expect(JSONValueWriter.writeCompact(parsed) == bytes)
        var reparsed = try JSONValueParser.parse(JSONValueWriter.write(parsed, indent: ""), maxDepth: nil)
        let roundTrips = reparsed == parsed
        #expect(roundTrips)

        // Swift would free these recursively and overflow the stack: free them flat.
        parsed.dismantle()
        built.dismantle()
        different.dismantle()
        reparsed.dismantle()
        #expect(parsed == .null)
    }

    @Test func hundredThousandDeepObject() throws {
        let depth = 100_000
        var bytes: [UInt8] = []
        for _ in 0..<depth { bytes += utf8(#"{"k":"#) }
        bytes += utf8(#"[1,"é"]"#)
        bytes += [UInt8](repeating: UInt8(ascii: "}"), count: depth)

        var parsed = try JSONValueParser.parse(bytes, maxDepth: nil)
        var built: JSONValue = [1, "é"]
        for _ in 0..<depth { built = JSONValue(members: [("k", built)]) }
        let same = parsed == built
        #expect(same)
        #expect(JSONValueWriter.writeCompact(built) == bytes)
        let pretty = JSONValueWriter.write(parsed, indent: "")
        // Per level two line breaks and a space; the array's lines.
        #expect(pretty.count == bytes.count + 3 * depth + 4)
        var reparsed = try JSONValueParser.parse(pretty, maxDepth: nil)
        let roundTrips = reparsed == built
        #expect(roundTrips)
        parsed.dismantle()
        built.dismantle()
        reparsed.dismantle()
    }

    @Test func dismantleLeavesSharedPartsToTheirOtherHolder() throws {
        let shared: JSONValue = ["a": [1, 2, ["b": "c"]]]
        var holder: JSONValue = ["x": shared, "y": [shared]]
        holder.dismantle()
        #expect(holder == .null)
        #expect(shared == ["a": [1, 2, ["b": "c"]]])
    }

    // MARK: Writing

    @Test func stableLayout() throws {
        let value = try parse(
            #"{"name":"Ada","tags":["x",1.0,{"k":null}],"empty":{},"none":[],"nested":{"a":{"b":true}}}"#)
        #expect(
            text(JSONValueWriter.write(value)) == """
                {
                  "name": "Ada",
                  "tags": [
                    "x",
                    1.0,
                    {
                      "k": null
                    }
                  ],
                  "empty": {},
                  "none": [],
                  "nested": {
                    "a": {
                      "b": true
                    }
                  }
                }

                """)
        #expect(
            text(JSONValueWriter.write(value, indent: "\t")).hasPrefix(
                "{\n\t\"name\": \"Ada\",\n\t\"tags\": [\n\t\t\"x\""))
        #expect(text(JSONValueWriter.write(["a": [1]], indent: "    ")) == "{\n    \"a\": [\n        1\n    ]\n}\n")
    }

    @Test func scalarsAndEmptyContainersAtTheTop() {
        #expect(text(JSONValueWriter.write(7)) == "7\n")
        #expect(text(JSONValueWriter.write(.null)) == "null\n")
        #expect(text(JSONValueWriter.write([:])) == "{}\n")
        #expect(text(JSONValueWriter.write([])) == "[]\n")
        #expect(text(JSONValueWriter.writeCompact(["a": [1, "b"], "c": [:]])) == #"{"a":[1,"b"],"c":{}}"#)
        #expect(JSONValue.object(["a": [1, true]]).description == #"{"a":[1,true]}"#)
    }

    static let escapes: [(String, String)] = [
        ("plain", #""plain""#),
        ("q\"b\\s/", #""q\"b\\s/""#),
        ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#),
        ("\u{0}\u{1}\u{1F}", #""\u0000\u0001\u001f""#),
        ("\u{7F}é名😀\u{2028}", "\"\u{7F}é名😀\u{2028}\"")
    ]

    @Test(arguments: escapes)
    func stringsAreEscapedMinimally(_ string: String, _ expected: String) throws {
        #expect(text(JSONValueWriter.writeCompact(.string(string))) == expected)
        #expect(text(JSONValueWriter.writeCompact([string: 1])) == "{\(expected):1}")
        #expect(try parse(expected) == .string(string))
    }

    static let indents: [(String, String)] = [
        ("{\n  \"a\": {\n    \"b\": 1\n  }\n}\n", "  "),
        ("{\n    \"a\": {\n        \"b\": 1\n    }\n}\n", "    "),
        ("{\r\n    \"a\": 1\r\n}\r\n", "    "),
        ("{\n\t\"a\": {\n\t\t\"b\": 1\n\t}\n}\n", "\t"),
        ("{\"a\": {\"b\": 1}}", "  "),
        ("{\n\"a\": 1\n}", "  "),
        ("", "  "),
        ("{\n   \n  \"a\": 1\n}", "  "),
        ("{\n   \"a\": 1\n}", "   ")
    ]

    @Test(arguments: indents)
    func detectsIndentation(_ file: String, _ indent: String) {
        #expect(JSONValueWriter.detectIndent(of: utf8(file)) == indent)
    }

    @Test func rewritingAFileWithItsIndentReproducesIt() throws {
        for file in [Self.indents[0].0, Self.indents[1].0, Self.indents[3].0] {
            let bytes = utf8(file)
            let value = try JSONValueParser.parse(bytes)
            #expect(JSONValueWriter.write(value, indent: JSONValueWriter.detectIndent(of: bytes)) == bytes)
        }
    }

    // MARK: Properties

    @Test func randomValuesRoundTrip() throws {
        for seed in UInt64(1)...300 {
            var random = RandomValues(rng: SeededGenerator(seed: seed))
            let value = random.value(depth: 4)
            let pretty = JSONValueWriter.write(value, indent: ["  ", "    ", "\t", ""][Int(seed % 4)])
            let compact = JSONValueWriter.writeCompact(value)
            let fromPretty = try JSONValueParser.parse(pretty)
            let fromCompact = try JSONValueParser.parse(compact)
            #expect(fromPretty == value, "seed \(seed): \(text(pretty))")
            #expect(fromCompact == value, "seed \(seed): \(text(compact))")
            #expect(JSONValueWriter.write(fromPretty) == JSONValueWriter.write(value), "seed \(seed)")
            // The scanner agrees the output is valid JSON.
            #expect(throws: Never.self, "seed \(seed)") { try JSONScanner.validate(pretty) }
        }
    }

    @Test func equalityMatchesTheWrittenText() {
        for seed in UInt64(1)...300 {
            var random = RandomValues(rng: SeededGenerator(seed: seed &* 7919))
            let a = random.value(depth: 2), b = random.value(depth: 2)
            let sameText = JSONValueWriter.writeCompact(a) == JSONValueWriter.writeCompact(b)
            #expect((a == b) == sameText, "seed \(seed &* 7919)")
            #expect(a == a, "seed \(seed &* 7919)")
        }
    }
}

@Suite struct JSONValueOrderTests {
    @Test func equalIgnoringMemberOrderAtAnyDepth() throws {
        let a = try JSONValueParser.parse(Array(#"{"a": 1, "b": {"x": [1, {"p": true, "q": null}], "y": "s"}}"#.utf8))
        let b = try JSONValueParser.parse(Array(#"{"b": {"y": "s", "x": [1, {"q": null, "p": true}]}, "a": 1}"#.utf8))
        #expect(a != b, "== keeps the order")
        #expect(a.equalsIgnoringMemberOrder(b) && b.equalsIgnoringMemberOrder(a))
        let c = try JSONValueParser.parse(Array(#"{"b": {"y": "s", "x": [{"q": null, "p": true}, 1]}, "a": 1}"#.utf8))
        #expect(!a.equalsIgnoringMemberOrder(c), "array order still counts")
        let d = try JSONValueParser.parse(
            Array(#"{"a": 1, "b": {"x": [1, {"p": true, "q": null}], "y": "s"}, "c": 0}"#.utf8))
        #expect(!a.equalsIgnoringMemberOrder(d) && !d.equalsIgnoringMemberOrder(a))
        let e = try JSONValueParser.parse(Array(#"{"a": 1.0, "b": {"x": [1, {"p": true, "q": null}], "y": "s"}}"#.utf8))
        #expect(!a.equalsIgnoringMemberOrder(e), "numbers compare as written, as ==")
    }
}
