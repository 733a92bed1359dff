import DocSyncJSON
import DocSyncKit
import Testing

private func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The error `scanDocument` throws for `bytes`, or nil if it succeeds.
private func scanError(_ bytes: [UInt8]) -> JSONSyntaxError? {
    do {
        _ = try JSONScanner.scanDocument(bytes)
        return nil
    } catch {
        return error
    }
}

private func validateError(_ bytes: [UInt8]) -> JSONSyntaxError? {
    do {
        try JSONScanner.validate(bytes)
        return nil
    } catch {
        return error
    }
}

/// The raw text of a byte range.
private func text(_ bytes: [UInt8], _ range: Range<Int>) -> String {
    String(decoding: bytes[range], as: UTF8.self)
}

@Suite("JSONScanner")
struct JSONScannerTests {
    // MARK: Valid documents

    @Test func membersOfEveryKind() throws {
        let doc = utf8(
            """
            {
              "s": "text",
              "n": -12.5e3,
              "t": true,
              "f": false,
              "z": null,
              "a": [1, "two", [3], {"four": 4}],
              "o": {"nested": {"deeper": [true, null]}},
              "e": {},
              "ea": []
            }
            """)
        let scanned = try JSONScanner.scanDocument(doc)
        let expected: [(String, JSONValueKind, String)] = [
            ("s", .string, "\"text\""),
            ("n", .number, "-12.5e3"),
            ("t", .bool, "true"),
            ("f", .bool, "false"),
            ("z", .null, "null"),
            ("a", .array, "[1, \"two\", [3], {\"four\": 4}]"),
            ("o", .object, "{\"nested\": {\"deeper\": [true, null]}}"),
            ("e", .object, "{}"),
            ("ea", .array, "[]")
        ]
        #expect(scanned.members.count == expected.count)
        for (member, (key, kind, raw)) in zip(scanned.members, expected) {
            #expect(member.key == key)
            #expect(member.kind == kind)
            #expect(text(doc, member.valueRange) == raw)
            #expect(text(doc, member.keyRange) == "\"\(key)\"")
            #expect(member.stringValue == (kind == .string ? "text" : nil))
        }
        #expect(scanned.openBrace == 0)
        #expect(scanned.closeBrace == doc.count - 1)
        #expect(doc[scanned.closeBrace] == UInt8(ascii: "}"))
        #expect(scanned.member(named: "n")?.kind == .number)
        #expect(scanned.member(named: "missing") == nil)
    }

