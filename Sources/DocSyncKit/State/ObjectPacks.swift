import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Objects stored many at a time: one append-only pack file per batch plus an index
/// written when the batch is flushed, in `.docsync/objects/packs/`. Why: a first push or
/// a clone of 100,000 documents made 100,000 object files (a temporary file, a write, a
/// rename each), as many as the documents themselves; git writes one pack.
///
/// `pack-<name>.pack`: the line `docsync-pack 1`, then per object its SHA-256 (32 bytes),
/// its length (4 bytes, big-endian) and its bytes. `pack-<name>.idx`: the line
/// `docsync-pack-index 1`, the count (8 bytes), per object sorted by hash the hash (32),
/// the offset of its bytes in the pack (8) and the length (4), then a SHA-256 of all
/// that. A pack counts only once its index exists: the index is renamed into place after
/// the pack is written, and the caller flushes the filesystem before journaling anything
/// that refers to an object in it, so a crash leaves at worst a pack without an index,
/// which nothing refers to and `gc` removes. The pack itself is written under a
/// temporary name (`.docsync-tmp-…`) and renamed to `pack-<name>.pack` only once whole
/// and fsynced: a write that fails (a full disk) removes it and leaves nothing under a
/// final name. Why: a push that filled a remote left its partial pack there (read-only),
/// the share stayed full and every replica's next push failed until someone found it.
final class ObjectPacks: @unchecked Sendable {
    static let packHeader = Array("docsync-pack 1\n".utf8)
    static let indexHeader = Array("docsync-pack-index 1\n".utf8)
    static let entrySize = 32 + 8 + 4
    /// Batches smaller than this stay loose files: a sync of a few edits writes no pack.
    static let looseLimit = 16

    let folder: String
    let files: any ObjectFiles
    private let lock = NSLock()
    private var loaded: [PackIndex]? = nil
    private var writer: PackWriter? = nil
    /// Objects put since the last flush (loose or packed), to know when to start a pack.
    private var batchCount = 0

    init(folder: String, files: any ObjectFiles = LocalObjectFiles()) {
        self.folder = folder
        self.files = files
    }

    deinit { try? finishPack() }

    // MARK: Reading

    /// The bytes of `hash` if a pack (or the pack being written) holds them, unchecked.
    func bytes(_ hash: [UInt8]) -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        if let writer, let found = writer.bytes(hash) { return found }
        for index in indexes() {
            if let found = index.bytes(hash) { return found }
        }
        return nil
    }

    /// How many bytes a pack holds for `hash` (nil: no pack holds it), read from the index.
    func length(_ hash: [UInt8]) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        if let writer, let found = writer.length(hash) { return found }
        for index in indexes() {
            if let found = index.location(hash) { return found.length }
        }
        return nil
    }

    func contains(_ hash: [UInt8]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if let writer, writer.location(hash) != nil { return true }
        return indexes().contains { $0.location(hash) != nil }
    }

    /// Every complete pack's index, loaded once.
    private func indexes() -> [PackIndex] {
        if let loaded { return loaded }
        var found: [PackIndex] = []
        for name in ((try? files.listDirectory(folder)) ?? []).sorted()
        where name.hasSuffix(".idx") && name.hasPrefix("pack-") {
            let base = folder + "/" + name.dropLast(4)
            if let index = PackIndex.load(index: base + ".idx", pack: base + ".pack", files: files) {
                found.append(index)
            }
        }
        loaded = found
        return found
    }

    // MARK: Writing

    /// Takes `bytes` into the pack being written, unless this batch is still small
    /// (then false: the caller writes a loose object).
    func add(_ bytes: [UInt8], hash: [UInt8]) throws -> Bool {
        lock.lock()
        defer { lock.unlock() }
        batchCount += 1
        guard batchCount > Self.looseLimit else { return false }
        if writer == nil { writer = try PackWriter(folder: folder, files: files) }
        do { try writer!.append(bytes, hash: hash) } catch {
            // The batch's pack is gone with its temporary file: nothing refers to it yet.
            writer?.abandon()
            writer = nil
            throw error
        }
        return true
    }

    /// Completes the pack being written (its index renamed into place). The caller
    /// flushes the filesystem after this, before journaling references to its objects.
    func finishBatch() throws {
        lock.lock()
        defer { lock.unlock() }
        try finishPack()
        batchCount = 0
    }

    private func finishPack() throws {
        guard let current = writer else { return }
        writer = nil
        let index: PackIndex
        do { index = try current.finish() } catch {
            current.abandon()
            throw error
        }
        if loaded != nil { loaded!.append(index) }
    }

    /// Drops what was loaded, so the next read lists the packs again (after gc).
    func forget() {
        lock.lock()
        loaded = nil
        lock.unlock()
    }

    /// The complete packs, for gc.
    func allIndexes() -> [PackIndex] {
        lock.lock()
        defer { lock.unlock() }
        return indexes()
    }
}

