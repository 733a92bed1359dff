// A validating, byte-level JSON scanner (RFC 8259).
//
// It never builds a value tree: it checks the whole text and reports where each member
// of the top-level object sits, so the identity stamper can edit a file in place. It is
// iterative (nesting depth lives in an explicit stack, not on the call stack), so
// hostile files like 100,000 nested '[' fail or pass cleanly instead of crashing.
//
// Choices worth knowing:
// - A leading UTF-8 byte order mark is skipped; offsets still index the original bytes.
// - Numbers are checked against the grammar only, never converted, so 1e400, -0 and
//   20-digit integers are fine.
// - A lone surrogate escape ("\uD800") is accepted, as most parsers do; when such a
//   string is decoded (keys, top-level string values) it becomes U+FFFD.
// - A document (`scanDocument`) is I-JSON (RFC 7493) in one respect: no object, at any
//   depth, repeats a member name (after decoding escapes, so "a" and "\u0061" are the
//   same). A merge would otherwise keep one of the two values silently. `validate` is
//   plain RFC 8259 and allows repeats. Names are compared by code points (no Unicode
//   normalization). An object's names are compared byte for byte while it has a few,
//   without allocating; a large object's go into a set, so the check stays linear.
// - Error columns count Unicode scalars, not bytes, from the start of the line (a tab is
//   one column; a BOM is not counted). LF, CRLF and a lone CR each end a line.

public enum JSONValueKind: Sendable, Equatable { case object, array, string, number, bool, null }

/// One key/value pair at the top level of a document, with byte offsets into the file.
public struct TopLevelMember: Sendable, Equatable {
    /// Decoded key (escapes resolved).
    public var key: String
    /// Bytes of the key token including its quotes.
    public var keyRange: Range<Int>
    /// Bytes of the value token (for strings: including quotes; for containers: brackets included).
    public var valueRange: Range<Int>
    public var kind: JSONValueKind
    /// Decoded value when `kind == .string`.
    public var stringValue: String?

    public init(
        key: String, keyRange: Range<Int>, valueRange: Range<Int>, kind: JSONValueKind, stringValue: String? = nil
    ) {
        self.key = key
        self.keyRange = keyRange
        self.valueRange = valueRange
        self.kind = kind
        self.stringValue = stringValue
    }
}

public struct ScannedDocument: Sendable, Equatable {
    /// Top-level members in file order.
    public var members: [TopLevelMember]
    /// Offset of the top-level '{'.
    public var openBrace: Int
    /// Offset of the matching '}'.
    public var closeBrace: Int

    public init(members: [TopLevelMember], openBrace: Int, closeBrace: Int) {
        self.members = members
        self.openBrace = openBrace
        self.closeBrace = closeBrace
    }

    /// The member with this key (keys are unique: `scanDocument` refuses repeats).
    public func member(named key: String) -> TopLevelMember? {
        members.last { $0.key == key }
    }
}

public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset of the offending byte (the file length for an unexpected end of file).
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in Unicode scalars (not bytes) from the start of the line.
    public var column: Int
    /// Short lowercase explanation, e.g. "unterminated string".
    public var reason: String

    public init(offset: Int, line: Int, column: Int, reason: String) {
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// "line L, column C: reason"
    public var description: String { "line \(line), column \(column): \(reason)" }
}

public enum JSONScanner {
    /// Validates the whole text and returns the top-level object's members.
    public static func scanDocument(_ bytes: [UInt8]) throws(JSONSyntaxError) -> ScannedDocument {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try scanDocument(buffer: buffer) }
    }

    /// Same as `scanDocument(_:)` over memory the caller owns (e.g. a mapped file).
    /// The result holds no pointers into the buffer.
    public static func scanDocument(buffer: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> ScannedDocument {
        var scanner = Scanner(buffer, collectMembers: true, uniqueNames: true)
        try scanner.run()
        return ScannedDocument(members: scanner.members, openBrace: scanner.openBrace, closeBrace: scanner.closeBrace)
    }

    /// Validates only (any top-level value, plain RFC 8259), and with `uniqueMemberNames`
    /// refuses an object that repeats a member name, as `scanDocument` does.
    public static func validate(_ bytes: [UInt8], uniqueMemberNames: Bool = false) throws(JSONSyntaxError) {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            try validate(buffer: buffer, uniqueMemberNames: uniqueMemberNames)
        }
    }

    /// Same as `validate(_:)` over memory the caller owns.
    public static func validate(buffer: UnsafeBufferPointer<UInt8>, uniqueMemberNames: Bool = false)
        throws(JSONSyntaxError)
    {
        var scanner = Scanner(buffer, collectMembers: false, uniqueNames: uniqueMemberNames)
        try scanner.run()
    }

    /// Line and column (1-based, column in Unicode scalars) of a byte offset.
    public static func location(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        bytes.withUnsafeBufferPointer { Scanner.location(of: offset, in: $0) }
    }
}

