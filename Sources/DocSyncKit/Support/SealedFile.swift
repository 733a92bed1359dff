import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// Files rewritten whole (state, index): tab-separated lines followed by one trailer
/// line `#sha256 <hex of everything before it>`. A torn, truncated or bit-flipped file
/// fails the check as a whole; no per-line work is needed to read a sound one.
enum SealedFile {
    static func seal(_ body: String) -> [UInt8] {
        Array((body + "#sha256 \(ContentHash.of(body))\n").utf8)
    }

    /// Writes a sealed file atomically as `build` makes its lines: each megabyte goes to
    /// the file and the SHA-256 as it fills, and the trailer last. Why: at 100,000
    /// documents the index and the state are 21 and 16 MB, and built whole they were
    /// held at the end of every push and clone, on top of its peak.
    /// Returns the checksum the trailer holds.
    @discardableResult
    static func write(to path: String, durable: Bool, _ build: (inout Builder) throws -> Void) throws -> String {
        var digest = ""
        try FileSystem.writeAtomically(path, durable: durable) { fd in
            var out = Builder(fd: fd, path: path)
            try build(&out)
            digest = try out.finish()
        }
        return digest
    }

    /// Writes a sealed file atomically into `folder`, named by `naming` from its checksum
    /// (a file named by what it holds). Returns the checksum and the file's size.
    static func write(
        inFolder folder: String, durable: Bool, naming: (String) -> String, _ build: (inout Builder) throws -> Void
    ) throws -> (digest: String, size: Int) {
        var digest = ""
        var size = 0
        try FileSystem.writeAtomically(inFolder: folder, temporaryName: naming(""), durable: durable) { fd in
            var out = Builder(fd: fd, path: FileSystem.join(folder, naming("")))
            try build(&out)
            digest = try out.finish()
            var st = Glibc.stat()
            if fstat(fd, &st) != 0 { throw FileSystemError(path: folder, operation: "fstat", code: errno) }
            size = Int(st.st_size)
            return naming(digest)
        }
        return (digest, size)
    }

    /// Bytes a builder holds before writing them out.
    static let chunkBytes = 1 << 20

    /// Builds a sealed file's body line by line, straight into bytes. Why: the index
    /// and the state of 100,000 documents are rewritten after every change, and making
    /// a String per field and per line was most of a small push's time.
    struct Builder {
        private var bytes: [UInt8] = []
        private let fd: Int32
        private let path: String
        private var hasher = SHA256()
        /// The first failed write: later lines are dropped and `finish` throws it.
        private var failure: FileSystemError?

        fileprivate init(fd: Int32, path: String) {
            self.fd = fd
            self.path = path
            bytes.reserveCapacity(SealedFile.chunkBytes + 4096)
        }

        /// A field as it is (no tab or newline in it).
        mutating func raw(_ text: String) { bytes += text.utf8 }

        /// A field with tabs, newlines and backslashes escaped (`FieldEscaping`).
        mutating func text(_ text: String) { bytes += FieldEscaping.escape(text).utf8 }

        mutating func number<N: BinaryInteger>(_ value: N) {
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            var magnitude = value.magnitude
            var digits:
                (
                    UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                    UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
                ) =
                    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var count = 0
            withUnsafeMutableBytes(of: &digits) { buffer in
                repeat {
                    buffer[19 - count] = UInt8(truncatingIfNeeded: magnitude % 10) + 48
                    magnitude /= 10
                    count += 1
                } while magnitude > 0
                bytes += buffer[(20 - count)...]
            }
        }

        mutating func tab() { bytes.append(9) }

        /// Whole lines as they are (read from a sealed file of the same kind).
        mutating func verbatim(_ lines: ArraySlice<UInt8>) {
            var rest = lines
            while !rest.isEmpty {
                let part = rest.prefix(SealedFile.chunkBytes)
                bytes += part
                rest = rest.dropFirst(part.count)
                if bytes.count >= SealedFile.chunkBytes { writeOut() }
            }
        }

        mutating func newline() {
            bytes.append(10)
            if bytes.count >= SealedFile.chunkBytes { writeOut() }
        }

        private mutating func writeOut() {
            if failure == nil {
                hasher.update(data: bytes)
                do { try FileSystem.writeAll(fd, bytes, path: path) } catch { failure = error }
            }
            bytes.removeAll(keepingCapacity: true)
        }

        /// Writes what is left and the trailer.
        fileprivate mutating func finish() throws(FileSystemError) -> String {
            writeOut()
            if let failure { throw failure }
            let digest = ContentHash.hex(hasher.finalize())
            try FileSystem.writeAll(fd, Array("#sha256 \(digest)\n".utf8), path: path)
            return digest
        }
    }