/// One complete pack, found through its index (kept in memory as the index file's bytes,
/// searched in place). Used under `ObjectPacks`' lock.
final class PackIndex: @unchecked Sendable {
    let packPath: String
    let indexPath: String
    let count: Int
    private let table: [UInt8]  // count entries of ObjectPacks.entrySize bytes, sorted by hash
    private var fd: Int32 = -1
    private let files: any ObjectFiles

    static func load(index indexPath: String, pack packPath: String, files: any ObjectFiles) -> PackIndex? {
        guard let bytes = try? files.readFile(indexPath) else { return nil }
        let header = ObjectPacks.indexHeader
        guard bytes.count >= header.count + 8 + 32, Array(bytes[0..<header.count]) == header else { return nil }
        let sumStart = bytes.count - 32
        guard Array(SHA256.hash(data: bytes[0..<sumStart])) == Array(bytes[sumStart...]) else { return nil }
        var count = 0
        for byte in bytes[header.count..<(header.count + 8)] { count = count << 8 | Int(byte) }
        let tableStart = header.count + 8
        guard count >= 0, count <= bytes.count, tableStart + count * ObjectPacks.entrySize == sumStart else {
            return nil
        }
        let index = PackIndex(
            packPath: packPath, indexPath: indexPath, count: count, table: Array(bytes[tableStart..<sumStart]),
            files: files)
        // Why: on a folder a sync service copies (a drive remote), an index can arrive
        // before its pack, or with the pack still being copied; such an index holds
        // nothing yet, and a reader must see "not here yet", not a damaged object.
        guard let status = try? files.linkStatus(packPath), status.isRegularFile, status.size >= Int64(index.end) else {
            return nil
        }
        return index
    }

    /// Where the last object in the pack ends: a pack shorter than this is incomplete.
    var end: Int {
        table.withUnsafeBufferPointer { t in
            (0..<count).reduce(0) { end, i in
                let entry = t.baseAddress! + i * ObjectPacks.entrySize
                return max(end, Int(Self.bigEndian(entry + 32, 8)) + Int(Self.bigEndian(entry + 40, 4)))
            }
        }
    }

    init(packPath: String, indexPath: String, count: Int, table: [UInt8], files: any ObjectFiles) {
        self.packPath = packPath
        self.indexPath = indexPath
        self.count = count
        self.table = table
        self.files = files
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Where `hash`'s bytes are in the pack (binary search of the sorted table).
    func location(_ hash: [UInt8]) -> (offset: Int, length: Int)? {
        guard hash.count == 32 else { return nil }
        return table.withUnsafeBufferPointer { t in
            hash.withUnsafeBufferPointer { h in
                var low = 0, high = count
                while low < high {
                    let mid = (low + high) / 2
                    let entry = t.baseAddress! + mid * ObjectPacks.entrySize
                    let order = memcmp(entry, h.baseAddress!, 32)
                    if order == 0 {
                        return (Int(Self.bigEndian(entry + 32, 8)), Int(Self.bigEndian(entry + 40, 4)))
                    }
                    if order < 0 { low = mid + 1 } else { high = mid }
                }
                return nil
            }
        }
    }

    /// The bytes stored for `hash` (unchecked: the caller checks them against it).
    func bytes(_ hash: [UInt8]) -> [UInt8]? {
        guard let (offset, length) = location(hash) else { return nil }
        if fd < 0 { fd = files.openForReading(packPath) }
        guard fd >= 0 else { return nil }
        return PackWriter.read(fd, offset: offset, length: length)
    }

    /// Every object's hash (hex), offset and length, for gc.
    func entries() -> [(hash: String, offset: Int, length: Int)] {
        table.withUnsafeBufferPointer { t in
            (0..<count).map { i in
                let entry = t.baseAddress! + i * ObjectPacks.entrySize
                return (
                    ContentHash.hex(UnsafeBufferPointer(start: entry, count: 32)), Int(Self.bigEndian(entry + 32, 8)),
                    Int(Self.bigEndian(entry + 40, 4))
                )
            }
        }
    }

    static func bigEndian(_ p: UnsafePointer<UInt8>, _ n: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<n { value = value << 8 | UInt64(p[i]) }
        return value
    }
}

/// The pack of the current batch, appended to as objects come: into a temporary file,
/// renamed to `packPath` by `finish()` once whole; `abandon()` (or dropping it
/// unfinished) removes the temporary file.
final class PackWriter {
    let packPath: String
    let indexPath: String
    /// Where the pack is written until it is whole.
    let temporaryPath: String
    private let files: any ObjectFiles
    private var fd: Int32
    private var done = false
    private var length: Int
    private var entries: [(hash: [UInt8], offset: Int, length: Int)] = []
    private var positions: [[UInt8]: Int] = [:]
    /// Bytes not yet written: records are gathered and written 1 MiB at a time.
    private var buffer: [UInt8] = []

