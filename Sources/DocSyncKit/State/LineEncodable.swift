import DocSyncJSON
import Foundation

/// A value written as one line of compact JSON, as `JSONEncoder` writes it with sorted
/// keys and unescaped slashes, nil fields absent: the journal's lines, a folder remote's
/// feed lines. Written by hand (`JSONObjectLine`) where it can be, since a first push or
/// a long journal writes one line per document; `JournalLineTests` holds the two to the
/// same bytes.
protocol LineEncodable: Encodable {
    /// Writes every field, in sorted key order, by hand; false when the value holds one
    /// the hand encoder cannot write (a nested object), so the line goes through the
    /// encoder instead.
    func writeFields(to line: inout JSONObjectLine) -> Bool
}

extension LineEncodable {
    /// The value's JSON line (without its newline).
    func encodedLine() throws -> String {
        var line = JSONObjectLine()
        guard writeFields(to: &line) else { return try LineEncoding.json(self) }
        return String(decoding: line.finish(), as: UTF8.self)
    }
}

enum LineEncoding {
    /// Any value's JSON text as a line's: keys sorted, compact, slashes unescaped.
    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
