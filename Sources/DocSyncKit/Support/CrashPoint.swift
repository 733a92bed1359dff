import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Named places in push, pull, sync and gc where a test can make docsync stop dead, to
/// prove a crash there loses nothing. `DOCSYNC_CRASH_AT=<name>` makes the process
/// SIGKILL itself at that point (for tests of the binary); in-process tests bind
/// `CrashPoint.$throwAt` for the work they run. Costs a string compare and a task-local
/// read when unused.
///
/// `DOCSYNC_PAUSE_AT=<name>` with `DOCSYNC_PAUSE_FILE=<path>` makes the process stop at
/// that point instead: it creates `<path>.reached` and waits (up to a minute) until
/// `<path>` exists. Tests use it to hold one replica inside a step while another runs,
/// so a race happens every time rather than now and then.
public enum CrashPoint {
    /// The sync steps that a sync on `kind` really reaches, in the order it reaches them. A
    /// folder remote writes the documents before its feed (`remote.after-documents`); a git
    /// push writes its objects, then moves the branch in one ref update
    /// (`git.before-ref-update` is between the two).
    public static func points(for kind: RemoteKind) -> [String] {
        let remote =
            kind == .dir
            ? ["remote.after-documents", "remote.after-feed"] : ["git.before-ref-update", "remote.after-feed"]
        return [
            "record.after-stamp", "record.after-journal", "pull.after-records", "pull.after-journal", "pull.after-files"
        ]
            + remote + ["push.after-remote-commit"]
    }

    /// The steps `docsync gc` on `kind` really reaches, in order: the remote's tombstone
    /// purge (only a folder remote writes a compacted feed; git's purge is one commit), the
    /// journal swap (see JournalCompaction), the sweep.
    public static func gcPoints(for kind: RemoteKind, format: FolderRemoteFormat = .drive) -> [String] {
        let remote =
            kind == .dir && format == .shared
            ? ["gc.after-remote-feed", "gc.after-remote-commit"] : ["gc.after-remote-commit"]
        return remote + ["gc.after-state-reset", "gc.after-journal", "gc.after-state", "gc.after-objects"]
    }

    /// The steps of an upgrade of a format-1 folder remote (DriveFolderRemote.upgrade):
    /// its checkpoint commit written, then its `format` replaced (the commit point).
    public static let upgradePoints = ["upgrade.after-commit", "upgrade.after-format"]

    /// The step of `docsync resolve` between journaling the resolve (the file operation,
    /// its local action and the resolve, one batch) and doing it.
    public static let resolvePoints = ["resolve.after-journal"]

    /// Steps only a large change reaches on `kind`: a git commit of more than
    /// `GitPackWriter.looseLimit` new files writes a pack, and can die with libgit2's
    /// partial pack file on disk.
    public static func largeChangePoints(for kind: RemoteKind) -> [String] {
        kind == .git ? ["git.pack-appended"] : []
    }

    /// The step of a fetch from a repository on a local path (`GitLocalFetch`) between
    /// copying the objects and setting the tracking ref: a push landing there must not
    /// give the cache a tip whose objects were not copied.
    public static let localFetchPoints = ["git.fetch-before-tracking-ref"]

    /// The steps where a test holds a run (DOCSYNC_PAUSE_AT) to save, rename or delete a
    /// file under it (`EditsDuringRunTests`): between walking the tree and reading its
    /// files, between reading a changed file and stamping it, between the stamp's check
    /// and its swap (`FileSystem.replaceIfUnchanged`), between a pull's check of a file
    /// and the swap that writes or removes it, and just after that write.
    public static let editWindowPoints = [
        "record.after-walk", "record.before-stamp", "record.before-swap", "pull.before-swap", "pull.after-swap"
    ]

    /// The step of reading the sync state between reading `.docsync/state` and opening
    /// the base file it names: a run saving a newer state there removes that file.
    public static let stateReadPoints = ["state.before-base-file"]

    public struct Simulated: Error, CustomStringConvertible {
        public var point: String
        public var description: String { "simulated crash at \(point)" }
    }

    /// The step at which the work running in this task throws `Simulated`. A task-local
    /// value, so a test stopping its own sync never stops another test's.
    @TaskLocal public static var throwAt: String?
    private static let killAt = ProcessInfo.processInfo.environment["DOCSYNC_CRASH_AT"]

    private static let pauseAt = ProcessInfo.processInfo.environment["DOCSYNC_PAUSE_AT"]
    private static let pauseFile = ProcessInfo.processInfo.environment["DOCSYNC_PAUSE_FILE"]

    public static func hit(_ name: String) throws {
        if name == killAt { kill(getpid(), SIGKILL) }
        if name == pauseAt, let pauseFile { pause(until: pauseFile) }
        if let throwAt, name == throwAt { throw Simulated(point: name) }
    }

    private static func pause(until file: String) {
        close(open(file + ".reached", O_CREAT | O_WRONLY, 0o644))
        for _ in 0..<600 where access(file, F_OK) != 0 { usleep(100_000) }
    }
}
