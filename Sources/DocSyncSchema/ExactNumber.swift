// JSON numbers compared exactly, from the text `JSONValue.number` keeps.
//
// A number is read as sign · digits · 10^exponent with no leading or trailing zero digit,
// so 1, 1.0 and 10e-1 are the same value, 1e400 is not infinity and a 30-digit integer
// keeps every digit. Comparison, integer-ness and `multipleOf` are exact; only a
// `multipleOf` whose divisor has more than 18 significant digits (or a quotient with more
// than 100,000 digits) falls back to Double arithmetic.

import DocSyncJSON

struct ExactNumber: Comparable {
    var negative: Bool
    /// Decimal digits, most significant first, without leading or trailing zeros; empty for 0.
    var digits: [UInt8]
    var exponent: Int

    /// Exponents are clamped to this magnitude: far beyond any digit count a document holds.
    private static let exponentLimit = 1_000_000_000

    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        var all: [UInt8] = []
        var fractionCount = 0
        var seenDot = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                seenDot = true
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            all.append(byte - UInt8(ascii: "0"))
            if seenDot { fractionCount += 1 }
        }
        guard !all.isEmpty else { return nil }
        var exp = 0
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            var expNegative = false
            if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
                expNegative = sign == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            guard !bytes.isEmpty else { return nil }
            for byte in bytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                exp = min(exp * 10 + Int(byte - UInt8(ascii: "0")), Self.exponentLimit)
            }
            if expNegative { exp = -exp }
        }
        let firstNonZero = all.firstIndex { $0 != 0 } ?? all.count
        all.removeFirst(firstNonZero)
        var trailing = 0
        while let last = all.last, last == 0 {
            all.removeLast()
            trailing += 1
        }
        digits = all
        exponent = all.isEmpty ? 0 : exp - fractionCount + trailing
        if all.isEmpty { negative = false }
    }

    init?(_ value: JSONValue) {
        guard case .number(let text) = value else { return nil }
        self.init(text)
    }

    var isZero: Bool { digits.isEmpty }

    /// True for a value with no fractional part (1.0 and 1e2 are integers).
    var isInteger: Bool { isZero || exponent >= 0 }

    var doubleValue: Double {
        var text = negative ? "-" : ""
        text += digits.isEmpty ? "0" : digits.map { String($0) }.joined()
        text += "e\(exponent)"
        return Double(text) ?? .nan
    }

    static func < (lhs: ExactNumber, rhs: ExactNumber) -> Bool {
        if lhs.negative != rhs.negative { return lhs.negative }
        let magnitudeLess = lessInMagnitude(lhs, rhs)
        if lhs.negative { return lessInMagnitude(rhs, lhs) }
        return magnitudeLess
    }

    private static func lessInMagnitude(_ a: ExactNumber, _ b: ExactNumber) -> Bool {
        if a.isZero || b.isZero { return a.isZero && !b.isZero }
        // The position of the most significant digit decides first.
        let aTop = a.digits.count + a.exponent, bTop = b.digits.count + b.exponent
        if aTop != bTop { return aTop < bTop }
        return a.digits.lexicographicallyPrecedes(b.digits)
    }

    /// True when `self` divided by `divisor` is an integer. `divisor` must be positive.
    func isMultiple(of divisor: ExactNumber) -> Bool {
        if isZero { return true }
        if divisor.isZero { return false }
        // Scale both to integers with the same power of ten: self = A·10^e, divisor = B·10^e.
        let e = min(exponent, divisor.exponent)
        let aZeros = exponent - e, bZeros = divisor.exponent - e
        let bLength = divisor.digits.count + bZeros
        if bLength <= 18, digits.count + aZeros <= 100_000 {
            var b: UInt64 = 0
            for d in divisor.digits { b = b * 10 + UInt64(d) }
            for _ in 0..<bZeros { b *= 10 }
            var remainder: UInt64 = 0
            for d in digits { remainder = (remainder * 10 + UInt64(d)) % b }
            for _ in 0..<aZeros where remainder != 0 { remainder = (remainder * 10) % b }
            return remainder == 0
        }
        let quotient = doubleValue / divisor.doubleValue
        return quotient.isFinite && quotient.rounded() == quotient
    }
}

/// JSON Schema equality: numbers by value (1 == 1.0), objects regardless of member order,
/// strings by code points.
func jsonEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case let (.number(x), .number(y)):
        if x == y { return true }
        guard let p = ExactNumber(x), let q = ExactNumber(y) else { return false }
        return p == q
    case let (.string(x), .string(y)):
        return x.unicodeScalars.elementsEqual(y.unicodeScalars)
    case let (.bool(x), .bool(y)):
        return x == y
    case (.null, .null):
        return true
    case let (.array(x), .array(y)):
        return x.count == y.count && zip(x, y).allSatisfy { jsonEqual($0, $1) }
    case let (.object(x), .object(y)):
        guard x.count == y.count else { return false }
        for (key, value) in x {
            guard let other = y[key], jsonEqual(value, other) else { return false }
        }
        return true
    default:
        return false
    }
}