// MARK: - The scanner

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

/// One pass over the bytes. `collectMembers` is the `scanDocument` mode: the top level
/// must be an object and its members are recorded. With `uniqueNames` (always in that
/// mode) no object may repeat a member name.
private struct Scanner {
    /// A member name as it is in the text: the bytes between its quotes.
    struct NameToken {
        var content: Range<Int>
        var escaped: Bool
    }

    /// An open object's member names: `names[firstName...]` while it has few, compared
    /// byte for byte without decoding or allocating (most objects have a handful); past
    /// `namesCompared`, a set of the decoded names, so a huge object stays linear.
    /// Plain data, so the stack of them costs no reference counting.
    struct OpenObject {
        var firstName: Int
        /// Index of its set in `nameSets`, -1 while its names are compared directly.
        var nameSet: Int
        /// One bit per name (from its length and end bytes): a name whose bit is not set
        /// is new without comparing. All ones once a name holds an escape.
        var seen: UInt64
    }

    static let namesCompared = 16

    let buf: UnsafeBufferPointer<UInt8>
    let end: Int
    let collectMembers: Bool
    let uniqueNames: Bool
    var pos = 0
    /// Open containers, innermost last: true for an object, false for an array.
    var stack: [Bool] = []

    var members: [TopLevelMember] = []
    var openBrace = -1
    var closeBrace = -1
    // The top-level member being scanned: its key is known, its value is in progress.
    var memberKey = ""
    var memberKeyRange = 0..<0
    var memberValueStart = 0
    var memberKind = JSONValueKind.null
    var memberString: String?
    /// The open objects, innermost last, and their member names (`uniqueNames` only).
    var openObjects: [OpenObject] = []
    var names: [NameToken] = []
    var nameSets: [Set<[UInt8]>] = []

    init(_ buf: UnsafeBufferPointer<UInt8>, collectMembers: Bool, uniqueNames: Bool) {
        self.buf = buf
        self.end = buf.count
        self.collectMembers = collectMembers
        self.uniqueNames = uniqueNames
        if uniqueNames {
            // Once per document, rather than growing on the first members.
            openObjects.reserveCapacity(8)
            names.reserveCapacity(32)
        }
    }

