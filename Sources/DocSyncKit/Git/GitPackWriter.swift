import CLibGit2
import CZlib
import Crypto

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the blobs of a large commit, or the objects a local fetch or push copies,
/// straight into one pack file of a repository's object store, instead of one loose
/// file per object.
///
/// Why: libgit2 writes each blob as a loose, zlib-compressed file (a temporary file and a
/// rename), and the push that follows opens and inflates each one again to build the pack
/// it sends. For a first push of 100,000 documents that was 100,000 files made in the
/// cache repository (`git hash-object -w` alone takes 10.6 s for them on this machine).
///
/// The pack's object count comes first in its header, and is known only at the end, so
/// the compressed objects wait in a temporary file (unlinked as soon as it is made: a
/// killed run leaves nothing) and are streamed from there into libgit2's pack writer,
/// which checks every object and the pack's SHA-1 as `git index-pack` does. Memory stays
/// at `spillBytes` however many documents the commit has.
///
/// Smaller commits stay loose, as git keeps a fetch of fewer than `fetch.unpackLimit`
/// (100) objects loose: a pack per small push would pile up packs.
final class GitPackWriter {
    /// Commits that write more new files than this have their blobs packed.
    static let looseLimit = 100
    /// Compressed objects held in memory before they go to the temporary file.
    static let spillBytes = 1 << 20

    private let odb: OpaquePointer
    private let folder: String
    /// Object records not yet in the temporary file (no pack header or trailer).
    private var records: [UInt8] = []
    private var spill: Int32 = -1
    private var spilled = 0
    private var count = 0
    /// Ids already in this pack: not in the object store until it is written, and a pack
    /// must not hold one object twice.
    private var packed: Set<ObjectKey> = []

    /// - Parameter folder: where the temporary file is made (the repository's).
    init(repository: OpaquePointer, folder: String) throws {
        var odb: OpaquePointer?
        try GitError.check(git_repository_odb(&odb, repository), "git_repository_odb")
        self.odb = odb!
        self.folder = folder
        records.reserveCapacity(Self.spillBytes + 4096)
    }

    deinit {
        if spill >= 0 { close(spill) }
        git_odb_free(odb)
    }

    /// Adds a blob and returns its id; it can be read once `write()` has returned.
    func add(_ content: [UInt8]) throws -> git_oid {
        var oid = git_oid()
        try content.withUnsafeBytes { bytes in
            try GitError.check(
                git_odb_hash(&oid, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, bytes.count, GIT_OBJECT_BLOB),
                "git_odb_hash")
        }
        let key = ObjectKey(oid)
        // Without a refresh: a miss would otherwise list the pack folder again, per blob.
        if packed.contains(key) || git_odb_exists_ext(odb, &oid, UInt32(GIT_ODB_LOOKUP_NO_REFRESH.rawValue)) != 0 {
            return oid
        }
        try content.withUnsafeBytes { try Self.appendRecord(type: GIT_OBJECT_BLOB, content: $0, to: &records) }
        packed.insert(key)
        count += 1
        if records.count >= Self.spillBytes { try spillRecords() }
        return oid
    }

    /// Adds an object read from another repository's object store, whole (no delta), as
    /// the local fetch and push copy them (`GitObjectCopy`). The caller passes each object
    /// once and only objects this store lacks.
    func add(copyOf object: OpaquePointer) throws {
        let content = UnsafeRawBufferPointer(
            start: git_odb_object_data(object) ?? UnsafeRawPointer(bitPattern: 1), count: git_odb_object_size(object))
        try Self.appendRecord(type: git_odb_object_type(object), content: content, to: &records)
        count += 1
        if records.count >= Self.spillBytes { try spillRecords() }
    }

