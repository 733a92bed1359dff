#if canImport(Glibc)
    import Glibc
#endif

/// Reads every inotify event queued on a non-blocking descriptor (never blocks), for
/// TreeWatcher and RemoteFolderWatcher.
enum InotifyEvents {
    /// Calls `body` with each event's watch descriptor, mask and name ("" for none).
    static func drain(_ fd: Int32, _ body: (_ wd: Int32, _ mask: UInt32, _ name: String) throws -> Void) rethrows {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(fd, buffer, size)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = buffer.advanced(by: offset + MemoryLayout<inotify_event>.size)
                let name = event.len > 0 ? String(cString: nameStart.assumingMemoryBound(to: CChar.self)) : ""
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
                try body(event.wd, event.mask, name)
            }
        }
    }
}
