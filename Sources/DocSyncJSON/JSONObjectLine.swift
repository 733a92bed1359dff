/// One compact JSON object (`{"a":1,"b":"x"}`), written field by field straight into
/// bytes. Why not `JSONEncoder`: the journal writes one such line per document a first
/// push records or a clone pulls, and the encoder's per-line set-up and boxing were about
/// a twentieth of those runs at 100,000 documents.
///
/// Fields appear in the order they are given (the caller keeps them sorted where the
/// format wants that); a nil value leaves its field out, as `encodeIfPresent` does.
/// Strings are escaped as `JSONValueWriter` escapes them, which for the journal's fields
/// is byte for byte what `JSONEncoder` with `.withoutEscapingSlashes` writes.
public struct JSONObjectLine {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init() { bytes.reserveCapacity(320) }

    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        writeKey(key)
        JSONValueWriter.appendString(value, to: &bytes)
    }

    public mutating func field<N: BinaryInteger>(_ key: StaticString, _ value: N?) {
        guard let value else { return }
        writeKey(key)
        bytes += String(value).utf8
    }

    public mutating func field(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        writeKey(key)
        bytes += (value ? "true" : "false").utf8
    }

    public mutating func field<N: BinaryInteger>(_ key: StaticString, _ values: [N]?) {
        guard let values else { return }
        writeKey(key)
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += String(value).utf8
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func field(_ key: StaticString, _ values: [String]?) {
        guard let values else { return }
        writeKey(key)
        bytes.append(UInt8(ascii: "["))
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValueWriter.appendString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// The object's text; the line takes no more fields after this.
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `"key":`, after a comma unless it is the first field. Keys are the caller's
    /// constants: written as they are.
    private mutating func writeKey(_ key: StaticString) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes += $0 }
        bytes += [UInt8(ascii: "\""), UInt8(ascii: ":")]
    }
}