    mutating func run() throws(JSONSyntaxError) {
        if end >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { pos = 3 }
        let contentStart = pos
        skipWhitespace()
        if pos == end { throw error(pos == contentStart ? "empty file" : "file contains only whitespace") }

        // Each turn of `value` scans one value starting at `pos`. Scalars finish at once;
        // an opened container `continue`s with its first child. When a value is done,
        // `after` pops finished containers until one expects another child.
        value: while true {
            guard pos < end else { throw unexpected("expected a value") }
            let start = pos
            let depth = stack.count
            let byte = buf[pos]
            var kind = JSONValueKind.null
            var stringValue: String?
            switch byte {
            case UInt8(ascii: "{"):
                if depth == 0 { openBrace = pos }
                if depth == 1 { beginMember(at: start, kind: .object) }
                stack.append(true)
                pos += 1
                skipWhitespace()
                if pos < end, buf[pos] == UInt8(ascii: "}") {
                    pos += 1
                    stack.removeLast()
                    kind = .object
                } else {
                    try scanKey(afterComma: false)
                    continue value
                }
            case UInt8(ascii: "["):
                if depth == 0, collectMembers { throw error(notAnObject(.array), at: start) }
                if depth == 1 { beginMember(at: start, kind: .array) }
                stack.append(false)
                pos += 1
                skipWhitespace()
                if pos < end, buf[pos] == UInt8(ascii: "]") {
                    pos += 1
                    stack.removeLast()
                    kind = .array
                } else {
                    continue value
                }
            case quote:
                kind = .string
                let escaped = try scanString()
                if depth == 1 && collectMembers { stringValue = decodeString(start + 1..<pos - 1, escaped: escaped) }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                kind = .number
                try scanNumber()
            case UInt8(ascii: "t"):
                kind = .bool
                try scanLiteral("true")
            case UInt8(ascii: "f"):
                kind = .bool
                try scanLiteral("false")
            case UInt8(ascii: "n"):
                kind = .null
                try scanLiteral("null")
            case UInt8(ascii: "+"), UInt8(ascii: "."):
                throw error("number must start with a digit or '-'")
            default:
                throw unexpected("expected a value")
            }
            if depth == 0, collectMembers, kind != .object { throw error(notAnObject(kind), at: start) }
            if depth == 1, kind != .object, kind != .array { beginMember(at: start, kind: kind, string: stringValue) }

            // A value just ended at `pos`; `stack` holds the containers around it.
            after: while true {
                if stack.count == 1, collectMembers { endMember() }
                guard let inObject = stack.last else {
                    if collectMembers { closeBrace = pos - 1 }
                    skipWhitespace()
                    if pos < end {
                        throw error(
                            buf[pos] == 0 ? "unexpected NUL byte" : "trailing characters after the top-level value")
                    }
                    return
                }
                skipWhitespace()
                guard pos < end else {
                    throw unexpected(
                        inObject ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element"
                    )
                }
                switch (buf[pos], inObject) {
                case (UInt8(ascii: ","), true):
                    pos += 1
                    skipWhitespace()
                    try scanKey(afterComma: true)
                    continue value
                case (UInt8(ascii: ","), false):
                    pos += 1
                    skipWhitespace()
                    if pos < end, buf[pos] == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
                    continue value
                case (UInt8(ascii: "}"), true), (UInt8(ascii: "]"), false):
                    pos += 1
                    stack.removeLast()
                    if inObject, uniqueNames { closeObjectNames() }
                    continue after
                default:
                    throw unexpected(
                        inObject ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element"
                    )
                }
            }
        }
    }

    // MARK: Top-level members

    private mutating func beginMember(at start: Int, kind: JSONValueKind, string: String? = nil) {
        guard collectMembers else { return }
        memberValueStart = start
        memberKind = kind
        memberString = string
    }

    private mutating func endMember() {
        members.append(
            TopLevelMember(
                key: memberKey, keyRange: memberKeyRange, valueRange: memberValueStart..<pos,
                kind: memberKind, stringValue: memberString))
    }

    // MARK: Tokens

