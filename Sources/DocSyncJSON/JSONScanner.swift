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

private let quote = UInt8(ascii: "\"")

extension JSONScanner {
    /// One pass over the bytes. `collectMembers` is the `scanDocument` mode: the top level
    /// must be an object and its members are recorded. With `uniqueNames` (always in that
    /// mode) no object may repeat a member name. Its tokens, names and errors are in the
    /// JSONScanner+… files.
    struct Scanner {
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
    }
}

// MARK: The state machine

extension JSONScanner.Scanner {
    mutating func run() throws(JSONSyntaxError) {
        if end >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { pos = 3 }
        let contentStart = pos
        skipWhitespace()
        if pos == end { throw error(pos == contentStart ? "empty file" : "file contains only whitespace") }

        // Each turn scans one value starting at `pos`. Scalars finish at once; an opened
        // container goes on with its first child. When a value is done, `scanAfterValue`
        // closes finished containers until one expects another child.
        while true {
            if try scanValue() {
                guard try scanAfterValue() else { return }
            }
        }
    }

    /// The value at `pos`: true when it is complete (a scalar or an empty container),
    /// false when a container opened and `pos` is at its first child.
    @inline(__always) private mutating func scanValue() throws(JSONSyntaxError) -> Bool {
        guard pos < end else { throw unexpected("expected a value") }
        let start = pos
        let depth = stack.count
        let kind: JSONValueKind
        var stringValue: String?
        switch buf[pos] {
        case UInt8(ascii: "{"):
            guard try openContainer(isObject: true, at: start, depth: depth) else { return false }
            kind = .object
        case UInt8(ascii: "["):
            guard try openContainer(isObject: false, at: start, depth: depth) else { return false }
            kind = .array
        case quote:
            kind = .string
            let escaped = try scanString()
            if depth == 1 && collectMembers { stringValue = decodeString(start + 1..<pos - 1, escaped: escaped) }
        default:
            kind = try scanNumberOrLiteral()
        }
        if depth == 0, collectMembers, kind != .object { throw error(notAnObject(kind), at: start) }
        if depth == 1, kind != .object, kind != .array { beginMember(at: start, kind: kind, string: stringValue) }
        return true
    }

    /// The '{' or '[' at `start`: true when the container is empty (so already complete),
    /// false with `pos` at its first child (for an object, its first member's value).
    @inline(__always) private mutating func openContainer(isObject: Bool, at start: Int, depth: Int)
        throws(JSONSyntaxError) -> Bool
    {
        if isObject {
            if depth == 0 { openBrace = start }
        } else if depth == 0, collectMembers {
            throw error(notAnObject(.array), at: start)
        }
        if depth == 1 { beginMember(at: start, kind: isObject ? .object : .array) }
        stack.append(isObject)
        pos += 1
        skipWhitespace()
        if pos < end, buf[pos] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
            pos += 1
            stack.removeLast()
            return true
        }
        if isObject { try scanKey(afterComma: false) }
        return false
    }

    @inline(__always) private mutating func scanNumberOrLiteral() throws(JSONSyntaxError) -> JSONValueKind {
        switch buf[pos] {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            try scanNumber()
            return .number
        case UInt8(ascii: "t"):
            try scanLiteral("true")
            return .bool
        case UInt8(ascii: "f"):
            try scanLiteral("false")
            return .bool
        case UInt8(ascii: "n"):
            try scanLiteral("null")
            return .null
        case UInt8(ascii: "+"), UInt8(ascii: "."):
            throw error("number must start with a digit or '-'")
        default:
            throw unexpected("expected a value")
        }
    }

    /// After a value that ended at `pos` (`stack` holds the containers around it): closes
    /// the containers that end here, then either steps past the ',' (and an object's next
    /// key) to the next value (true) or checks that only whitespace follows the top-level
    /// value (false).
    @inline(__always) private mutating func scanAfterValue() throws(JSONSyntaxError) -> Bool {
        while true {
            if stack.count == 1, collectMembers { endMember() }
            guard let inObject = stack.last else {
                try finishDocument()
                return false
            }
            skipWhitespace()
            guard pos < end else { throw unexpected(expectedSeparator(inObject: inObject)) }
            switch (buf[pos], inObject) {
            case (UInt8(ascii: ","), true):
                pos += 1
                skipWhitespace()
                try scanKey(afterComma: true)
                return true
            case (UInt8(ascii: ","), false):
                pos += 1
                skipWhitespace()
                if pos < end, buf[pos] == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
                return true
            case (UInt8(ascii: "}"), true), (UInt8(ascii: "]"), false):
                pos += 1
                stack.removeLast()
                if inObject, uniqueNames { closeObjectNames() }
            default:
                throw unexpected(expectedSeparator(inObject: inObject))
            }
        }
    }

    private func expectedSeparator(inObject: Bool) -> String {
        inObject ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element"
    }

    /// The top-level value is done: only whitespace may follow.
    private mutating func finishDocument() throws(JSONSyntaxError) {
        if collectMembers { closeBrace = pos - 1 }
        skipWhitespace()
        if pos < end {
            throw error(buf[pos] == 0 ? "unexpected NUL byte" : "trailing characters after the top-level value")
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
}
