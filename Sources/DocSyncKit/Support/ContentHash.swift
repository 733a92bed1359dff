import Crypto

/// SHA-256 of document bytes, as lowercase hex. Used as the content identity of a
/// version everywhere: base, journal, object store, remote feed.
public enum ContentHash {
    public static func of(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Of part of a buffer, without copying it out.
    static func of(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.withUnsafeBytes { hex(SHA256.hash(data: $0)) }
    }

    public static func of(_ text: String) -> String {
        of(Array(text.utf8))
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 32 bytes a 64-digit lowercase hex hash stands for (nil if it is not one).
    static func raw(_ hash: String) -> [UInt8]? {
        let digits = Array(hash.utf8)
        guard digits.count == 64 else { return nil }
        var out = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            guard let high = nibble(digits[2 * i]), let low = nibble(digits[2 * i + 1]) else { return nil }
            out[i] = high << 4 | low
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        default: return nil
        }
    }

    public static func isValid(_ hash: String) -> Bool {
        hash.utf8.count == 64 && hash.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