    private mutating func skipWhitespace() {
        while pos < end {
            switch buf[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// An object key and the ':' after it, leaving `pos` at the member's value.
    private mutating func scanKey(afterComma: Bool) throws(JSONSyntaxError) {
        guard pos < end, buf[pos] == quote else {
            if afterComma, pos < end, buf[pos] == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
            throw unexpected(afterComma ? "expected a string key after ','" : "expected a string key or '}'")
        }
        let start = pos
        let escaped = try scanString()
        if collectMembers, stack.count == 1 {
            memberKeyRange = start..<pos
            memberKey = decodeString(start + 1..<pos - 1, escaped: escaped)
        }
        if uniqueNames {
            let name = NameToken(content: start + 1..<pos - 1, escaped: escaped)
            if afterComma {
                try noteName(name, at: start)
            } else {
                openObjects.append(OpenObject(firstName: names.count, nameSet: -1, seen: summary(name)))
                names.append(name)
            }
        }
        skipWhitespace()
        guard pos < end, buf[pos] == UInt8(ascii: ":") else { throw unexpected("expected ':' after object key") }
        pos += 1
        skipWhitespace()
    }

    /// Adds the name of the innermost open object's second or later member; an error at
    /// the name's token if the object already has a member of that name.
    private mutating func noteName(_ name: NameToken, at start: Int) throws(JSONSyntaxError) {
        let object = openObjects.count - 1
        let setIndex = openObjects[object].nameSet
        if setIndex >= 0 {
            guard nameSets[setIndex].insert(decodedName(name)).inserted else { throw duplicate(name, at: start) }
            return
        }
        let first = openObjects[object].firstName
        let bit = summary(name)
        if openObjects[object].seen & bit != 0 {
            for i in first..<names.count where sameName(names[i], name) {
                throw duplicate(name, at: start)
            }
        }
        openObjects[object].seen |= bit
        names.append(name)
        if names.count - first > Self.namesCompared {
            nameSets.append(Set(names[first...].map(decodedName)))
            openObjects[object].nameSet = nameSets.count - 1
            names.removeLast(names.count - first)
        }
    }

    private mutating func closeObjectNames() {
        let object = openObjects.removeLast()
        if object.nameSet >= 0 {
            // Sets are made in the order objects open, so the innermost one's is last.
            nameSets.removeLast()
        } else {
            names.removeLast(names.count - object.firstName)
        }
    }

    /// The name's bit in `OpenObject.seen`: equal names have equal bits (an escaped name
    /// may equal any other, so it has them all).
    @inline(__always) private func summary(_ name: NameToken) -> UInt64 {
        if name.escaped { return ~0 }
        let n = name.content.count
        guard n > 0 else { return 1 }
        let mix = n &* 31 &+ Int(buf[name.content.lowerBound]) &* 7 &+ Int(buf[name.content.upperBound - 1])
        return 1 << UInt64(mix & 63)
    }

    /// Whether two names are the same string: byte for byte, decoding only when one
    /// holds an escape.
    private func sameName(_ a: NameToken, _ b: NameToken) -> Bool {
        if a.escaped || b.escaped { return decodedName(a) == decodedName(b) }
        guard a.content.count == b.content.count else { return false }
        var i = a.content.lowerBound, j = b.content.lowerBound
        while i < a.content.upperBound {
            if buf[i] != buf[j] { return false }
            i += 1
            j += 1
        }
        return true
    }

    /// A name's UTF-8 with escapes resolved: compared as bytes, because `String`'s `==`
    /// would also equate canonically equivalent names ("é" and "e\u0301"), which differ.
    private func decodedName(_ name: NameToken) -> [UInt8] {
        name.escaped ? Array(decodeString(name.content, escaped: true).utf8) : Array(buf[name.content])
    }

    private func duplicate(_ name: NameToken, at start: Int) -> JSONSyntaxError {
        error("duplicate member name \"\(decodeString(name.content, escaped: name.escaped))\"", at: start)
    }

    /// A string token starting at the opening quote. Returns whether it holds escapes.
    private mutating func scanString() throws(JSONSyntaxError) -> Bool {
        let open = pos
        var escaped = false
        pos += 1
        while pos < end {
            let byte = buf[pos]
            if byte == quote {
                pos += 1
                return escaped
            } else if byte == backslash {
                escaped = true
                try scanEscape(stringStart: open)
            } else if byte < 0x20 {
                throw error("control character in string")
            } else if byte < 0x80 {
                pos += 1
            } else {
                try scanUTF8Sequence()
            }
        }
        throw error("unterminated string", at: open)
    }

    /// One escape; errors point at its backslash.
    private mutating func scanEscape(stringStart: Int) throws(JSONSyntaxError) {
        let start = pos
        guard pos + 1 < end else { throw error("unterminated string", at: stringStart) }
        let byte = buf[pos + 1]
        switch byte {
        case quote, backslash, UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            pos += 2
        case UInt8(ascii: "u"):
            for i in 2..<6 {
                guard pos + i < end else { throw error("unterminated string", at: stringStart) }
                guard JSONStringDecoding.hexValue(buf[pos + i]) != nil else {
                    throw error("invalid \\u escape, expected 4 hex digits", at: start)
                }
            }
            pos += 6
        case 0x21...0x7E:
            throw error("invalid escape '\\\(Character(Unicode.Scalar(byte)))'")
        default:
            throw error("invalid escape: '\\' followed by \(describe(byte))")
        }
    }

    /// One multi-byte UTF-8 sequence (RFC 3629: no overlongs, surrogates or values above
    /// U+10FFFF). Errors point at its first byte.
    private mutating func scanUTF8Sequence() throws(JSONSyntaxError) {
        let lead = buf[pos]
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        let count: Int
        switch lead {
        case 0xC2...0xDF: count = 1
        case 0xE0:
            count = 2
            low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: count = 2
        case 0xED:
            count = 2
            high = 0x9F
        case 0xF0:
            count = 3
            low = 0x90
        case 0xF1...0xF3: count = 3
        case 0xF4:
            count = 3
            high = 0x8F
        default: throw error("invalid UTF-8")
        }
        guard pos + count < end, (low...high).contains(buf[pos + 1]) else { throw error("invalid UTF-8") }
        var i = 2
        while i <= count {
            guard buf[pos + i] & 0xC0 == 0x80 else { throw error("invalid UTF-8") }
            i += 1
        }
        pos += count + 1
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, checked, never converted.
    private mutating func scanNumber() throws(JSONSyntaxError) {
        if buf[pos] == UInt8(ascii: "-") { pos += 1 }
        if pos < end, buf[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < end, isDigit(buf[pos]) { throw error("leading zero in number") }
        } else if !skipDigits() {
            throw unexpected("expected a digit after '-'")
        }
        if pos < end, buf[pos] == UInt8(ascii: ".") {
            pos += 1
            guard skipDigits() else { throw unexpected("expected a digit after '.' in number") }
        }
        if pos < end, buf[pos] | 0x20 == UInt8(ascii: "e") {
            pos += 1
            if pos < end, buf[pos] == UInt8(ascii: "+") || buf[pos] == UInt8(ascii: "-") { pos += 1 }
            guard skipDigits() else { throw unexpected("expected a digit in exponent") }
        }
    }

    /// Skips a run of digits; false if there was none.
    private mutating func skipDigits() -> Bool {
        let start = pos
        while pos < end, isDigit(buf[pos]) { pos += 1 }
        return pos > start
    }

    private mutating func scanLiteral(_ word: StaticString) throws(JSONSyntaxError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in text {
            guard pos < end, buf[pos] == expected else { throw error("invalid literal, expected '\(word)'") }
            pos += 1
        }
    }

    // MARK: Decoding (only for top-level keys and string values; the text is already valid)

    private func decodeString(_ range: Range<Int>, escaped: Bool) -> String {
        escaped
            ? JSONStringDecoding.decode(buf, range)
            : String(decoding: UnsafeBufferPointer(rebasing: buf[range]), as: UTF8.self)
    }

    // MARK: Errors

    private func error(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
        let offset = offset ?? pos
        let (line, column) = Scanner.location(of: offset, in: buf)
        return JSONSyntaxError(offset: offset, line: line, column: column, reason: reason)
    }

    /// An error at `pos` that says so when the real problem is the end of the file or a NUL.
    private func unexpected(_ expectation: String) -> JSONSyntaxError {
        if pos >= end { return error("unexpected end of file, \(expectation)") }
        if buf[pos] == 0 { return error("unexpected NUL byte") }
        return error(expectation)
    }

    private func notAnObject(_ kind: JSONValueKind) -> String {
        let what =
            switch kind {
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "a boolean"
            case .null: "null"
            case .object: "an object"
            }
        return "top-level value is \(what), not an object"
    }

    /// Counted only when an error is reported, so the hot path never tracks lines.
    static func location(of offset: Int, in buf: UnsafeBufferPointer<UInt8>) -> (line: Int, column: Int) {
        var line = 1, column = 1
        let limit = min(offset, buf.count)
        var i = 0
        if limit >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { i = 3 }
        while i < limit {
            let byte = buf[i]
            if byte == 0x0A || (byte == 0x0D && (i + 1 == buf.count || buf[i + 1] != 0x0A)) {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 && byte != 0x0D {
                column += 1  // count scalars: skip continuation bytes and the CR of a CRLF
            }
            i += 1
        }
        return (line, column)
    }
}

@inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

private func describe(_ byte: UInt8) -> String {
    let hex = String(byte, radix: 16, uppercase: true)
    return "byte 0x" + (hex.count < 2 ? "0" + hex : hex)
}
