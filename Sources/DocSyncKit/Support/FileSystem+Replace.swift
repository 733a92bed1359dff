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
        func isExpected(_ stat: FileStat, at readable: String, ignoringChangeTime: Bool) -> Bool {
            var stat = stat
            if ignoringChangeTime { stat.ctimeNanos = expected.ctimeNanos }
            if stat == expected { return true }
            guard let expectedBytes, stat.isRegularFile else { return false }
            return (try? readFile(readable)) == expectedBytes
        }
        guard let now = try? linkStatus(path), isExpected(now, at: path, ignoringChangeTime: false) else {
            return .changedMeanwhile
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
            if code == EINVAL || code == ENOSYS || code == EOPNOTSUPP {
                // No exchange on this filesystem (some network and FUSE mounts): check again
                // and rename, which leaves the instant between the two open.
                guard let again = try? linkStatus(path), isExpected(again, at: path, ignoringChangeTime: false),
                    Glibc.rename(temp, path) == 0
                else {
                    unlink(temp)
                    return .changedMeanwhile
                }
                if durable { try syncDirectory(dir.isEmpty ? "." : dir) }
                return .replaced
            }
            unlink(temp)
            if code == ENOENT { return .changedMeanwhile }  // moved or deleted meanwhile
            throw FileSystemError(path: path, operation: "rename (exchange)", code: code)
        }
        // `temp` now names what was at `path`: the file read, or a save made meanwhile.
        if let out = try? linkStatus(temp), isExpected(out, at: temp, ignoringChangeTime: true) {
            unlink(temp)
            if durable { try syncDirectory(dir.isEmpty ? "." : dir) }
            return .replaced
        }
        if c_renameat2(AT_FDCWD, temp, AT_FDCWD, path, renameExchange) == 0,
            let back = try? linkStatus(temp), back.inode == UInt64(ours.st_ino), back.device == UInt64(ours.st_dev)
        {
            unlink(temp)  // our own file, swapped back out
            return .changedMeanwhile
        }
        // Saved again (or moved) between the two exchanges: what `temp` holds now is the
        // user's, so it stays, under a name the scan ignores but a person sees.
        let kept = path + ".docsync-kept-\(getpid())-\(FileSystem.currentTimeNanos)"
        return Glibc.rename(temp, kept) == 0 ? .keptAside(kept) : .keptAside(temp)
    }
}
