#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Named places in push, pull, sync and gc where a test can make docsync stop dead, to
/// prove a crash there loses nothing. `DOCSYNC_CRASH_AT=<name>` makes the process
/// SIGKILL itself at that point (for tests of the binary); in-process tests set
/// `CrashPoint.throwAt` instead. Costs one string compare when unused.
public enum CrashPoint {
    public static let all = [
        "record.after-stamp", "record.after-journal",
        "pull.after-journal", "pull.after-files",
        "push.after-remote-commit",
        "remote.after-documents", "remote.after-feed",
    ]

    /// Steps of `docsync gc`, in order: the remote's tombstone purge (the compacted feed
    /// is a folder remote's only), the journal swap (see JournalCompaction), the sweep.
    public static let gc = [
        "gc.after-remote-feed", "gc.after-remote-commit",
        "gc.after-state-reset", "gc.after-journal", "gc.after-state", "gc.after-objects",
    ]

    public struct Simulated: Error, CustomStringConvertible {
        public var point: String
        public var description: String { "simulated crash at \(point)" }
    }

    nonisolated(unsafe) public static var throwAt: String? = nil
    private static let killAt = ProcessInfo.processInfo.environment["DOCSYNC_CRASH_AT"]

    public static func hit(_ name: String) throws {
        if name == killAt { kill(getpid(), SIGKILL) }
        if name == throwAt { throw Simulated(point: name) }
    }
}