    @Test func emptyObjectAndSurroundingWhitespace() throws {
        let doc = utf8(" \r\n\t{ } \n")
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members.isEmpty)
        #expect(scanned.openBrace == 4)
        #expect(scanned.closeBrace == 6)
    }

    @Test func nestedReservedKeysAreNotTopLevel() throws {
        let doc = utf8(
            #"{"refId": "r", "inner": {"refId": 1, "changesetId": 2}, "list": [{"changesetId": "x"}, {"changesetId": "y"}]}"#
        )
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members.map(\.key) == ["refId", "inner", "list"])
        #expect(scanned.member(named: "refId")?.stringValue == "r")
    }

    /// I-JSON (RFC 7493): a document may not repeat a member name within one object, at
    /// any depth; the same name in different objects is fine. `validate` is plain RFC 8259.
    @Test func sameNamesInDifferentObjectsAreFine() throws {
        let doc = utf8(#"{"a": {"a": 1, "b": {"a": 2}}, "b": [{"a": 1, "b": 2}, {"a": 3, "b": 4}], "c": {}}"#)
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members.map(\.key) == ["a", "b", "c"])
        try JSONScanner.validate(utf8(#"{"a": 1, "a": 2}"#))
        // Names compare by code points: canonically equivalent names are different names.
        let escapes = try JSONScanner.scanDocument(utf8(#"{"\u00e9": 1, "e\u0301": 2}"#))
        let literal = try JSONScanner.scanDocument(utf8("{\"\u{E9}\": 1, \"e\u{301}\": 2}"))
        #expect(escapes.members.count == 2 && literal.members.count == 2)
        // Past the names compared one by one, a large object is still checked.
        let many = (0..<40).map { "\"k\($0)\": \($0)" }
        _ = try JSONScanner.scanDocument(utf8("{" + many.joined(separator: ", ") + "}"))
        let repeated = scanError(utf8("{" + (many + ["\"k3\": 0"]).joined(separator: ", ") + "}"))
        #expect(repeated?.reason == "duplicate member name \"k3\"")
        let nested = scanError(utf8("{\"o\": {" + many.joined(separator: ", ") + ", \"x\": {\"k3\": 1}, \"k39\": 1}}"))
        #expect(nested?.reason == "duplicate member name \"k39\"")
    }

    @Test func unicodeKeysAndValues() throws {
        let doc = utf8(#"{"ключ": "значение", "emoji😀": "🎉 ok", "中文": ["é"]}"#)
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members.map(\.key) == ["ключ", "emoji😀", "中文"])
        #expect(scanned.members[0].stringValue == "значение")
        #expect(scanned.members[1].stringValue == "🎉 ok")
        #expect(text(doc, scanned.members[1].keyRange) == "\"emoji😀\"")
        #expect(text(doc, scanned.members[2].valueRange) == "[\"é\"]")
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""a\"b""#, "a\"b"),
        (#""back\\slash""#, "back\\slash"),
        (#""sl\/ash""#, "sl/ash"),
        (#""\b\f\n\r\t""#, "\u{8}\u{C}\n\r\t"),
        (#""\u00e9\u00E9""#, "éé"),
        (#""\u0000""#, "\u{0}"),
        (#""\ud83d\ude00""#, "😀"),
        (#""x\uD834\uDD1Ey""#, "x𝄞y"),
        (#""\ud800""#, "\u{FFFD}"),
        (#""\udc00x""#, "\u{FFFD}x"),
        (#""\ud800\u0041""#, "\u{FFFD}A"),
        (#""\ud800\ud800""#, "\u{FFFD}\u{FFFD}"),
        (#""é\n😀""#, "é\n😀")
    ])
    func escapesAreDecoded(literal: String, decoded: String) throws {
        let doc = utf8("{\(literal): \(literal)}")
        let scanned = try JSONScanner.scanDocument(doc)
        let member = try #require(scanned.members.first)
        #expect(member.key == decoded)
        #expect(member.stringValue == decoded)
        #expect(text(doc, member.valueRange) == literal)
        #expect(text(doc, member.keyRange) == literal)
    }

    @Test func byteOrderMarkIsSkippedButOffsetsIndexTheFile() throws {
        let doc: [UInt8] = [0xEF, 0xBB, 0xBF] + utf8(#"{"a": "b"}"#)
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.openBrace == 3)
        #expect(scanned.members[0].keyRange == 4..<7)
        #expect(scanned.members[0].valueRange == 9..<12)
        #expect(scanned.closeBrace == 12)
        try JSONScanner.validate([0xEF, 0xBB, 0xBF] + utf8("[1]"))
    }

    @Test func validateAcceptsAnyTopLevelValue() throws {
        for text in [
            "[]", "[1, [2, {}]]", "\"s\"", "0", " -1.5E+2 ", "true", "false", "null", "{}",
            "{\"refId\": 1, \"refId\": 2}"
        ] {
            #expect(validateError(utf8(text)) == nil, "\(text)")
        }
    }

    // MARK: Numbers

    @Test(arguments: [
        "0", "-0", "-0.0", "1e400", "-1E-400", "1e+5", "12345678901234567890.1234567890",
        "10", "0.5", "-0.0e0", "123e0099", "9007199254740993"
    ])
    func validNumbers(_ number: String) throws {
        try JSONScanner.validate(utf8(number))
        let doc = utf8("{\"n\": \(number)}")
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members[0].kind == .number)
        #expect(text(doc, scanned.members[0].valueRange) == number)
    }

    @Test(arguments: [
        ErrorCase("01", offset: 1, line: 1, column: 2, "leading zero in number"),
        ErrorCase("-01", offset: 2, line: 1, column: 3, "leading zero in number"),
        ErrorCase("1.", offset: 2, line: 1, column: 3, "unexpected end of file, expected a digit after '.' in number"),
        ErrorCase("1.e5", offset: 2, line: 1, column: 3, "expected a digit after '.' in number"),
        ErrorCase(".5", offset: 0, line: 1, column: 1, "number must start with a digit or '-'"),
        ErrorCase("+1", offset: 0, line: 1, column: 1, "number must start with a digit or '-'"),
        ErrorCase("1e", offset: 2, line: 1, column: 3, "unexpected end of file, expected a digit in exponent"),
        ErrorCase("1e+", offset: 3, line: 1, column: 4, "unexpected end of file, expected a digit in exponent"),
        ErrorCase("1E-x", offset: 3, line: 1, column: 4, "expected a digit in exponent"),
        ErrorCase("-", offset: 1, line: 1, column: 2, "unexpected end of file, expected a digit after '-'"),
        ErrorCase("-a", offset: 1, line: 1, column: 2, "expected a digit after '-'"),
        ErrorCase("0x10", offset: 1, line: 1, column: 2, "trailing characters after the top-level value"),
        ErrorCase("1 2", offset: 2, line: 1, column: 3, "trailing characters after the top-level value")
    ])
    func invalidNumbers(_ c: ErrorCase) {
        #expect(
            validateError(c.input)
                == JSONSyntaxError(offset: c.offset, line: c.line, column: c.column, reason: c.reason))
    }

    @Test(arguments: ["01", "1.", ".5", "+1", "1e", "-", "1.5e", "00", "- 1", "1e1.5", "Infinity", "NaN"])
    func invalidNumbersInsideADocument(_ number: String) {
        #expect(scanError(utf8("{\"n\": \(number)}")) != nil)
    }

    // MARK: Errors

    @Test(arguments: [
        // Structure.
        ErrorCase(#"{"a": 1 "b": 2}"#, offset: 8, line: 1, column: 9, "expected ',' or '}' after object member"),
        ErrorCase(#"{"a": [1 2]}"#, offset: 9, line: 1, column: 10, "expected ',' or ']' after array element"),
        ErrorCase(#"{"a" 1}"#, offset: 5, line: 1, column: 6, "expected ':' after object key"),
        ErrorCase(#"{1: 2}"#, offset: 1, line: 1, column: 2, "expected a string key or '}'"),
        ErrorCase(#"{'a': 2}"#, offset: 1, line: 1, column: 2, "expected a string key or '}'"),
        ErrorCase(#"{"a": 1, 2}"#, offset: 9, line: 1, column: 10, "expected a string key after ','"),
        ErrorCase(#"{"a": 1,}"#, offset: 8, line: 1, column: 9, "trailing comma before '}'"),
        ErrorCase(#"{"a": [1,]}"#, offset: 9, line: 1, column: 10, "trailing comma before ']'"),
        ErrorCase(#"{"a": }"#, offset: 6, line: 1, column: 7, "expected a value"),
        ErrorCase(#"{"a": [,1]}"#, offset: 7, line: 1, column: 8, "expected a value"),
        ErrorCase(#"{"a": True}"#, offset: 6, line: 1, column: 7, "expected a value"),
        ErrorCase(#"{"a": tru}"#, offset: 9, line: 1, column: 10, "invalid literal, expected 'true'"),
        ErrorCase(#"{"a": nul"#, offset: 9, line: 1, column: 10, "invalid literal, expected 'null'"),
        ErrorCase(#"{"a": fals"#, offset: 10, line: 1, column: 11, "invalid literal, expected 'false'"),
        ErrorCase(#"{"a": truex}"#, offset: 10, line: 1, column: 11, "expected ',' or '}' after object member"),
        ErrorCase(#"{} x"#, offset: 3, line: 1, column: 4, "trailing characters after the top-level value"),
        ErrorCase("{}\n{}", offset: 3, line: 2, column: 1, "trailing characters after the top-level value"),
        ErrorCase(#"{"a": 1}}"#, offset: 8, line: 1, column: 9, "trailing characters after the top-level value"),
        // End of file.
        ErrorCase(#"{"a": "#, offset: 6, line: 1, column: 7, "unexpected end of file, expected a value"),
        ErrorCase(
            #"{"a": 1"#, offset: 7, line: 1, column: 8,
            "unexpected end of file, expected ',' or '}' after object member"),
        ErrorCase(
            #"{"a": [1"#, offset: 8, line: 1, column: 9,
            "unexpected end of file, expected ',' or ']' after array element"),
        ErrorCase(#"{"a""#, offset: 4, line: 1, column: 5, "unexpected end of file, expected ':' after object key"),
        ErrorCase("{", offset: 1, line: 1, column: 2, "unexpected end of file, expected a string key or '}'"),
        ErrorCase(
            #"{"a": 1,"#, offset: 8, line: 1, column: 9, "unexpected end of file, expected a string key after ','"),
        // Strings.
        ErrorCase(#"{"a": "abc"#, offset: 6, line: 1, column: 7, "unterminated string"),
        ErrorCase(#"{"abc"#, offset: 1, line: 1, column: 2, "unterminated string"),
        ErrorCase(#"{"a": "abc\"#, offset: 6, line: 1, column: 7, "unterminated string"),
        ErrorCase(#"{"a": "\u12"#, offset: 6, line: 1, column: 7, "unterminated string"),
        ErrorCase("{\"a\": \"ab\ncd\"}", offset: 9, line: 1, column: 10, "control character in string"),
        ErrorCase("{\"a\": \"ab\tcd\"}", offset: 9, line: 1, column: 10, "control character in string"),
        ErrorCase(#"{"a": "x\qy"}"#, offset: 8, line: 1, column: 9, "invalid escape '\\q'"),
        ErrorCase(#"{"a": "\x41"}"#, offset: 7, line: 1, column: 8, "invalid escape '\\x'"),
        ErrorCase(#"{"a": "\U0041"}"#, offset: 7, line: 1, column: 8, "invalid escape '\\U'"),
        ErrorCase("{\"a\": \"\\\u{1}\"}", offset: 7, line: 1, column: 8, "invalid escape: '\\' followed by byte 0x01"),
        ErrorCase(#"{"a": "\u12G4"}"#, offset: 7, line: 1, column: 8, "invalid \\u escape, expected 4 hex digits"),
        ErrorCase(#"{"a": "\u12"}"#, offset: 7, line: 1, column: 8, "invalid \\u escape, expected 4 hex digits"),
        // Not an object.
        ErrorCase("[1, 2]", offset: 0, line: 1, column: 1, "top-level value is an array, not an object"),
        ErrorCase("\n  [1, ", offset: 3, line: 2, column: 3, "top-level value is an array, not an object"),
        ErrorCase(#""text""#, offset: 0, line: 1, column: 1, "top-level value is a string, not an object"),
        ErrorCase("42", offset: 0, line: 1, column: 1, "top-level value is a number, not an object"),
        ErrorCase(" true", offset: 1, line: 1, column: 2, "top-level value is a boolean, not an object"),
        ErrorCase("null", offset: 0, line: 1, column: 1, "top-level value is null, not an object"),
        ErrorCase("nul", offset: 3, line: 1, column: 4, "invalid literal, expected 'null'"),
        ErrorCase("x", offset: 0, line: 1, column: 1, "expected a value"),
        // Empty.
        ErrorCase("", offset: 0, line: 1, column: 1, "empty file"),
        ErrorCase(bytes: [0xEF, 0xBB, 0xBF], offset: 3, line: 1, column: 1, "empty file"),
        ErrorCase(" \n\t ", offset: 4, line: 2, column: 3, "file contains only whitespace"),
        ErrorCase("\r\n\r\n", offset: 4, line: 3, column: 1, "file contains only whitespace"),
        // NUL bytes outside strings.
        ErrorCase("{\"a\": 1,\u{0} \"b\": 2}", offset: 8, line: 1, column: 9, "unexpected NUL byte"),
        ErrorCase("{\"a\": \u{0}}", offset: 6, line: 1, column: 7, "unexpected NUL byte"),
        ErrorCase("{\"a\": 1\u{0}}", offset: 7, line: 1, column: 8, "unexpected NUL byte"),
        ErrorCase("{}\u{0}\u{0}", offset: 2, line: 1, column: 3, "unexpected NUL byte"),
        ErrorCase("\u{0}{}", offset: 0, line: 1, column: 1, "unexpected NUL byte"),
        ErrorCase("{\"a\": \"\u{0}\"}", offset: 7, line: 1, column: 8, "control character in string"),
        // Invalid UTF-8 (the error points at the first byte of the bad sequence).
        ErrorCase(
            bytes: utf8(#"{"a": ""#) + [0xC3, 0x28] + utf8(#""}"#), offset: 7, line: 1, column: 8, "invalid UTF-8"),
        ErrorCase(bytes: utf8(#"{"a": "x"#) + [0xFF] + utf8(#""}"#), offset: 8, line: 1, column: 9, "invalid UTF-8"),
        ErrorCase(bytes: utf8(#"{"a": ""#) + [0x80] + utf8(#""}"#), offset: 7, line: 1, column: 8, "invalid UTF-8"),
        // An overlong '/'.
        ErrorCase(
            bytes: utf8(#"{"a": ""#) + [0xC0, 0xAF] + utf8(#""}"#), offset: 7, line: 1, column: 8, "invalid UTF-8"),
        ErrorCase(
            bytes: utf8(#"{"a": ""#) + [0xE0, 0x80, 0xAF] + utf8(#""}"#), offset: 7, line: 1, column: 8, "invalid UTF-8"
        ),  // overlong
        ErrorCase(
            bytes: utf8(#"{"a": ""#) + [0xED, 0xA0, 0x80] + utf8(#""}"#), offset: 7, line: 1, column: 8, "invalid UTF-8"
        ),  // surrogate
        ErrorCase(
            bytes: utf8(#"{"a": ""#) + [0xF4, 0x90, 0x80, 0x80] + utf8(#""}"#), offset: 7, line: 1, column: 8,
            "invalid UTF-8"),  // > U+10FFFF
        // Truncated at EOF, then in a key.
        ErrorCase(bytes: utf8(#"{"a": ""#) + [0xF0, 0x9F, 0x98], offset: 7, line: 1, column: 8, "invalid UTF-8"),
        ErrorCase(bytes: utf8(#"{"ab"#) + [0xE2, 0x82], offset: 4, line: 1, column: 5, "invalid UTF-8"),
        // Columns count Unicode scalars, not bytes: "{"é": "ü" is 8 scalars but 10 bytes.
        ErrorCase(bytes: utf8(#"{"é": "ü"#) + [0xFF], offset: 10, line: 1, column: 9, "invalid UTF-8"),
        ErrorCase(#"{"日本": 1 2}"#, offset: 13, line: 1, column: 10, "expected ',' or '}' after object member"),
        // Repeated member names (I-JSON), reserved keys included; escapes are decoded first.
        ErrorCase(#"{"refId": "a", "refId": "b"}"#, offset: 15, line: 1, column: 16, "duplicate member name \"refId\""),
        ErrorCase(
            #"{"changesetId": "a", "x": 1, "changesetId": "a"}"#, offset: 29, line: 1, column: 30,
            "duplicate member name \"changesetId\""),
        ErrorCase(
            #"{"refId": "a", "ref\u0049d": "b"}"#, offset: 15, line: 1, column: 16, "duplicate member name \"refId\""),
        ErrorCase(#"{"a":1,"a":2}"#, offset: 7, line: 1, column: 8, "duplicate member name \"a\""),
        ErrorCase(#"{"a": 1, "b": 2, "c": 3, "b": 4}"#, offset: 25, line: 1, column: 26, "duplicate member name \"b\""),
        ErrorCase(
            #"{"o": {"x": 1, "y": {"z": 1}, "x": 2}}"#, offset: 30, line: 1, column: 31, "duplicate member name \"x\""),
        ErrorCase(
            #"{"l": [{"a": 1}, {"a": 1, "a": 1}]}"#, offset: 26, line: 1, column: 27, "duplicate member name \"a\""),
        ErrorCase(#"{"é": 1, "\u00e9": 2}"#, offset: 10, line: 1, column: 10, "duplicate member name \"é\""),
        ErrorCase(#"{"": 1, "": 2}"#, offset: 8, line: 1, column: 9, "duplicate member name \"\""),
        ErrorCase(
            bytes: [0xEF, 0xBB, 0xBF] + utf8(#"{"a" 1}"#), offset: 8, line: 1, column: 6,
            "expected ':' after object key")
    ])
    func errors(_ c: ErrorCase) {
        let expected = JSONSyntaxError(offset: c.offset, line: c.line, column: c.column, reason: c.reason)
        #expect(scanError(c.input) == expected)
    }

    /// The same mistakes spread over lines, with LF, CRLF and lone CR line breaks.
    @Test(arguments: ["\n", "\r\n", "\r"])
    func multiLineErrors(newline: String) {
        func doc(_ lines: [String]) -> [UInt8] { utf8(lines.joined(separator: newline)) }
        let cases: [([String], Int, Int, String)] = [
            (["{", #"  "a": 1,"#, #"  "b": "x\qy""#, "}"], 3, 10, "invalid escape '\\q'"),
            (["{", #"  "a": 1"#, #"  "b": 2"#, "}"], 3, 3, "expected ',' or '}' after object member"),
            (
                ["{", #"  "refId": "r","#, #"  "list": ["#, "    1", "  ],", #"  "refId": "s""#, "}"], 6, 3,
                "duplicate member name \"refId\""
            ),
            (["{", #"  "é": "ü","#, "\t\"ключ\": tru", "}"], 3, 13, "invalid literal, expected 'true'"),
            (["{", #"  "a": "open"#, "}"], 2, 13, "control character in string"),
            (["{", #"  "a": 1"#, "", "  "], 4, 3, "unexpected end of file, expected ',' or '}' after object member"),
            (["{}", "", "x"], 3, 1, "trailing characters after the top-level value")
        ]
        for (lines, line, column, reason) in cases {
            let input = doc(lines)
            let error = scanError(input)
            #expect(error?.line == line, "\(lines)")
            #expect(error?.column == column, "\(lines)")
            #expect(error?.reason == reason, "\(lines)")
            if let error {
                #expect(JSONScanner.location(of: error.offset, in: input) == (line, column))
            }
        }
    }

    @Test func descriptionFormat() {
        let error = scanError(utf8("{\n  \"a\": \"x\\qy\"\n}"))
        #expect(error?.description == "line 2, column 10: invalid escape '\\q'")
    }

    // MARK: Depth

    @Test func hundredThousandDeepArrayValidates() throws {
        let depth = 100_000
        let doc =
            [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
        try JSONScanner.validate(doc)
        #expect(scanError(doc)?.reason == "top-level value is an array, not an object")
    }

    @Test func hundredThousandDeepObjectScans() throws {
        let depth = 100_000
        var doc: [UInt8] = []
        for _ in 0..<depth { doc += utf8(#"{"k":"#) }
        doc += utf8("[1]")
        doc += [UInt8](repeating: UInt8(ascii: "}"), count: depth)
        let scanned = try JSONScanner.scanDocument(doc)
        #expect(scanned.members.count == 1)
        #expect(scanned.members[0].kind == .object)
        #expect(scanned.members[0].valueRange == 5..<doc.count - 1)
        #expect(scanned.closeBrace == doc.count - 1)
    }

    @Test func unterminatedDeepNestingFailsCleanly() {
        let depth = 100_001
        let open = [UInt8](repeating: UInt8(ascii: "["), count: depth)
        #expect(
            validateError(open)
                == JSONSyntaxError(
                    offset: depth, line: 1, column: depth + 1,
                    reason: "unexpected end of file, expected a value"))
        let oneShort = open + [UInt8](repeating: UInt8(ascii: "]"), count: depth - 1)
        #expect(validateError(oneShort)?.reason == "unexpected end of file, expected ',' or ']' after array element")
        #expect(validateError(oneShort)?.offset == oneShort.count)

        var objects = utf8("{")
        for _ in 0..<depth { objects += utf8(#""k":{"#) }
        #expect(scanError(objects)?.reason == "unexpected end of file, expected a string key or '}'")
    }

    // MARK: Robustness

    /// Every prefix and every single-byte mutation of a valid document either scans or
    /// throws; none crashes, and each error offset lies within the input.
    @Test func truncationsAndMutationsNeverCrash() {
        let doc = utf8(#"{"refId": "r\u00e9", "n": [-1.5e3, true, null, {"é": "\ud83d\ude00"}], "s": "a\"b"}"#)
        for end in 0...doc.count {
            let prefix = Array(doc[..<end])
            if let error = scanError(prefix) {
                #expect(error.offset <= prefix.count)
            } else {
                #expect(end == doc.count)
            }
        }
        let replacements: [UInt8] = [
            0x00, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x20, 0x30, 0x80, 0xFF, 0x65, 0x2D
        ]
        for i in doc.indices {
            for byte in replacements {
                var mutated = doc
                mutated[i] = byte
                if let error = validateError(mutated) { #expect(error.offset <= mutated.count) }
                if let error = scanError(mutated) { #expect(error.offset <= mutated.count) }
            }
        }
    }
}

extension JSONScannerTests {
    /// An input that must fail, with where and why.
    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var input: [UInt8]
        var offset: Int
        var line: Int
        var column: Int
        var reason: String
        var testDescription: String {
            reason + " @ " + String(decoding: input.prefix(40), as: UTF8.self).debugDescription
        }

        init(_ input: String, offset: Int, line: Int, column: Int, _ reason: String) {
            self.init(bytes: Array(input.utf8), offset: offset, line: line, column: column, reason)
        }

        init(bytes: [UInt8], offset: Int, line: Int, column: Int, _ reason: String) {
            self.input = bytes
            self.offset = offset
            self.line = line
            self.column = column
            self.reason = reason
        }
    }
}
