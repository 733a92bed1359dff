// The scanner's errors: where (line and column, counted only when an error is reported)
// and why.

public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Byte offset of the offending byte (the file length for an unexpected end of file).
    public var offset: Int
    /// 1-based line.
    public var line: Int
    /// 1-based column, in Unicode scalars (not bytes) from the start of the line.
    public var column: Int
    /// Short lowercase explanation, e.g. "unterminated string".
    public var reason: String

    /// "line L, column C: reason"
    public var description: String { "line \(line), column \(column): \(reason)" }

    public init(offset: Int, line: Int, column: Int, reason: String) {
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }
}

extension JSONScanner.Scanner {
    func error(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
        let offset = offset ?? pos
        let (line, column) = Self.location(of: offset, in: buf)
        return JSONSyntaxError(offset: offset, line: line, column: column, reason: reason)
    }

    /// An error at `pos` that says so when the real problem is the end of the file or a NUL.
    func unexpected(_ expectation: String) -> JSONSyntaxError {
        if pos >= end { return error("unexpected end of file, \(expectation)") }
        if buf[pos] == 0 { return error("unexpected NUL byte") }
        return error(expectation)
    }

    func notAnObject(_ kind: JSONValueKind) -> String {
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