    init(folder: String, files: any ObjectFiles = LocalObjectFiles()) throws {
        try files.createDirectories(folder)
        var name = ""
        for attempt in 0..<100 {
            name = folder + "/pack-\(FileSystem.currentTimeNanos)-\(getpid())-\(attempt)"
            if !files.exists(name + ".pack") && !files.exists(name + ".idx") { break }
        }
        let (temporary, fd) = try files.createTemporary(beside: name + ".pack", mode: 0o444)
        self.fd = fd
        self.files = files
        temporaryPath = temporary
        packPath = name + ".pack"
        indexPath = name + ".idx"
        length = 0
        buffer = ObjectPacks.packHeader
        length = buffer.count
    }

    deinit { abandon() }

    /// Drops an unfinished pack: its temporary file is removed (a finished one stays).
    func abandon() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if !done {
            done = true
            try? files.removeFile(temporaryPath)
        }
    }

    func location(_ hash: [UInt8]) -> Int? { positions[hash] }

    func length(_ hash: [UInt8]) -> Int? { positions[hash].map { entries[$0].length } }

    func bytes(_ hash: [UInt8]) -> [UInt8]? {
        guard let i = positions[hash] else { return nil }
        let e = entries[i]
        let written = length - buffer.count
        if e.offset >= written {
            let start = e.offset - written
            return Array(buffer[start..<(start + e.length)])
        }
        let reader = files.openForReading(done ? packPath : temporaryPath)
        guard reader >= 0 else { return nil }
        defer { close(reader) }
        return Self.read(reader, offset: e.offset, length: e.length)
    }

    func append(_ bytes: [UInt8], hash: [UInt8]) throws {
        guard positions[hash] == nil else { return }
        guard bytes.count <= Int(UInt32.max) else {
            throw FileSystemError(path: packPath, operation: "write (object over 4 GiB)", code: EFBIG)
        }
        buffer += hash
        let n = UInt32(bytes.count)
        buffer += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
        let offset = length + 36
        buffer += bytes
        length = offset + bytes.count
        positions[hash] = entries.count
        entries.append((hash, offset, bytes.count))
        if buffer.count >= 1 << 20 { try drain() }
    }

    private func drain() throws {
        try FileSystem.writeAll(fd, buffer, path: packPath)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is left, fsyncs the pack and renames it into place, then writes the
    /// index (atomically: the pack counts from then on). If the index cannot be written,
    /// the pack is removed again: nothing is left under a final name.
    func finish() throws -> PackIndex {
        try drain()
        if fsync(fd) != 0 { throw FileSystemError(path: packPath, operation: "fsync", code: errno) }
        close(fd)
        fd = -1
        try files.rename(temporaryPath, packPath)
        done = true
        let sorted = entries.sorted { $0.hash.lexicographicallyPrecedes($1.hash) }
        var index = ObjectPacks.indexHeader
        let count = UInt64(sorted.count)
        for shift in stride(from: 56, through: 0, by: -8) { index.append(UInt8(count >> UInt64(shift) & 0xff)) }
        var table: [UInt8] = []
        table.reserveCapacity(sorted.count * ObjectPacks.entrySize)
        for e in sorted {
            table += e.hash
            for shift in stride(from: 56, through: 0, by: -8) {
                table.append(UInt8(UInt64(e.offset) >> UInt64(shift) & 0xff))
            }
            for shift in stride(from: 24, through: 0, by: -8) {
                table.append(UInt8(UInt32(e.length) >> UInt32(shift) & 0xff))
            }
        }
        index += table
        index += Array(SHA256.hash(data: index))
        do { try files.writeAtomically(indexPath, index, mode: 0o444, durable: false) } catch {
            try? files.removeFile(packPath)
            throw error
        }
        return PackIndex(packPath: packPath, indexPath: indexPath, count: sorted.count, table: table, files: files)
    }

    static func read(_ fd: Int32, offset: Int, length: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = out.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + done, length - done, off_t(offset + done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return out
    }
}
