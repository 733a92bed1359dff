import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// Glibc's Swift module does not declare renameat2 (it is behind _GNU_SOURCE).
@_silgen_name("renameat2")
private func c_renameat2(
    _ olddirfd: Int32, _ old: UnsafePointer<CChar>, _ newdirfd: Int32, _ new: UnsafePointer<CChar>, _ flags: UInt32
) -> Int32
private let renameExchange: UInt32 = 2  // RENAME_EXCHANGE, <linux/fs.h>
private let renameNoReplace: UInt32 = 1  // RENAME_NOREPLACE

extension FileSystem {
    /// What `replaceIfUnchanged` did.
    public enum Replacement: Equatable, Sendable {
        case replaced
        /// The file was not the one expected (saved, moved or deleted meanwhile): left as it is.
        case changedMeanwhile
        /// Saved twice within the replacement itself: the earlier save, which the swap
        /// back could not put in place, is kept at this path beside it (never removed).
        case keptAside(String)
    }

    /// Replaces the file at `path` with `bytes`, but only if it is still the file that
    /// was read: the same inode, size and modification time as `expected` (or, with
    /// `expectedBytes`, the same content). Why not check, then rename: an editor saving in
    /// the instant between the two would be overwritten. The new file is swapped in with
    /// `renameat2(RENAME_EXCHANGE)`, and the file that came out is checked: if it is not
    /// the one read, it is swapped back. A filesystem without the exchange falls back to
    /// check-then-rename. `beforeSwap` runs between the first check and the swap (a pause
    /// point for tests).
    public static func replaceIfUnchanged(
        _ path: String, with bytes: [UInt8], mode: mode_t, expected: FileStat, expectedBytes: [UInt8]?,
        durable: Bool = true, beforeSwap: () throws -> Void = {}
    ) throws -> Replacement {
        try replace(path, with: bytes, mode: mode, durable: durable, checkFirst: true, beforeSwap: beforeSwap) {
            stat, readable, renamed in
            var stat = stat
            // Our own rename changed the ctime of the file it took out.
            if renamed { stat.ctimeNanos = expected.ctimeNanos }
            if stat == expected { return true }
            guard let expectedBytes, stat.isRegularFile else { return false }
            return (try? readFile(readable)) == expectedBytes
        }
    }

    /// Like `replaceIfUnchanged(_:with:mode:expected:expectedBytes:)`, for a file the
    /// caller has just read and checked: replaced only if what the swap took out still
    /// hashes to `expectedHash` (a pulled version written over a tracked file).
    /// `written` is told what the new file is (its inode), when it was put in place.
    public static func replaceIfUnchanged(
        _ path: String, with bytes: [UInt8], mode: mode_t, expectedHash: String, durable: Bool = true,
        written: (FileStat) -> Void = { _ in }
    ) throws -> Replacement {
        try replace(path, with: bytes, mode: mode, durable: durable, checkFirst: false, written: written) {
            stat, readable, _ in
            stat.isRegularFile && (try? readFile(readable)).map(ContentHash.of) == expectedHash
        }
    }

    /// Removes the file at `path` only if it still hashes to `expectedHash`: taken out of
    /// the way under a temporary name first, checked there, and put back if a save
    /// replaced it meanwhile (why: a check, then an unlink, deleted a save made between).
    public static func removeIfUnchanged(_ path: String, expectedHash: String) throws -> Replacement {
        let (dir, base) = splitLast(path)
        let temp = temporaryPath(in: dir, for: base)
        guard c_renameat2(AT_FDCWD, path, AT_FDCWD, temp, renameNoReplace) == 0 else {
            let code = errno
            if code == ENOENT { return .changedMeanwhile }  // already gone: nothing to remove
            if lacksRenameFlags(code) {
                guard (try? readFile(path)).map(ContentHash.of) == expectedHash else { return .changedMeanwhile }
                try removeFile(path)
                return .replaced
            }
            throw FileSystemError(path: path, operation: "rename (to remove it)", code: code)
        }
        if let out = try? linkStatus(temp), out.isRegularFile,
            (try? readFile(temp)).map(ContentHash.of) == expectedHash
        {
            unlink(temp)
            return .replaced
        }
        if c_renameat2(AT_FDCWD, temp, AT_FDCWD, path, renameNoReplace) == 0 { return .changedMeanwhile }
        return keepAside(temp, beside: path)
    }

