/// Line-oriented files whose every line carries its own checksum:
/// `<payload>\t#<16 hex of sha256(payload)>\n`. A torn or corrupted line is detected
/// without trusting anything after it, which is what makes the journal and the remote
/// change feed safe to append to without a rewrite.
public enum ChecksummedLines {
    public static func encode(_ payload: String) -> String {
        precondition(!payload.utf8.contains(0x0A), "payload must be a single line")  // utf8: "\r\n" is one Character
        return payload + "\t#" + checksum(payload) + "\n"
    }

    static func checksum(_ payload: String) -> String {
        String(ContentHash.of(payload).prefix(16))
    }

    /// Encodes the lines `body` adds, one after another, and hands them to `write` a
    /// megabyte at a time, so a batch of 100,000 lines (a journal batch, a first push's
    /// commit) is never held as text whole.
    static func write(
        to write: ([UInt8]) throws -> Void, _ body: (_ add: (_ payload: String) throws -> Void) throws -> Void
    ) throws {
        // `add` captures `write`, and goes to `body`: neither outlives this call.
        try withoutActuallyEscaping(write) { write in
            var chunk: [UInt8] = []
            chunk.reserveCapacity(SealedFile.chunkBytes)
            func add(_ payload: String) throws {
                chunk += encode(payload).utf8
                if chunk.count >= SealedFile.chunkBytes {
                    try write(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            try body(add)
            if !chunk.isEmpty { try write(chunk) }
        }
    }

    public struct Line: Sendable {
        public var payload: String
        /// Byte offset just past this line's newline.
        public var endOffset: Int
    }

    public struct ParseResult: Sendable {
        public var lines: [Line]
        /// Offset where the last good line ends; bytes after it are damaged or torn.
        public var validLength: Int
        /// Set when the data ends in a line without its newline (a torn append).
        public var tornTail: Bool
        /// Set when a complete line failed its checksum (corruption, not a torn append).
        public var corruptLine: Int?
    }

    /// Parses `bytes` (starting at `baseOffset` in the file) up to the first damaged line.
    public static func parse(_ bytes: ArraySlice<UInt8>, baseOffset: Int = 0) -> ParseResult {
        var lines: [Line] = []
        var start = bytes.startIndex
        var lineNumber = 0
        while start < bytes.endIndex {
            guard let newline = bytes[start...].firstIndex(of: 10) else {
                return ParseResult(
                    lines: lines, validLength: baseOffset + (start - bytes.startIndex), tornTail: true, corruptLine: nil
                )
            }
            lineNumber += 1
            let line = bytes[start..<newline]
            let tab = line.lastIndex(of: 9)
            // The checksum is of the bytes, and they must be UTF-8. Why: decoding first
            // turned invalid bytes into U+FFFD, so a crafted line whose checksum was that
            // of the repaired text was accepted as a payload other than its bytes (found by
            // the journal fuzzer).
            let payload = tab.flatMap { String(validating: line[line.startIndex..<$0], as: UTF8.self) }
            guard let tab, let payload, line.index(after: tab) < line.endIndex,
                line[line.index(after: tab)] == UInt8(ascii: "#"),
                checksum(payload) == String(decoding: line[(tab + 2)...], as: UTF8.self)
            else {
                let isLast = newline + 1 == bytes.endIndex
                return ParseResult(
                    lines: lines, validLength: baseOffset + (start - bytes.startIndex),
                    tornTail: isLast, corruptLine: isLast ? nil : lineNumber)
            }
            lines.append(Line(payload: payload, endOffset: baseOffset + (newline + 1 - bytes.startIndex)))
            start = newline + 1
        }
        return ParseResult(lines: lines, validLength: baseOffset + bytes.count, tornTail: false, corruptLine: nil)
    }
}
