import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// The binary index file (`docsync-index 2`, docs/FORMATS.md) read in place: one read into
/// one buffer, checked whole (its SHA-256, then every record's bounds and the order of the
/// paths), then asked record by record. Why: the text index was parsed into a dictionary of
/// strings on every run, a quarter of a no-op `status` at 100,000 documents; here nothing
/// is made for an entry until someone asks for it.
final class IndexFile: @unchecked Sendable {
    /// Where everything is in the file. Numbers are little-endian.
    enum Layout {
        static let magic: [UInt8] = Array("docsync-index 2\n".utf8)
        /// Magic (16 bytes), entry count (u32), record size (u32), the stamp of the state
        /// the synced flags were set against (u64; 0: none is set).
        static let headerSize = 32
        static let stampField = 24
        static let recordSize = 112
        static let checksumSize = 32
        // A record: path (offset and length in the string table, u32 each), inode,
        // size, mtime, ctime (8 bytes each), the content hash (32 bytes), flags (u32),
        // 4 bytes of zeros, the refId and the changesetId (16 bytes each: packed, or
        // the offset and length of the text in the string table).
        static let pathField = 0
        static let inodeField = 8
        static let sizeField = 16
        static let mtimeField = 24
        static let ctimeField = 32
        static let hashField = 40
        static let flagsField = 72
        static let refIdField = 80
        static let changesetIdField = 96
        static let racyFlag: UInt32 = 1
        static let packedRefIdFlag: UInt32 = 2
        static let packedChangesetIdFlag: UInt32 = 4
        /// The entry's refId, hash and path are its document's tracked version, in the
        /// state the header's stamp names (see `UnchangedTree`).
        static let syncedFlag: UInt32 = 8
        static let knownFlags: UInt32 = 15
    }

    private let buffer: UnsafeMutableRawBufferPointer
    let count: Int
    /// The state the synced flags hold for (`SyncState.stamp`; 0: no flag is set).
    let stamp: UInt64
    private let records: UnsafeRawPointer
    private let strings: UnsafeRawPointer
    private let stringsLength: Int

    private init(buffer: UnsafeMutableRawBufferPointer, count: Int) {
        self.buffer = buffer
        self.count = count
        stamp = UInt64(
            littleEndian: UnsafeRawPointer(buffer.baseAddress!).loadUnaligned(
                fromByteOffset: Layout.stampField, as: UInt64.self))
        records = UnsafeRawPointer(buffer.baseAddress!) + Layout.headerSize
        strings = records + count * Layout.recordSize
        stringsLength = buffer.count - Layout.headerSize - count * Layout.recordSize - Layout.checksumSize
    }

    deinit { buffer.deallocate() }

