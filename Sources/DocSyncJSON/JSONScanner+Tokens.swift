// The scanner's tokens: whitespace, keys, strings (escapes and UTF-8 checked), numbers
// (checked against the grammar, never converted) and literals.

private let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

extension JSONScanner.Scanner {
    mutating func skipWhitespace() {
        while pos < end {
            switch buf[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// An object key and the ':' after it, leaving `pos` at the member's value.
    mutating func scanKey(afterComma: Bool) throws(JSONSyntaxError) {
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
                openObjectNames(first: name)
            }
        }
        skipWhitespace()
        guard pos < end, buf[pos] == UInt8(ascii: ":") else { throw unexpected("expected ':' after object key") }
        pos += 1
        skipWhitespace()
    }

    /// A string token starting at the opening quote. Returns whether it holds escapes.
    mutating func scanString() throws(JSONSyntaxError) -> Bool {
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
    @inline(__always) mutating func scanNumber() throws(JSONSyntaxError) {
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

    @inline(__always) mutating func scanLiteral(_ word: StaticString) throws(JSONSyntaxError) {
        let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for expected in text {
            guard pos < end, buf[pos] == expected else { throw error("invalid literal, expected '\(word)'") }
            pos += 1
        }
    }

    // MARK: Decoding (only for top-level keys and string values; the text is already valid)

    func decodeString(_ range: Range<Int>, escaped: Bool) -> String {
        escaped
            ? JSONStringDecoding.decode(buf, range)
            : String(decoding: UnsafeBufferPointer(rebasing: buf[range]), as: UTF8.self)
    }
}

/// An ASCII digit (also read by the counters' exact decimals).
@inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

private func describe(_ byte: UInt8) -> String {
    let hex = String(byte, radix: 16, uppercase: true)
    return "byte 0x" + (hex.count < 2 ? "0" + hex : hex)
}
