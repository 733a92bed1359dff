// Shared helpers for the libFuzzer harnesses in Fuzz/*Fuzz.swift.
//
// Compiled into the same module as the engine sources (see scripts/fuzz.sh), so the
// harnesses can reach internal API. Nothing here is part of the shipped library.

#if canImport(Glibc)
    import Glibc
#endif

/// Fails the run with a message libFuzzer shows next to the crashing input.
func check(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition() {
        let text = "FUZZ PROPERTY VIOLATED (\(file):\(line)): \(message())\n"
        fputs(text, stderr)
        abort()
    }
}

func show(_ bytes: some Collection<UInt8>, limit: Int = 400) -> String {
    let text = String(decoding: Array(bytes.prefix(limit)), as: UTF8.self).debugDescription
    return bytes.count > limit ? text + "…(\(bytes.count) bytes)" : text
}

/// Copies libFuzzer's input into an array (an empty input has a nil pointer).
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Reads bytes off the front of the input to steer a harness.
struct FuzzReader {
    var bytes: [UInt8]
    var pos = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var isAtEnd: Bool { pos >= bytes.count }
    mutating func byte() -> UInt8 {
        guard pos < bytes.count else { return 0 }
        defer { pos += 1 }
        return bytes[pos]
    }
    /// A length-prefixed chunk (length byte, then up to that many bytes).
    mutating func chunk() -> [UInt8] {
        let count = min(Int(byte()), bytes.count - pos)
        defer { pos += count }
        return Array(bytes[pos..<pos + count])
    }
    mutating func rest() -> [UInt8] {
        defer { pos = bytes.count }
        return pos < bytes.count ? Array(bytes[pos...]) : []
    }
}

// MARK: - An independent JSON oracle

/// A deliberately plain recursive-descent RFC 8259 validator, written separately from
/// `JSONScanner` so the two can be compared. Returns nil (no verdict) for input nested
/// deeper than `maxDepth`, to keep the recursion bounded.
enum ReferenceJSON {
    enum Verdict: Equatable { case valid, invalid }

    static func verdict(_ input: [UInt8], maxDepth: Int = 400) -> Verdict? {
        var bytes = input[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        // A JSON text is UTF-8 as a whole (outside strings only ASCII can appear anyway).
        if String(validating: bytes, as: UTF8.self) == nil { return .invalid }
        var parser = Parser(bytes: Array(bytes), maxDepth: maxDepth)
        do {
            parser.ws()
            try parser.value(depth: 0)
            parser.ws()
            return parser.pos == parser.bytes.count ? .valid : .invalid
        } catch Parser.Failure.tooDeep {
            return nil
        } catch {
            return .invalid
        }
    }

    private struct Parser {
        enum Failure: Error { case bad, tooDeep }
        let bytes: [UInt8]
        let maxDepth: Int
        var pos = 0

        var peek: UInt8? { pos < bytes.count ? bytes[pos] : nil }

        mutating func ws() {
            while let b = peek, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { pos += 1 }
        }

        mutating func expect(_ b: UInt8) throws(Failure) {
            guard peek == b else { throw .bad }
            pos += 1
        }

        mutating func value(depth: Int) throws(Failure) {
            guard depth < maxDepth else { throw .tooDeep }
            guard let b = peek else { throw .bad }
            switch b {
            case UInt8(ascii: "{"):
                pos += 1
                ws()
                if peek == UInt8(ascii: "}") {
                    pos += 1
                    return
                }
                while true {
                    ws()
                    try string()
                    ws()
                    try expect(UInt8(ascii: ":"))
                    ws()
                    try value(depth: depth + 1)
                    ws()
                    if peek == UInt8(ascii: ",") {
                        pos += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    return
                }
            case UInt8(ascii: "["):
                pos += 1
                ws()
                if peek == UInt8(ascii: "]") {
                    pos += 1
                    return
                }
                while true {
                    ws()
                    try value(depth: depth + 1)
                    ws()
                    if peek == UInt8(ascii: ",") {
                        pos += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return
                }
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try word("true")
            case UInt8(ascii: "f"): try word("false")
            case UInt8(ascii: "n"): try word("null")
            default: try number()
            }
        }

        mutating func word(_ w: String) throws(Failure) {
            for b in w.utf8 { try expect(b) }
        }

        mutating func digits() -> Int {
            var n = 0
            while let b = peek, b >= 0x30, b <= 0x39 {
                pos += 1
                n += 1
            }
            return n
        }

        mutating func number() throws(Failure) {
            if peek == UInt8(ascii: "-") { pos += 1 }
            if peek == UInt8(ascii: "0") {
                pos += 1
            } else {
                guard let b = peek, b >= 0x31, b <= 0x39 else { throw .bad }
                _ = digits()
            }
            if peek == UInt8(ascii: ".") {
                pos += 1
                guard digits() > 0 else { throw .bad }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                pos += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { pos += 1 }
                guard digits() > 0 else { throw .bad }
            }
        }

        mutating func string() throws(Failure) {
            try expect(UInt8(ascii: "\""))
            while true {
                guard let b = peek else { throw .bad }
                pos += 1
                if b == UInt8(ascii: "\"") { return }
                if b < 0x20 { throw .bad }
                if b == UInt8(ascii: "\\") {
                    guard let e = peek else { throw .bad }
                    pos += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let h = peek, "0123456789abcdefABCDEF".utf8.contains(h) else { throw .bad }
                            pos += 1
                        }
                    default: throw .bad
                    }
                }
            }
        }
    }

    /// Decodes the body of a valid JSON string token (quotes excluded) the slow,
    /// obvious way: UTF-16 code units, then lone surrogates become U+FFFD.
    static func decodeStringToken(_ token: ArraySlice<UInt8>) -> String {
        var body = Array(token.dropFirst().dropLast())
        var units: [UInt16] = []
        var i = 0
        // Non-escaped text is valid UTF-8; convert it to UTF-16 piecewise.
        func flush(_ run: [UInt8]) { units += String(decoding: run, as: UTF8.self).utf16 }
        var run: [UInt8] = []
        while i < body.count {
            if body[i] != UInt8(ascii: "\\") {
                run.append(body[i])
                i += 1
                continue
            }
            flush(run)
            run = []
            let e = body[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): units.append(8)
            case UInt8(ascii: "f"): units.append(12)
            case UInt8(ascii: "n"): units.append(10)
            case UInt8(ascii: "r"): units.append(13)
            case UInt8(ascii: "t"): units.append(9)
            case UInt8(ascii: "u"):
                units.append(UInt16(String(decoding: body[i..<i + 4], as: UTF8.self), radix: 16)!)
                i += 4
            default: units.append(UInt16(e))
            }
        }
        flush(run)
        body = []
        // String(decoding:as: UTF16) turns every unpaired surrogate into U+FFFD.
        return String(decoding: units, as: UTF16.self)
    }
}

/// Byte-exact string equality (Swift's == uses canonical equivalence).
func sameBytes(_ a: String?, _ b: String?) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case let (x?, y?): x.utf8.elementsEqual(y.utf8)
    default: false
    }
}
