/// The two id shapes docsync makes, packed into bytes for the binary index: a refId that
/// is a lower-case UUID (`5b25b1d0-2702-4a62-90af-3449bddf727e`, 16 bytes) and a
/// changesetId of the canonical shape (`01a205488200-0000-9461eb2315bc`, 14 bytes). Any
/// other text (a user's own refId, an upper-case UUID, a hand-edited changesetId, a
/// replica id that is not 12 hex digits) does not fit and goes to the string table as it
/// is. Why only exact lower-case hex: decoding must give back the very same string.
enum CompactId {
    /// A shape: its length in characters and where its dashes are; every other
    /// character is a lower-case hex digit.
    struct Shape: Sendable {
        let length: Int
        let dashes: [Int]
        var byteCount: Int { (length - dashes.count) / 2 }
    }

    static let uuid = Shape(length: 36, dashes: [8, 13, 18, 23])
    static let changesetId = Shape(length: 30, dashes: [12, 17])

    /// Packs `text` into `shape.byteCount` bytes at `out`; false (nothing meaningful
    /// written) when `text` does not have the shape.
    static func pack(_ text: String, _ shape: Shape, into out: UnsafeMutableRawPointer) -> Bool {
        var text = text
        text.makeContiguousUTF8()  // a no-op for native strings
        return text.utf8.withContiguousStorageIfAvailable { pack($0, shape, into: out) } ?? false
    }

    private static func pack(_ chars: UnsafeBufferPointer<UInt8>, _ shape: Shape, into out: UnsafeMutableRawPointer)
        -> Bool
    {
        guard chars.count == shape.length else { return false }
        var nibbles = 0
        var byte: UInt8 = 0
        for (i, c) in chars.enumerated() {
            if shape.dashes.contains(i) {
                guard c == UInt8(ascii: "-") else { return false }
                continue
            }
            guard let value = nibble(c) else { return false }
            byte = byte << 4 | value
            nibbles += 1
            if nibbles % 2 == 0 { out.storeBytes(of: byte, toByteOffset: nibbles / 2 - 1, as: UInt8.self) }
        }
        return true
    }

    /// The text `pack` made these bytes from. Why a dash cursor rather than asking the
    /// shape for each character: this runs for two ids of every file a scan looks up.
    static func unpack(_ bytes: UnsafeRawPointer, _ shape: Shape) -> String {
        String(unsafeUninitializedCapacity: shape.length) { text in
            var out = 0
            var dash = 0
            for i in 0..<(shape.length - shape.dashes.count) {
                if dash < shape.dashes.count && out == shape.dashes[dash] {
                    text[out] = UInt8(ascii: "-")
                    out += 1
                    dash += 1
                }
                let byte = bytes.load(fromByteOffset: i / 2, as: UInt8.self)
                text[out] = digit(i % 2 == 0 ? byte >> 4 : byte & 0x0f)
                out += 1
            }
            return shape.length
        }
    }

    private static func digit(_ value: UInt8) -> UInt8 { value < 10 ? 48 + value : 87 + value }

    /// 32 raw bytes as 64 lower-case hex digits (a content hash).
    static func hex(_ bytes: UnsafeRawPointer, count: Int) -> String {
        String(unsafeUninitializedCapacity: count * 2) { text in
            for i in 0..<count {
                let byte = bytes.load(fromByteOffset: i, as: UInt8.self)
                text[2 * i] = digit(byte >> 4)
                text[2 * i + 1] = digit(byte & 0x0f)
            }
            return count * 2
        }
    }

    /// Whether `hex` is the lower-case hex digits of the `count` bytes at `raw`, compared
    /// in place (no string made).
    static func hexEquals(_ hex: String, _ raw: UnsafeRawPointer, count: Int) -> Bool {
        IndexFile.withBytes(hex) { digits in
            guard digits.count == 2 * count else { return false }
            for i in 0..<count {
                let byte = raw.load(fromByteOffset: i, as: UInt8.self)
                guard digits[2 * i] == digit(byte >> 4), digits[2 * i + 1] == digit(byte & 0x0f) else { return false }
            }
            return true
        }
    }

    /// Packs 64 lower-case hex digits into 32 bytes at `out`; false if `text` is not one.
    static func packHash(_ text: String, into out: UnsafeMutableRawPointer) -> Bool {
        pack(text, hashShape, into: out)
    }

    static let hashShape = Shape(length: 64, dashes: [])

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        default: return nil
        }
    }
}
