import Crypto

/// Writes a binary index file (`IndexFile`'s layout) as the caller hands it entries in
/// walk order: records go to the file and the SHA-256 each megabyte, the string table is
/// held until the end (a fifth of the file). Why streamed: a clone's index is written at
/// the end of the run, on top of its peak memory.
struct IndexFileWriter {
    typealias Layout = IndexFile.Layout

    private let fd: Int32
    private let path: String
    private let expected: Int
    private var written = 0
    private var chunk: [UInt8] = []
    private var strings: [UInt8] = []
    private var hasher = SHA256()
    /// The first failed write: later ones are skipped and `finish` throws it.
    private var failure: FileSystemError?

    /// Writes the header for `count` entries: exactly that many must follow. `stamp`: the
    /// state the synced flags are set against (0: none is).
    init(fd: Int32, path: String, count: Int, stamp: UInt64) {
        self.fd = fd
        self.path = path
        expected = count
        chunk.reserveCapacity(SealedFile.chunkBytes + Layout.recordSize)
        chunk += Layout.magic
        appendNumber(UInt32(count))
        appendNumber(UInt32(Layout.recordSize))
        appendNumber(stamp)
    }

    /// A record copied from a file read in place: its fixed fields as they are, its texts
    /// moved to this file's string table.
    mutating func append(recordOf file: IndexFile, _ i: Int, synced: Bool) {
        let source = file.record(i)
        let start = chunk.count
        chunk += UnsafeRawBufferPointer(start: source, count: Layout.recordSize)
        var flags = source.loadUnaligned(fromByteOffset: Layout.flagsField, as: UInt32.self).littleEndian
        flags = synced ? flags | Layout.syncedFlag : flags & ~Layout.syncedFlag
        chunk.withUnsafeMutableBytes {
            $0.storeBytes(of: flags.littleEndian, toByteOffset: start + Layout.flagsField, as: UInt32.self)
        }
        patchReference(at: start + Layout.pathField, to: file.text(source + Layout.pathField))
        if flags & Layout.packedRefIdFlag == 0 {
            patchReference(at: start + Layout.refIdField, to: file.text(source + Layout.refIdField))
        }
        if flags & Layout.packedChangesetIdFlag == 0 {
            patchReference(at: start + Layout.changesetIdField, to: file.text(source + Layout.changesetIdField))
        }
        recordDone()
    }

    /// A record made from an entry. The hash must be 64 lower-case hex digits
    /// (`StatCache.isStorable`).
    mutating func append(path: String, _ e: StatCache.Entry, synced: Bool) {
        let start = chunk.count
        chunk += repeatElement(0, count: Layout.recordSize)
        IndexFile.withBytes(path) { patchReference(at: start + Layout.pathField, to: $0) }
        var flags: UInt32 = (e.racy ? Layout.racyFlag : 0) | (synced ? Layout.syncedFlag : 0)
        chunk.withUnsafeMutableBytes { bytes in
            let r = bytes.baseAddress! + start
            r.storeBytes(of: e.inode.littleEndian, toByteOffset: Layout.inodeField, as: UInt64.self)
            r.storeBytes(of: e.size.littleEndian, toByteOffset: Layout.sizeField, as: Int64.self)
            r.storeBytes(of: e.mtimeNanos.littleEndian, toByteOffset: Layout.mtimeField, as: Int64.self)
            r.storeBytes(of: e.ctimeNanos.littleEndian, toByteOffset: Layout.ctimeField, as: Int64.self)
            _ = CompactId.packHash(e.hash, into: r + Layout.hashField)
            if CompactId.pack(e.refId, CompactId.uuid, into: r + Layout.refIdField) { flags |= Layout.packedRefIdFlag }
            if CompactId.pack(e.changesetId, CompactId.changesetId, into: r + Layout.changesetIdField) {
                flags |= Layout.packedChangesetIdFlag
            }
            r.storeBytes(of: flags.littleEndian, toByteOffset: Layout.flagsField, as: UInt32.self)
        }
        if flags & Layout.packedRefIdFlag == 0 {
            IndexFile.withBytes(e.refId) { patchReference(at: start + Layout.refIdField, to: $0) }
        }
        if flags & Layout.packedChangesetIdFlag == 0 {
            IndexFile.withBytes(e.changesetId) { patchReference(at: start + Layout.changesetIdField, to: $0) }
        }
        recordDone()
    }

    /// Appends `text` to the string table and writes where it is into the record field at
    /// `offset` of the chunk.
    private mutating func patchReference(at offset: Int, to text: UnsafeRawBufferPointer) {
        let reference = (UInt32(strings.count).littleEndian, UInt32(text.count).littleEndian)
        strings += text
        withUnsafeBytes(of: reference) { value in
            chunk.withUnsafeMutableBytes {
                $0.baseAddress!.advanced(by: offset).copyMemory(from: value.baseAddress!, byteCount: 8)
            }
        }
    }

    private mutating func recordDone() {
        written += 1
        if chunk.count >= SealedFile.chunkBytes {
            writeOut(chunk)
            chunk.removeAll(keepingCapacity: true)
        }
    }

    private mutating func appendNumber<N: FixedWidthInteger>(_ value: N) {
        withUnsafeBytes(of: value.littleEndian) { chunk += $0 }
    }

    private mutating func writeOut(_ bytes: [UInt8]) {
        guard failure == nil else { return }
        hasher.update(data: bytes)
        do { try FileSystem.writeAll(fd, bytes, path: path) } catch { failure = error }
    }

    /// Writes the string table and the checksum.
    mutating func finish() throws {
        precondition(written == expected, "the index header promised \(expected) entries, \(written) came")
        writeOut(chunk)
        writeOut(strings)
        if let failure { throw failure }
        try FileSystem.writeAll(fd, Array(hasher.finalize()), path: path)
    }
}
