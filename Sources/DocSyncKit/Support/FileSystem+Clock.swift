import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension FileSystem {
    /// How far the clock that dates files in `folder` (a network file system's server, or
    /// this machine's) is ahead of this machine's, in nanoseconds: read off a file written
    /// there and removed at once. 0 when nothing can be written there.
    static func clockSkew(of folder: String) -> Int64 {
        guard
            let (temp, fd) = try? createTemporary(beside: folder + "/clock", folder: folder, name: "clock", mode: 0o600)
        else { return 0 }
        let here = currentTimeNanos
        var st = Glibc.stat()
        let ok = fstat(fd, &st) == 0
        close(fd)
        unlink(temp)
        return ok ? FileStat(st).mtimeNanos - here : 0
    }
}
