import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Everything docsync prints on stdout goes through here (the `print` below shadows the
/// standard library's in this module), so a failed write — a full disk, `>/dev/full` —
/// is noticed: the run exits 1 with a message instead of 0 with its output lost.
/// Buffered; flushed at every line on a terminal so output streams as it happens.
enum StandardOutput {
    nonisolated(unsafe) private static var buffer: [UInt8] = []
    /// errno of the first write that failed; later output is dropped.
    nonisolated(unsafe) private static var failure: Int32? = nil
    private static let lineBuffered = isatty(STDOUT_FILENO) != 0

    static func write(_ text: String) {
        guard failure == nil else { return }
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 || (lineBuffered && buffer.last == UInt8(ascii: "\n")) { flush() }
    }

    static func flush() {
        var offset = 0
        while offset < buffer.count, failure == nil {
            let written = buffer[offset...].withUnsafeBytes {
                Glibc.write(STDOUT_FILENO, $0.baseAddress, $0.count)
            }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                failure = written < 0 ? errno : EIO
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes; a run whose output could not be written exits 1 here.
    static func finish() {
        flush()
        guard let failure else { return }
        // A reader that went away on purpose (`docsync log | head`) is not an error.
        if failure == EPIPE { Foundation.exit(0) }
        FileHandle.standardError.write(
            Data(
                "docsync: error: cannot write to standard output: \(String(cString: strerror(failure)))\n"
                    .utf8))
        Foundation.exit(1)
    }
}

/// The standard library's `print`, written through StandardOutput.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardOutput.write(items.map { "\($0)" }.joined(separator: separator) + terminator)
}

extension String {
    var firstLine: String {
        split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? self
    }
}
