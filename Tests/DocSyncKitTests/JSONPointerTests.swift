// JSONPointer (DocSyncJSON) against RFC 6901. The package has no DocSyncJSON test target;
// the JSON value tests live here in DocSyncKitTests, and so do these.

import DocSyncJSON
import Testing

private func json(_ text: String) throws -> JSONValue {
    try JSONValueParser.parse(Array(text.utf8))
}

@Suite struct JSONPointerTests {
    /// The document of RFC 6901 section 5.
    static let document = #"""
        {
           "foo": ["bar", "baz"],
           "": 0,
           "a/b": 1,
           "c%d": 2,
           "e^f": 3,
           "g|h": 4,
           "i\\j": 5,
           "k\"l": 6,
           " ": 7,
           "m~n": 8
        }
        """#

    @Test func rfc6901SectionFiveExamples() throws {
        let root = try json(Self.document)
        let cases: [(String, [String], String)] = [
            ("", [], Self.document),
            ("/foo", ["foo"], #"["bar", "baz"]"#),
            ("/foo/0", ["foo", "0"], #""bar""#),
            ("/", [""], "0"),
            ("/a~1b", ["a/b"], "1"),
            ("/c%d", ["c%d"], "2"),
            ("/e^f", ["e^f"], "3"),
            ("/g|h", ["g|h"], "4"),
            (#"/i\j"#, [#"i\j"#], "5"),
            (#"/k"l"#, [#"k"l"#], "6"),
            ("/ ", [" "], "7"),
            ("/m~0n", ["m~n"], "8")
        ]
        for (pointer, tokens, expected) in cases {
            #expect(JSONPointer.tokens(pointer) == tokens, "\(pointer)")
            #expect(JSONPointer.pointer(tokens) == pointer, "\(pointer)")
            #expect(try JSONPointer.value(at: pointer, in: root) == json(expected), "\(pointer)")
        }
    }

    @Test func tokensWithTildeAndSlashRoundTrip() {
        let tokens = ["~/", "/~", "~0", "~1", "a~1b/c~0d", "~~//", "", "~", "/"]
        for token in tokens {
            #expect(JSONPointer.unescape(Substring(JSONPointer.escape(token))) == token)
        }
        #expect(JSONPointer.escape("~/") == "~0~1")
        #expect(JSONPointer.escape("/~") == "~1~0")
        #expect(JSONPointer.escape("~1") == "~01")
        let pointer = JSONPointer.pointer(tokens)
        #expect(pointer == "/~0~1/~1~0/~00/~01/a~01b~1c~00d/~0~0~1~1//~0/~1")
        #expect(JSONPointer.tokens(pointer) == tokens)
        #expect(JSONPointer.appending("a/b", to: "/x") == "/x/a~1b")
    }

    @Test func invalidPointers() throws {
        #expect(JSONPointer.tokens("foo") == nil)
        #expect(JSONPointer.tokens("~2") == nil)
        #expect(JSONPointer.tokens("/~2") == nil)
        #expect(JSONPointer.tokens("/a~") == nil)
        #expect(JSONPointer.value(at: "foo", in: try json(Self.document)) == nil)
        // `$ref` fragments read a "~" that starts no escape as itself.
        #expect(JSONPointer.tokens("/a~2/~~1/b~", keepingInvalidEscapes: true) == ["a~2", "~/", "b~"])
        #expect(JSONPointer.tokens("foo", keepingInvalidEscapes: true) == nil)
    }

    @Test func arrayIndexes() throws {
        let root = try json(#"{"a": [10, 11, 12]}"#)
        #expect(try JSONPointer.value(at: "/a/2", in: root) == json("12"))
        #expect(JSONPointer.value(at: "/a/3", in: root) == nil)
        #expect(JSONPointer.value(at: "/a/01", in: root) == nil)
        #expect(JSONPointer.value(at: "/a/-", in: root) == nil)
        #expect(JSONPointer.value(at: "/a/0/x", in: root) == nil)
    }
}
