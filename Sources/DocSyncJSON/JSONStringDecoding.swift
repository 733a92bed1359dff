/// Decoding of JSON string contents, shared by the scanner and the value parser. Both
/// validate the text first, so this only ever sees well-formed escapes.
enum JSONStringDecoding {
    /// The string whose contents (between the quotes, escapes included) are `buf[range]`.
    static func decode(_ buf: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let backslash = UInt8(ascii: "\\")
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let byte = buf[i]
            guard byte == backslash else {
                out.append(byte)
                i += 1
                continue
            }
            let kind = buf[i + 1]
            i += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var unit = hex4(buf, at: i)
                i += 4
                // A high surrogate followed by an escaped low one makes a pair; any other
                // surrogate is lone and decodes as U+FFFD.
                if (0xD800...0xDBFF).contains(unit), i + 6 <= range.upperBound,
                    buf[i] == backslash, buf[i + 1] == UInt8(ascii: "u")
                {
                    let low = hex4(buf, at: i + 2)
                    if (0xDC00...0xDFFF).contains(low) {
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                UTF8.encode(Unicode.Scalar(unit) ?? "\u{FFFD}") { out.append($0) }
            default: out.append(kind)  // '"', '\\', '/'
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of a hex digit, nil for any other byte.
    @inline(__always) static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hex4(_ buf: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32 {
        var value: UInt32 = 0
        for j in i..<i + 4 { value = value << 4 | UInt32(hexValue(buf[j]) ?? 0) }
        return value
    }
}
