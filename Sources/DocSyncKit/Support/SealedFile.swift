/// Files rewritten whole (state, index): tab-separated lines followed by one trailer
/// line `#sha256 <hex of everything before it>`. A torn, truncated or bit-flipped file
/// fails the check as a whole; no per-line work is needed to read a sound one.
enum SealedFile {
    static func seal(_ body: String) -> [UInt8] {
        var bytes = Array(body.utf8)
        bytes += Array("#sha256 \(ContentHash.of(bytes))\n".utf8)
        return bytes
    }

    /// The lines of a sound file, each split into its tab-separated fields; nil if the
    /// trailer is missing or does not match.
    static func open(_ bytes: [UInt8]) -> [[Substring]]? {
        guard bytes.last == 10 else { return nil }
        let withoutFinal = bytes.dropLast()
        let trailerStart = (withoutFinal.lastIndex(of: 10).map { $0 + 1 }) ?? 0
        let trailer = String(decoding: bytes[trailerStart..<(bytes.count - 1)], as: UTF8.self)
        guard trailer.hasPrefix("#sha256 "), String(trailer.dropFirst(8)) == ContentHash.of(Array(bytes[0..<trailerStart])) else { return nil }
        // Split on bytes, not Characters: this runs over 100,000 lines on every sync.
        var lines: [[Substring]] = []
        bytes.withUnsafeBufferPointer { buffer in
            var fields: [Substring] = []
            var fieldStart = 0
            for i in 0..<trailerStart {
                let byte = buffer[i]
                guard byte == 9 || byte == 10 else { continue }
                fields.append(Substring(String(decoding: UnsafeBufferPointer(rebasing: buffer[fieldStart..<i]), as: UTF8.self)))
                fieldStart = i + 1
                if byte == 10 {
                    lines.append(fields)
                    fields.removeAll(keepingCapacity: true)
                }
            }
        }
        return lines
    }
}
