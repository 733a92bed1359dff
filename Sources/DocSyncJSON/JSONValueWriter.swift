// Writes `JSONValue`s as JSON text: the stable layout of merged documents, and a compact
// form for reports. Iterative, so values of any depth are written without recursion.

import Collections

public enum JSONValueWriter {
    /// The layout of a merged document:
    ///
    /// ```
    /// {
    ///   "name": "Ada",
    ///   "tags": [
    ///     "x",
    ///     1.0
    ///   ],
    ///   "empty": {},
    ///   "none": []
    /// }
    /// ```
    ///
    /// - Every member of a non-empty object or array sits on its own line, indented by
    ///   `indent` once per level of nesting; arrays of scalars are not inlined. The closing
    ///   bracket lines up with the line that opened it.
    /// - Empty containers are written `{}` and `[]`.
    /// - A member is `"key": value` (one space after the colon); commas end the line.
    /// - Keys are in the value's order; numbers are their exact text.
    /// - Strings are escaped minimally: `"` and `\` get a backslash; control characters
    ///   are `\b \f \n \r \t`, the rest `\u00xx` (lowercase hex); everything else, `/`
    ///   and non-ASCII included, is written as is (UTF-8).
    /// - LF line endings, no trailing spaces, and a final newline.
    ///
    /// Nesting depth times `indent` is repeated on every line, so output grows with the
    /// square of the depth: mind that for values nested thousands of levels deep.
    public static func write(_ value: JSONValue, indent: String = "  ") -> [UInt8] {
        var writer = Writer(pretty: true, indent: Array(indent.utf8))
        writer.write(value)
        writer.out.append(0x0A)
        return writer.out
    }

    /// Compact JSON: no whitespace at all, no final newline (`{"a":[1,2]}`). Used for
    /// conflict reports and `JSONValue.description`.
    public static func writeCompact(_ value: JSONValue) -> [UInt8] {
        var writer = Writer(pretty: false, indent: [])
        writer.write(value)
        return writer.out
    }

    /// `writeCompact` as a String: the text diffs, conflicts, collisions and blame show.
    public static func compactString(_ value: JSONValue) -> String {
        String(decoding: writeCompact(value), as: UTF8.self)
    }

    /// `text` as a JSON string, quotes included, escaped as described at `write(_:indent:)`.
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hex[Int(byte >> 4)], hex[Int(byte & 0xF)]
                ]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The indentation a JSON file uses, so a merged file can keep it: a tab if the first
    /// indented line starts with one, else the smallest run of leading spaces (1 to 8) on
    /// any line, else (a one-line or unindented file) two spaces. Looks at the first
    /// 64 KiB only. Lines always start outside strings, since JSON strings cannot hold
    /// raw line breaks.
    public static func detectIndent(of bytes: [UInt8]) -> String {
        let limit = min(bytes.count, 64 * 1024)
        var smallest = Int.max
        var i = 0
        var atLineStart = false
        while i < limit {
            let byte = bytes[i]
            if byte == 0x0A || byte == 0x0D {
                atLineStart = true
                i += 1
                continue
            }
            if atLineStart {
                atLineStart = false
                if byte == 0x09 {
                    if smallest == .max { return "\t" }
                } else if byte == 0x20 {
                    var run = 0
                    while i < limit, bytes[i] == 0x20 {
                        run += 1
                        i += 1
                    }
                    // A line of spaces only says nothing about the indentation.
                    if i < limit, bytes[i] != 0x0A, bytes[i] != 0x0D, bytes[i] != 0x09 { smallest = min(smallest, run) }
                    continue
                }
            }
            i += 1
        }
        return (1...8).contains(smallest) ? String(repeating: " ", count: smallest) : "  "
    }
}

// MARK: - The writer

private struct Writer {
    enum Container {
        case object(OrderedDictionary<String, JSONValue>)
        case array([JSONValue])
    }

    struct Frame {
        var container: Container
        var next = 0
        var count: Int {
            switch container {
            case .object(let members): members.count
            case .array(let items): items.count
            }
        }
    }

    let pretty: Bool
    let indent: [UInt8]
    var out: [UInt8] = []
    /// The containers being written, innermost last.
    var stack: [Frame] = []

    init(pretty: Bool, indent: [UInt8]) {
        self.pretty = pretty
        self.indent = indent
    }

    mutating func write(_ root: JSONValue) {
        var value = root
        while true {
            begin(value)
            guard let next = nextValue() else { return }
            value = next
        }
    }

    /// Writes a scalar or an empty container whole, or a container's opening bracket
    /// (pushing it, to write its members next).
    private mutating func begin(_ value: JSONValue) {
        switch value {
        case .object(let members) where members.isEmpty:
            out += [UInt8(ascii: "{"), UInt8(ascii: "}")]
        case .array(let items) where items.isEmpty:
            out += [UInt8(ascii: "["), UInt8(ascii: "]")]
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            stack.append(Frame(container: .object(members)))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            stack.append(Frame(container: .array(items)))
        case .string(let text):
            writeString(text)
        case .number(let text):
            out += text.utf8
        case .bool(let flag):
            out += (flag ? "true" : "false").utf8
        case .null:
            out += "null".utf8
        }
    }

    /// The next value to write (after its separator and key), closing finished
    /// containers on the way; nil when the root is done.
    private mutating func nextValue() -> JSONValue? {
        while let top = stack.last {
            if top.next < top.count {
                if top.next > 0 { out.append(UInt8(ascii: ",")) }
                newline(depth: stack.count)
                stack[stack.count - 1].next += 1
                switch top.container {
                case .object(let members):
                    writeString(members.keys[top.next])
                    out.append(UInt8(ascii: ":"))
                    if pretty { out.append(0x20) }
                    return members.values[top.next]
                case .array(let items):
                    return items[top.next]
                }
            }
            let frame = stack.removeLast()
            newline(depth: stack.count)
            if case .object = frame.container {
                out.append(UInt8(ascii: "}"))
            } else {
                out.append(UInt8(ascii: "]"))
            }
        }
        return nil
    }

    private mutating func newline(depth: Int) {
        guard pretty else { return }
        out.append(0x0A)
        if !indent.isEmpty { for _ in 0..<depth { out += indent } }
    }

    private mutating func writeString(_ text: String) {
        JSONValueWriter.appendString(text, to: &out)
    }
}