    /// Writes the pack and its index into the object store (nothing when every blob was
    /// already there).
    func write() throws {
        guard count > 0 else { return }
        var header = Array("PACK".utf8)
        for value in [UInt32(2), UInt32(count)] { withUnsafeBytes(of: value.bigEndian) { header += $0 } }
        var sha1 = Insecure.SHA1()
        var writer: UnsafeMutablePointer<git_odb_writepack>?
        try GitError.check(git_odb_write_pack(&writer, odb, nil, nil), "git_odb_write_pack")
        defer { writer!.pointee.free(writer) }
        var progress = git_indexer_progress()
        func send(_ bytes: UnsafeRawBufferPointer) throws {
            sha1.update(bufferPointer: bytes)
            try GitError.check(
                writer!.pointee.append(writer, bytes.baseAddress, bytes.count, &progress), "git_odb_writepack append")
        }
        try header.withUnsafeBytes(send)
        if spilled > 0 {
            var chunk = [UInt8](repeating: 0, count: Self.spillBytes)
            var offset = 0
            while offset < spilled {
                let n = chunk.withUnsafeMutableBytes {
                    pread(spill, $0.baseAddress, min($0.count, spilled - offset), off_t(offset))
                }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else {
                    throw FileSystemError(
                        path: folder + " (temporary pack)", operation: "read", code: n < 0 ? errno : EIO)
                }
                try chunk.withUnsafeBytes { try send(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                offset += n
            }
        }
        try records.withUnsafeBytes(send)
        let trailer = Array(sha1.finalize())
        try trailer.withUnsafeBytes { bytes in
            try GitError.check(
                writer!.pointee.append(writer, bytes.baseAddress, bytes.count, &progress), "git_odb_writepack append")
        }
        // Every byte is in libgit2's partial pack file; not yet indexed or renamed.
        try CrashPoint.hit("git.pack-appended")
        try GitError.check(writer!.pointee.commit(writer, &progress), "git_odb_writepack commit")
        // So that the tree written next finds its blobs (strict object creation checks).
        try GitError.check(git_odb_refresh(odb), "git_odb_refresh")
        records.removeAll(keepingCapacity: true)
        packed.removeAll()
        count = 0
        spilled = 0
        if spill >= 0 { _ = ftruncate(spill, 0) }
    }

    private func spillRecords() throws {
        if spill < 0 {
            let path = folder + "/docsync-pack-\(getpid()).tmp"
            spill = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard spill >= 0 else { throw FileSystemError(path: path, operation: "open", code: errno) }
            unlink(path)
        }
        try FileSystem.writeAll(spill, records, path: folder + " (temporary pack)")
        spilled += records.count
        records.removeAll(keepingCapacity: true)
    }

    /// One pack entry: the type (commit 1, tree 2, blob 3, tag 4) and size in git's
    /// variable-length header, then the content as a zlib stream (fastest level: the
    /// compression is paid on every object, and git repacks when it wants smaller).
    static func appendRecord(type: git_object_t, content: UnsafeRawBufferPointer, to records: inout [UInt8]) throws {
        var size = content.count
        var byte = UInt8(truncatingIfNeeded: type.rawValue << 4) | UInt8(size & 0x0f)
        size >>= 4
        while size > 0 {
            records.append(byte | 0x80)
            byte = UInt8(size & 0x7f)
            size >>= 7
        }
        records.append(byte)
        let start = records.count
        var length = compressBound(uLong(content.count))
        records.append(contentsOf: repeatElement(0, count: Int(length)))
        let status = records.withUnsafeMutableBufferPointer { out in
            compress2(
                out.baseAddress! + start, &length, content.baseAddress?.assumingMemoryBound(to: Bytef.self),
                uLong(content.count), Z_BEST_SPEED)
        }
        guard status == Z_OK else { throw GitError(code: -1, function: "compress2", message: "zlib error \(status)") }
        records.removeLast(records.count - start - Int(length))
    }

    /// A git object id as a set member (git_oid is a C struct of 20 bytes).
    struct ObjectKey: Hashable {
        var head: UInt64, middle: UInt64, tail: UInt32

        init(_ oid: git_oid) {
            var copy = oid
            (head, middle, tail) = withUnsafeBytes(of: &copy.id) { raw in
                (
                    raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
                )
            }
        }
    }
}