    /// Where the body ends (the trailer's first byte) if `bytes` is a sound sealed file.
    static func bodyEnd(_ bytes: [UInt8]) -> Int? { bodyAndDigest(bytes)?.end }

    /// Where the body ends and the checksum the trailer holds, if `bytes` is a sound
    /// sealed file.
    static func bodyAndDigest(_ bytes: [UInt8]) -> (end: Int, digest: String)? {
        guard bytes.last == 10 else { return nil }
        let trailerStart = (bytes.dropLast().lastIndex(of: 10).map { $0 + 1 }) ?? 0
        let trailer = String(decoding: bytes[trailerStart..<(bytes.count - 1)], as: UTF8.self)
        let digest = String(trailer.dropFirst(8))
        guard trailer.hasPrefix("#sha256 "), digest == ContentHash.of(bytes[0..<trailerStart]) else { return nil }
        return (trailerStart, digest)
    }

    /// Calls `body` with each line of a sound sealed file, its fields as byte ranges of
    /// the buffer: no string is made for a field nobody asks for. Returns false (calling
    /// nothing) if the file is not sound. Why: the index and the state are read on every
    /// run, one line per document, and making a String of every field was most of it.
    static func forEachLine(_ bytes: [UInt8], _ body: (Fields) throws -> Void) rethrows -> Bool {
        guard let end = bodyEnd(bytes) else { return false }
        try forEachLine(bytes, in: 0..<end) { fields, _ in try body(fields) }
        return true
    }

    /// Calls `body` with each line of `range` (whole lines of a sound sealed file): its
    /// fields, and where the line lies (its newline included).
    static func forEachLine(
        _ bytes: [UInt8], in range: Range<Int>, _ body: (Fields, Range<Int>) throws -> Void
    ) rethrows {
        try bytes.withUnsafeBufferPointer { buffer in
            var fields = Fields(buffer: buffer, ranges: [])
            fields.ranges.reserveCapacity(16)
            var lineStart = range.lowerBound
            var fieldStart = range.lowerBound
            for i in range {
                let byte = buffer[i]
                guard byte == 9 || byte == 10 else { continue }
                fields.ranges.append(fieldStart..<i)
                fieldStart = i + 1
                if byte == 10 {
                    try body(fields, lineStart..<(i + 1))
                    fields.ranges.removeAll(keepingCapacity: true)
                    lineStart = i + 1
                }
            }
        }
    }

    /// One line's fields, read in place.
    struct Fields {
        let buffer: UnsafeBufferPointer<UInt8>
        var ranges: [Range<Int>]

        var count: Int { ranges.count }

        /// Field `i` as text, with `FieldEscaping` undone.
        func text(_ i: Int) -> String { FieldEscaping.unescape(raw(i)) }

        /// Field `i` as text, taken as it is (hashes and other fields never escaped).
        func raw(_ i: Int) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: buffer[ranges[i]]), as: UTF8.self)
        }

        func uint64(_ i: Int) -> UInt64? { digits(ranges[i]) }

        func int64(_ i: Int) -> Int64? {
            let range = ranges[i]
            let negative = !range.isEmpty && buffer[range.lowerBound] == UInt8(ascii: "-")
            guard let magnitude = digits(negative ? (range.lowerBound + 1)..<range.upperBound : range),
                magnitude <= UInt64(Int64.max)
            else { return nil }
            return negative ? -Int64(magnitude) : Int64(magnitude)
        }

        /// Decimal digits only, no sign; nil when empty, not digits, or too large.
        private func digits(_ range: Range<Int>) -> UInt64? {
            guard !range.isEmpty, range.count <= 20 else { return nil }
            var value: UInt64 = 0
            for index in range {
                let digit = buffer[index] &- 48
                guard digit < 10 else { return nil }
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(digit))
                guard !o1, !o2 else { return nil }
                value = sum
            }
            return value
        }

        /// The byte order of two ranges of the buffer (as `UTF8Order.compare`).
        func compare(_ a: Range<Int>, _ b: Range<Int>) -> Int32 {
            let bytes = UnsafeRawBufferPointer(buffer)
            return UTF8Order.compare(
                UnsafeRawBufferPointer(rebasing: bytes[a]), UnsafeRawBufferPointer(rebasing: bytes[b]))
        }

        func equals(_ i: Int, _ text: StaticString) -> Bool {
            let range = ranges[i]
            guard range.count == text.utf8CodeUnitCount else { return false }
            return memcmp(buffer.baseAddress! + range.lowerBound, text.utf8Start, range.count) == 0
        }
    }
}