    /// Whether `bytes` start as a binary index does (else it is an older text index).
    static func hasMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= Layout.magic.count && bytes.prefix(Layout.magic.count).elementsEqual(Layout.magic)
    }

    /// Takes `buffer` (a whole file) and checks it; nil (the buffer freed) when it is not
    /// a sound binary index. Why everything is checked before anything is trusted: the
    /// reader then never reads out of bounds, and the merge lookups can rely on the order.
    static func open(adopting buffer: UnsafeMutableRawBufferPointer) -> IndexFile? {
        let bytes = UnsafeRawBufferPointer(buffer)
        guard let count = soundCount(bytes) else {
            buffer.deallocate()
            return nil
        }
        let file = IndexFile(buffer: buffer, count: count)
        return file.recordsAreSound() ? file : nil
    }

    /// The entry count if the header, the size and the checksum agree.
    private static func soundCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let fixed = Layout.headerSize + Layout.checksumSize
        guard bytes.count >= fixed, hasMagic(bytes),
            bytes.loadUnaligned(fromByteOffset: 20, as: UInt32.self).littleEndian == Layout.recordSize
        else { return nil }
        let count = Int(bytes.loadUnaligned(fromByteOffset: 16, as: UInt32.self).littleEndian)
        guard count * Layout.recordSize <= bytes.count - fixed else { return nil }
        let bodyEnd = bytes.count - Layout.checksumSize
        var hasher = SHA256()
        hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[0..<bodyEnd]))
        guard hasher.finalize().withUnsafeBytes({ $0.elementsEqual(bytes[bodyEnd...]) }) else { return nil }
        return count
    }

    /// Every record's fields in bounds, and the paths strictly in walk order.
    private func recordsAreSound() -> Bool {
        for i in 0..<count {
            let record = records + i * Layout.recordSize
            let flags = u32(record, Layout.flagsField)
            guard flags & ~Layout.knownFlags == 0, u32(record, Layout.flagsField + 4) == 0,
                u32(record, Layout.pathField + 4) > 0, inBounds(record + Layout.pathField),
                flags & Layout.packedRefIdFlag != 0 || inBounds(record + Layout.refIdField),
                flags & Layout.packedChangesetIdFlag != 0 || inBounds(record + Layout.changesetIdField),
                i == 0 || comparePaths(i - 1, i) < 0
            else { return false }
        }
        return true
    }

    private func inBounds(_ reference: UnsafeRawPointer) -> Bool {
        Int(u32(reference, 0)) + Int(u32(reference, 4)) <= stringsLength
    }

    private func u32(_ base: UnsafeRawPointer, _ offset: Int) -> UInt32 {
        base.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    private func i64(_ base: UnsafeRawPointer, _ offset: Int) -> Int64 {
        base.loadUnaligned(fromByteOffset: offset, as: Int64.self).littleEndian
    }

    /// The text a (offset, length) reference names in the string table.
    func text(_ reference: UnsafeRawPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: strings + Int(u32(reference, 0)), count: Int(u32(reference, 4)))
    }

    /// Record `i`'s 112 bytes (for the writer, which copies them).
    func record(_ i: Int) -> UnsafeRawPointer { records + i * Layout.recordSize }

    func path(_ i: Int) -> UnsafeRawBufferPointer { text(record(i) + Layout.pathField) }

    /// Whether record `i` holds its document's version in `tracked` (refId, content hash
    /// and path), for the synced flags. Read in place: only the refId is made, for the
    /// lookup. Why: making every entry whole put a tenth of a 1% pull into saving the index.
    func isTracked(_ i: Int, in tracked: VersionTable) -> Bool {
        let r = record(i)
        let refId = refId(r)
        guard !refId.isEmpty, let version = tracked[refId] else { return false }
        return CompactId.hexEquals(version.hash, r + Layout.hashField, count: 32)
            && Self.withBytes(version.path) { UTF8Order.compare(path(i), $0) == 0 }
    }

    /// Record `i`'s refId (empty when its file has none).
    func refId(at i: Int) -> String { refId(record(i)) }

    /// The refId of the record at `r`: packed, or text in the string table.
    private func refId(_ r: UnsafeRawPointer) -> String {
        u32(r, Layout.flagsField) & Layout.packedRefIdFlag != 0
            ? CompactId.unpack(r + Layout.refIdField, CompactId.uuid)
            : String(decoding: text(r + Layout.refIdField), as: UTF8.self)
    }

    func isSynced(_ i: Int) -> Bool { u32(record(i), Layout.flagsField) & Layout.syncedFlag != 0 }

    /// Whether record `i` is `path`'s, vouches for a file with `stat` (not racy, the same
    /// inode, size and times) and is flagged synced: read in place, nothing made.
    func vouchesSynced(_ i: Int, path: String, stat: FileStat) -> Bool {
        let r = record(i)
        let flags = u32(r, Layout.flagsField)
        return flags & (Layout.syncedFlag | Layout.racyFlag) == Layout.syncedFlag
            && UInt64(bitPattern: i64(r, Layout.inodeField)) == stat.inode && i64(r, Layout.sizeField) == stat.size
            && i64(r, Layout.mtimeField) == stat.mtimeNanos && i64(r, Layout.ctimeField) == stat.ctimeNanos
            && Self.withBytes(path) { UTF8Order.compare(self.path(i), $0) == 0 }
    }

    func pathString(_ i: Int) -> String { String(decoding: path(i), as: UTF8.self) }

    func entry(_ i: Int) -> StatCache.Entry {
        let r = record(i)
        let flags = u32(r, Layout.flagsField)
        return StatCache.Entry(
            inode: UInt64(bitPattern: i64(r, Layout.inodeField)), size: i64(r, Layout.sizeField),
            mtimeNanos: i64(r, Layout.mtimeField), ctimeNanos: i64(r, Layout.ctimeField),
            hash: CompactId.hex(r + Layout.hashField, count: 32),
            refId: refId(r),
            changesetId: flags & Layout.packedChangesetIdFlag != 0
                ? CompactId.unpack(r + Layout.changesetIdField, CompactId.changesetId)
                : String(decoding: text(r + Layout.changesetIdField), as: UTF8.self),
            racy: flags & Layout.racyFlag != 0)
    }

    // MARK: Order and lookups

    private func comparePaths(_ a: Int, _ b: Int) -> Int32 { UTF8Order.compare(path(a), path(b)) }

    /// The record holding `path`, by binary search.
    func find(_ path: String) -> Int? {
        Self.withBytes(path) { key in
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                let order = UTF8Order.compare(self.path(middle), key)
                if order == 0 { return middle }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// The record holding `path`, for a caller asking in walk order: `cursor` (the first
    /// record not yet passed) only moves forward, so a whole walk costs one pass over the
    /// records, with no hashing. A path asked out of order is found by binary search.
    func find(_ path: String, cursor: inout Int) -> Int? {
        let found: Int?? = Self.withBytes(path) { key in
            if cursor > 0 && UTF8Order.compare(self.path(cursor - 1), key) >= 0 { return .none }
            while cursor < count {
                let order = UTF8Order.compare(self.path(cursor), key)
                if order > 0 { return .some(nil) }
                cursor += 1
                if order == 0 { return .some(cursor - 1) }
            }
            return .some(nil)
        }
        return found ?? find(path)
    }

    static func withBytes<R>(_ text: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        var text = text
        return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    // MARK: Reading the file

    /// The whole file at `path` in one newly allocated buffer (nil if it cannot be read).
    static func readWhole(_ path: String) -> UnsafeMutableRawBufferPointer? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var st = Glibc.stat()
        guard Glibc.fstat(fd, &st) == 0, st.st_size >= 0, st.st_size < Int(UInt32.max) else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(st.st_size), alignment: 8)
        var done = 0
        while done < buffer.count {
            let n = Glibc.read(fd, buffer.baseAddress! + done, buffer.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                buffer.deallocate()
                return nil
            }
            done += n
        }
        return buffer
    }
}