    /// The swap itself (see `replaceIfUnchanged`): `isExpected(stat, readablePath,
    /// renamedByUs)` says whether a file is the one the caller read.
    private static func replace(
        _ path: String, with bytes: [UInt8], mode: mode_t, durable: Bool, checkFirst: Bool,
        beforeSwap: () throws -> Void = {}, written: (FileStat) -> Void = { _ in },
        isExpected: (FileStat, String, Bool) -> Bool
    ) throws -> Replacement {
        if checkFirst {
            guard let now = try? linkStatus(path), isExpected(now, path, false) else { return .changedMeanwhile }
        }
        let (dir, base) = splitLast(path)
        let (temp, fd) = try createTemporary(beside: path, folder: dir, name: base, mode: mode)
        var ours = Glibc.stat()
        do {
            try writeAll(fd, bytes, path: path)
            if fchmod(fd, mode) != 0 { throw FileSystemError(path: path, operation: "chmod", code: errno) }
            if durable, fsync(fd) != 0 { throw FileSystemError(path: path, operation: "fsync", code: errno) }
            if fstat(fd, &ours) != 0 { throw FileSystemError(path: path, operation: "fstat", code: errno) }
            close(fd)
            try beforeSwap()
        } catch {
            close(fd)
            unlink(temp)
            throw error
        }
        guard c_renameat2(AT_FDCWD, temp, AT_FDCWD, path, renameExchange) == 0 else {
            let code = errno
            if lacksRenameFlags(code) {
                // No exchange on this filesystem (some network and FUSE mounts): check again
                // and rename, which leaves the instant between the two open.
                guard let again = try? linkStatus(path), isExpected(again, path, false), Glibc.rename(temp, path) == 0
                else {
                    unlink(temp)
                    return .changedMeanwhile
                }
                written(FileStat(ours))
                if durable { try syncDirectory(dir.isEmpty ? "." : dir) }
                return .replaced
            }
            unlink(temp)
            if code == ENOENT { return .changedMeanwhile }  // moved or deleted meanwhile
            throw FileSystemError(path: path, operation: "rename (exchange)", code: code)
        }
        // `temp` now names what was at `path`: the file read, or a save made meanwhile.
        if let out = try? linkStatus(temp), isExpected(out, temp, true) {
            unlink(temp)
            written(FileStat(ours))
            if durable { try syncDirectory(dir.isEmpty ? "." : dir) }
            return .replaced
        }
        if c_renameat2(AT_FDCWD, temp, AT_FDCWD, path, renameExchange) == 0,
            let back = try? linkStatus(temp), back.inode == UInt64(ours.st_ino), back.device == UInt64(ours.st_dev)
        {
            unlink(temp)  // our own file, swapped back out
            return .changedMeanwhile
        }
        return keepAside(temp, beside: path)
    }

    /// Whether `renameat2` failed for want of its flags on this filesystem (some network
    /// and FUSE mounts), not for the paths.
    private static func lacksRenameFlags(_ code: Int32) -> Bool {
        code == EINVAL || code == ENOSYS || code == EOPNOTSUPP
    }

    /// Saved again (or moved) within the swap: what `temp` holds now is the user's, so it
    /// stays, under a name the scan ignores but a person sees.
    private static func keepAside(_ temp: String, beside path: String) -> Replacement {
        let kept = path + ".docsync-kept-\(getpid())-\(FileSystem.currentTimeNanos)"
        return Glibc.rename(temp, kept) == 0 ? .keptAside(kept) : .keptAside(temp)
    }
}
