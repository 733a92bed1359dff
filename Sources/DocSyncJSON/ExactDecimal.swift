// Exact decimal arithmetic for counters (local + remote − base, never rounded).

/// ±digits × 10^exponent, parsed from JSON number text; no rounding ever.
struct ExactDecimal {
    /// Base-10 digits, least significant first, without high zeros (empty for zero).
    var digits: [UInt8]
    var negative: Bool
    var exponent: Int
    /// Whether the text used e/E notation.
    var scientific: Bool

    /// Exponents beyond this (in the text) are refused, as are sums whose terms are more
    /// than `maxSpan` decimal places apart: such counters fall back to a conflict instead
    /// of building huge digit strings.
    static let maxExponent = 1_000_000
    static let maxSpan = 10_000

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        var i = 0
        negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        var mantissa: [UInt8] = []
        let intStart = i
        while i < bytes.count, isDigit(bytes[i]) {
            mantissa.append(bytes[i] - 48)
            i += 1
        }
        guard i > intStart else { return nil }
        var fraction = 0
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            while i < bytes.count, isDigit(bytes[i]) {
                mantissa.append(bytes[i] - 48)
                i += 1
            }
            guard i > start else { return nil }
            fraction = i - start
        }
        var power = 0
        scientific = false
        if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
            scientific = true
            i += 1
            var minus = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                minus = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            let start = i
            while i < bytes.count, isDigit(bytes[i]) {
                power = power * 10 + Int(bytes[i] - 48)
                guard power <= ExactDecimal.maxExponent else { return nil }
                i += 1
            }
            guard i > start else { return nil }
            if minus { power = -power }
        }
        guard i == bytes.count else { return nil }
        digits = mantissa.reversed()
        while digits.last == 0 { digits.removeLast() }
        exponent = power - fraction
    }

    /// The exact sum of the terms (each negated if asked) as JSON number text: plain
    /// decimal notation with as many decimal places as the most precise term (1.50 + 1 →
    /// "2.50"); if a term was written with an exponent and plain notation would need more
    /// than 20 zeros of padding, scientific notation ("1.5e400"). Nil when the terms are
    /// too far apart (`maxSpan`).
    static func sum(_ terms: [(ExactDecimal, negate: Bool)]) -> String? {
        let low = terms.map(\.0.exponent).min() ?? 0
        var negative = false
        var total: [UInt8] = []
        for (term, negate) in terms {
            let shift = term.exponent - low
            guard shift <= maxSpan else { return nil }
            let shifted = term.digits.isEmpty ? [] : [UInt8](repeating: 0, count: shift) + term.digits
            (negative, total) = add(negative, total, term.negative != negate, shifted)
        }
        let scientific = terms.contains { $0.0.scientific }
        return format(negative: negative, digits: total, exponent: low, scientific: scientific)
    }

    private static func add(_ aNeg: Bool, _ a: [UInt8], _ bNeg: Bool, _ b: [UInt8]) -> (Bool, [UInt8]) {
        if aNeg == bNeg { return (aNeg, addMagnitudes(a, b)) }
        switch compareMagnitudes(a, b) {
        case 0: return (false, [])
        case 1: return (aNeg, subtractMagnitudes(a, b))
        default: return (bNeg, subtractMagnitudes(b, a))
        }
    }

    private static func addMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(max(a.count, b.count) + 1)
        var carry: UInt8 = 0
        for i in 0..<max(a.count, b.count) {
            let s = (i < a.count ? a[i] : 0) + (i < b.count ? b[i] : 0) + carry
            out.append(s % 10)
            carry = s / 10
        }
        if carry > 0 { out.append(carry) }
        return out
    }

    /// a − b for a ≥ b.
    private static func subtractMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(a.count)
        var borrow: Int = 0
        for i in 0..<a.count {
            var d = Int(a[i]) - (i < b.count ? Int(b[i]) : 0) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 10 }
            out.append(UInt8(d))
        }
        while out.last == 0 { out.removeLast() }
        return out
    }

    /// -1, 0 or 1; both without high zeros.
    private static func compareMagnitudes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for i in stride(from: a.count - 1, through: 0, by: -1) where a[i] != b[i] {
            return a[i] < b[i] ? -1 : 1
        }
        return 0
    }

    private static func format(negative: Bool, digits: [UInt8], exponent: Int, scientific: Bool) -> String {
        var digits = digits
        var exponent = exponent
        let padding = exponent > 0 ? exponent : max(0, -exponent - digits.count)
        if scientific, !digits.isEmpty, padding > 20 {
            // Scientific: strip low zeros, one digit before the point.
            var low = 0
            while digits[low] == 0 { low += 1 }
            digits.removeFirst(low)
            exponent += low
            let text = digits.reversed().map { Character(Unicode.Scalar($0 + 48)) }
            var out = negative ? "-" : ""
            out.append(text[0])
            if text.count > 1 { out += "." + String(text[1...]) }
            return out + "e" + String(exponent + text.count - 1)
        }
        if digits.isEmpty {  // zero
            return exponent < 0 && !scientific ? "0." + String(repeating: "0", count: -exponent) : "0"
        }
        var text = String(digits.reversed().map { Character(Unicode.Scalar($0 + 48)) })
        if exponent >= 0 {
            text += String(repeating: "0", count: exponent)
        } else {
            let scale = -exponent
            if text.count <= scale { text = String(repeating: "0", count: scale - text.count + 1) + text }
            text.insert(".", at: text.index(text.endIndex, offsetBy: -scale))
        }
        return (negative ? "-" : "") + text
    }
}
