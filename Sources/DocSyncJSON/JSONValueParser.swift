// Builds a `JSONValue` from JSON text.
//
// The text is first checked by `JSONScanner.validate`, so syntax errors carry the same
// messages, lines and columns as everywhere else; the builder then walks text it knows is
// valid. Both passes are iterative (open containers live in an explicit stack).
//
// Choices worth knowing:
// - A leading UTF-8 byte order mark is skipped. Any top-level value is accepted.
// - Numbers keep their exact text (see `JSONValue.number`).
// - Duplicate keys: the last value wins, at the first occurrence's position; with
//   `uniqueMemberNames` (I-JSON) they are an error, in `JSONScanner.scanDocument`'s words.
// - A lone surrogate escape ("\uD800") decodes as U+FFFD, as in `JSONScanner`.
// - Depth: by default input nested deeper than `defaultMaxDepth` containers is refused
//   with a `JSONSyntaxError` ("nesting deeper than N levels") at the bracket that goes too
//   deep. Parsing itself has no depth limit, but Swift frees nested values recursively,
//   and a tree tens of thousands of levels deep would crash the process when dropped.
//   Pass `maxDepth: nil` to build such trees anyway, and free them with
//   `JSONValue.dismantle()`.

import Collections

public enum JSONValueParser {
    /// Containers nested deeper than this are refused by default. Dropping a tree this
    /// deep needs well under 512 KB of stack.
    public static let defaultMaxDepth = 1_000

    /// Parses one JSON value (RFC 8259, any top-level kind, optional leading BOM).
    /// - Parameter maxDepth: most containers nested inside each other (the top-level
    ///   container is depth 1); nil for no limit (see the file header about freeing).
    /// - Parameter uniqueMemberNames: refuse an object that repeats a member name.
    public static func parse(_ bytes: [UInt8], maxDepth: Int? = defaultMaxDepth, uniqueMemberNames: Bool = false)
        throws(JSONSyntaxError) -> JSONValue
    {
        try JSONScanner.validate(bytes, uniqueMemberNames: uniqueMemberNames)
        let built: Result<JSONValue, JSONSyntaxError> = bytes.withUnsafeBufferPointer { buffer in
            var builder = Builder(buffer, maxDepth: maxDepth ?? .max)
            if let value = builder.run() { return .success(value) }
            let offset = builder.pos
            let (line, column) = JSONScanner.location(of: offset, in: bytes)
            return .failure(
                JSONSyntaxError(
                    offset: offset, line: line, column: column,
                    reason: "nesting deeper than \(maxDepth ?? .max) levels"))
        }
        return try built.get()
    }

    /// Parses a document: like `parse`, but the text must be what `JSONScanner.scanDocument`
    /// accepts (a top-level object, no repeated member name), with its errors: a file that
    /// starts with '[' is "top-level value is an array", however it goes on.
    public static func parseDocument(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        _ = try JSONScanner.scanDocument(bytes)
        return try parse(bytes)
    }
}

// MARK: - The builder

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

/// One pass over text that `JSONScanner.validate` accepted.
private struct Builder {
    /// An open container: its members so far, and for an object the key whose value is next.
    struct Frame {
        var isObject: Bool
        var array: [JSONValue] = []
        var object = OrderedDictionary<String, JSONValue>()
        var key = ""
    }

    let buf: UnsafeBufferPointer<UInt8>
    let end: Int
    let maxDepth: Int
    var pos = 0
    var stack: [Frame] = []

    init(_ buf: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buf = buf
        self.end = buf.count
        self.maxDepth = maxDepth
    }

    /// The value, or nil when nesting exceeds `maxDepth` (with `pos` at the bracket).
    mutating func run() -> JSONValue? {
        if end >= 3, buf[0] == 0xEF, buf[1] == 0xBB, buf[2] == 0xBF { pos = 3 }
        skipWhitespace()

        // Each turn reads one value; an opened container goes on with its first child.
        while true {
            let value: JSONValue
            switch buf[pos] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < maxDepth else {
                    discardStack()
                    return nil
                }
                guard let empty = openContainer() else { continue }
                value = empty
            default:
                value = readScalar()
            }
            if let document = add(value) { return document }
        }
    }

    /// The '{' or '[' at `pos`: an empty container's value, or nil with `pos` at the
    /// first child of the container it opened.
    private mutating func openContainer() -> JSONValue? {
        let isObject = buf[pos] == UInt8(ascii: "{")
        pos += 1
        skipWhitespace()
        if buf[pos] == UInt8(ascii: isObject ? "}" : "]") {
            pos += 1
            return isObject ? .object([:]) : .array([])
        }
        stack.append(Frame(isObject: isObject))
        if isObject { readKey() }
        return nil
    }

    /// The string, literal or number at `pos`.
    private mutating func readScalar() -> JSONValue {
        switch buf[pos] {
        case quote:
            return .string(readString())
        case UInt8(ascii: "t"):
            pos += 4
            return .bool(true)
        case UInt8(ascii: "f"):
            pos += 5
            return .bool(false)
        case UInt8(ascii: "n"):
            pos += 4
            return .null
        default:  // a number
            let start = pos
            while pos < end, isNumberByte(buf[pos]) { pos += 1 }
            return .number(String(decoding: UnsafeBufferPointer(rebasing: buf[start..<pos]), as: UTF8.self))
        }
    }

    /// Adds a complete value to the innermost open container, closing those that end
    /// here: the whole document once the last one closes, nil when another value follows
    /// (with `pos` at it).
    private mutating func add(_ value: JSONValue) -> JSONValue? {
        var value = value
        while !stack.isEmpty {
            let top = stack.count - 1
            if stack[top].isObject {
                if var replaced = stack[top].object.updateValue(value, forKey: stack[top].key) {
                    replaced.dismantle()  // duplicate key; the old value may be deep
                }
            } else {
                stack[top].array.append(value)
            }
            skipWhitespace()
            let byte = buf[pos]
            pos += 1
            if byte == UInt8(ascii: ",") {
                skipWhitespace()
                if stack[top].isObject { readKey() }
                return nil
            }
            let frame = stack.removeLast()
            value = frame.isObject ? .object(frame.object) : .array(frame.array)
        }
        return value
    }

    /// Frees the open containers without recursion (their members may be deep).
    private mutating func discardStack() {
        while var frame = stack.popLast() {
            var value: JSONValue = frame.isObject ? .object(frame.object) : .array(frame.array)
            frame.object = [:]
            frame.array = []
            value.dismantle()
        }
    }

    private mutating func skipWhitespace() {
        while pos < end {
            switch buf[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// A key, the ':' and whitespace, leaving `pos` at the member's value.
    private mutating func readKey() {
        stack[stack.count - 1].key = readString()
        skipWhitespace()
        pos += 1  // ':'
        skipWhitespace()
    }

    /// The string token at `pos` (its opening quote), decoded.
    private mutating func readString() -> String {
        pos += 1
        let start = pos
        var escaped = false
        while buf[pos] != quote {
            if buf[pos] == backslash {
                escaped = true
                pos += 2  // the hex digits of \uXXXX are never quotes or backslashes
            } else {
                pos += 1
            }
        }
        let range = start..<pos
        pos += 1
        return escaped
            ? JSONStringDecoding.decode(buf, range)
            : String(decoding: UnsafeBufferPointer(rebasing: buf[range]), as: UTF8.self)
    }
}

@inline(__always) private func isNumberByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"),
        UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
        true
    default: false
    }
}
