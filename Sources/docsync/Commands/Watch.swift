import ArgumentParser
import DocSyncKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the self-pipe SIGINT and SIGTERM are reported through (a signal
/// handler may only do async-signal-safe things: write(2) is one).
nonisolated(unsafe) private var watchSignalPipe: Int32 = -1

extension DocSync {
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch",
            abstract: "Sync whenever the tree changes, and pull the remote's changes regularly.",
            discussion: """
                Watches every folder of the tree with inotify and runs a sync (exactly what `docsync sync` does, \
                under the same tree lock) once edits have settled for watch.debounceMs (500 ms): a burst of \
                saves is one sync. When nothing changes here it syncs every watch.pullSeconds (60 s) to bring \
                in the remote's changes; a folder remote on this machine is watched too, so another \
                replica's push is pulled a moment after it lands (trigger remote). A sync's own writes \
                (ids stamped, pulled files) do not trigger another sync; an edit made during a sync does. The tree lock is held only during a sync, so `docsync sync`, `status` \
                or `edit` from another process work while it idles. A remote that is unreachable or busy \
                (what makes `sync` exit 75) is retried quietly, 5 s later doubling up to 5 minutes; edits \
                keep being recorded meanwhile. Prints one line per sync that changed something or whose \
                outcome differs from the previous one (time, trigger, counts, and the exit code `sync` \
                would give with its meaning); with --json one JSON object per line. SIGINT or SIGTERM stop \
                it after the sync under way finishes (exit 0). Reaching the inotify watch limit \
                (fs.inotify.max_user_watches) exits 1 and says how to raise it.
                """
        )
        @OptionGroup var global: GlobalOptions

        func run() throws {
            Output.configure(global)
            guard let layout = TreeLayout.find(from: global.workingDirectory) else {
                throw Workspace.Failure.notATree(global.workingDirectory)
            }
            let config = try Config.load(from: layout.config)
            guard config["remote.url"] != nil else { throw Workspace.Failure.noRemote }
            var loop = WatchLoop(
                root: layout.root, debounce: config.number("watch.debounceMs") / 1000,
                pullInterval: config.number("watch.pullSeconds"), global: global)
            // A folder remote on this machine is watched too: another replica's push is pulled
            // a moment after it lands, not at the next pull.
            loop.remoteWatcher = RemoteFolderWatcher(config: config)
            try loop.run()
        }
    }
}

/// The loop of `docsync watch`: block in poll() on the inotify descriptor and the signal
/// pipe until an edit settles, the pull interval passes, or a retry is due.
struct WatchLoop {
    let root: String
    let debounce: Double
    let pullInterval: Double
    let global: GlobalOptions

    typealias Trigger = WatchScheduler.Trigger

    /// Set when the remote is a folder on this machine.
    var remoteWatcher: RemoteFolderWatcher?
    /// The index the last sync left (nil when it failed): its own writes are checked against it.
    var lastIndex: StatCache? = nil

    /// The outcome of the last line printed, so that an unchanged one is not repeated.
    private var lastLogged: String?

    init(root: String, debounce: Double, pullInterval: Double, global: GlobalOptions) {
        self.root = root
        self.debounce = debounce
        self.pullInterval = pullInterval
        self.global = global
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    mutating func run() throws {
        let signalFd = try Self.installSignalPipe()
        let watcher = try Self.watchLimit { try TreeWatcher(root: root) }
        emitStart(folders: watcher.folderCount)

        var scheduler = WatchScheduler(debounce: debounce, pullInterval: pullInterval, now: Self.now())
        var stopSignal: Int32? = nil
        while stopSignal == nil {
            switch scheduler.decide(now: Self.now()) {
            case .wait(let until):
                stopSignal = try waitForEvents(until: until, watcher: watcher, signalFd: signalFd, into: &scheduler)
            case .syncNow(let trigger):
                try sync(trigger, watcher: watcher, into: &scheduler)
            }
        }
        emitStop(signal: stopSignal ?? SIGTERM)
    }

    /// Runs the sync that is due and tells the scheduler how it went.
    private mutating func sync(_ trigger: Trigger, watcher: TreeWatcher, into scheduler: inout WatchScheduler) throws {
        let (code, retryIn) = syncOnce(trigger: trigger, backoff: scheduler.nextRetryDelay)
        try noteEditsDuringSync(watcher, into: &scheduler)
        // This sync's own push replaced the remote's commit point: not news. (A push by
        // another replica during this sync waits for the next pull.)
        _ = remoteWatcher?.drain()
        scheduler.finished(trigger, retry: code == ExitStatus.tempFail || retryIn != nil, at: Self.now())
    }

    /// Blocks until an event, a signal or the `due` time: no CPU while idle. Gives the
    /// scheduler what happened; returns the signal that stops the loop, if one came.
    private mutating func waitForEvents(
        until due: Double, watcher: TreeWatcher, signalFd: Int32, into scheduler: inout WatchScheduler
    ) throws -> Int32? {
        let timeout = Int32(min(((due - Self.now()) * 1000).rounded(.up) + 1, Double(Int32.max)))
        var fds = [
            pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signalFd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: remoteWatcher?.fd ?? -1, events: Int16(POLLIN), revents: 0)
        ]
        if poll(&fds, 3, max(timeout, 0)) < 0 {
            if errno == EINTR { return nil }
            throw CommandFailure(message: "poll: \(String(cString: strerror(errno)))", code: .failure)
        }
        var stopSignal: Int32? = nil
        if fds[1].revents != 0 {
            var byte: UInt8 = 0
            if read(signalFd, &byte, 1) == 1 { stopSignal = Int32(byte) }
        }
        if fds[0].revents != 0 {
            let changes = try Self.watchLimit { try watcher.drain() }
            scheduler.treeChanged(relevant: changes.relevant, overflowed: changes.overflowed, at: Self.now())
        }
        if fds[2].revents != 0, remoteWatcher?.drain() == true {
            // Another replica pushed: pull once its push has settled, like an edit here.
            scheduler.remotePushed(at: Self.now())
        }
        return stopSignal
    }

    /// Reaching the inotify watch limit (fs.inotify.max_user_watches) is an error of its
    /// own (`watch-limit`): its message says how to raise the limit.
    private static func watchLimit<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as TreeWatcher.Failure {
            throw CommandFailure(message: failure.localizedDescription, code: .failure, errorCode: "watch-limit")
        }
    }

    /// SIGINT and SIGTERM as bytes on a pipe the loop polls (a handler may only write(2));
    /// returns the pipe's read end.
    private static func installSignalPipe() throws -> Int32 {
        var pipeFds: [Int32] = [-1, -1]
        guard pipe(&pipeFds) == 0 else {
            throw CommandFailure(message: "cannot create a pipe: \(String(cString: strerror(errno)))", code: .failure)
        }
        for fd in pipeFds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        watchSignalPipe = pipeFds[1]
        for signal in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(watchSignalPipe, &byte, 1)
            }
            // SA_RESTART: a sync under way is not disturbed; the loop sees the pipe after it.
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        // A parent may start us with them blocked (the mask is inherited through exec).
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        return pipeFds[0]
    }

    /// After a sync: its own writes (ids stamped, pulled versions) came back as events;
    /// they are not edits when every file is as the sync left it. An edit made meanwhile is.
    private func noteEditsDuringSync(_ watcher: TreeWatcher, into scheduler: inout WatchScheduler) throws {
        let own = try Self.watchLimit { try watcher.drain() }
        if own.relevant
            && (own.structural || !StatCache.unchangedSinceLastScan(root: root, paths: own.documents, known: lastIndex))
        {
            scheduler.treeChanged(relevant: true, overflowed: own.overflowed, at: Self.now())
        }
    }

    // MARK: One sync

    /// What one sync came to: the exit code `sync` would give, why, and its report (nil:
    /// it failed before it got anywhere).
    struct Outcome {
        var time: Int64
        var code = ExitStatus.ok
        var message: String?
        var report: SyncReport?
        var retryIn: Double?
    }

    /// Runs one sync like `docsync sync`; prints its line. Returns the exit code `sync`
    /// would give, and for a failure that is retried, the seconds until the retry.
    mutating func syncOnce(trigger: Trigger, backoff: Double) -> (ExitCode, Double?) {
        let outcome = runSync(backoff: backoff)
        for warning in outcome.report?.warnings ?? [] { Output.warning(warning) }
        if shouldTell(outcome, trigger: trigger) { tell(outcome, trigger: trigger) }
        return (outcome.code, outcome.retryIn)
    }

    /// Runs one sync like `docsync sync`.
    mutating func runSync(backoff: Double) -> Outcome {
        lastIndex = nil
        var outcome = Outcome(time: Int64(Date().timeIntervalSince1970 * 1000))
        do {
            let result = try Workspace.using(at: root, readOnly: false) { workspace in
                let result = try workspace.sync.run(.both)
                lastIndex = workspace.statCache
                return result
            }
            outcome.report = result
            if let unreachable = result.remoteUnreachable {
                outcome.code = ExitStatus.tempFail
                outcome.message = unreachable
            } else if let refused = result.refusedPush {
                outcome.code = ExitStatus.failure
                outcome.message =
                    "refused push: it would delete \(refused.count) of the remote's \(refused.total) documents (push.maxDeleteShare); run `docsync sync --force` or `\(refused.restoreCommand)`"
            } else if !result.problems.isEmpty {
                outcome.code = ExitStatus.failure
                outcome.message =
                    "\(result.problems.count) file(s) not valid documents, left untouched; everything else was synced"
            } else if !result.conflicts.isEmpty {
                outcome.code = ExitStatus.conflicts
            }
        } catch {
            outcome.code = exitCode(for: error)
            outcome.message = describe(error)
            // A failure before the sync got anywhere (damaged state, a remote gone for longer
            // than sync.maxOfflineDays) is retried too: it may be fixed by hand meanwhile.
            outcome.retryIn = backoff
        }
        if outcome.code == ExitStatus.tempFail {
            outcome.retryIn = backoff
            DeferredAttempt.record(treeContaining: root, command: "watch", reason: outcome.message ?? "try again later")
        }
        return outcome
    }

    /// Whether the sync gets a line: one that changed something, or whose outcome differs
    /// from the last one told (a remote that stays away, or a file that stays invalid, is
    /// not repeated at every retry or pull; a new count of remote changes a send-only
    /// replica holds aside is told), or asked for with --verbose.
    mutating func shouldTell(_ outcome: Outcome, trigger: Trigger) -> Bool {
        let report = outcome.report
        let changed =
            report.map { !$0.recorded.isEmpty || !$0.pulled.isEmpty || !$0.pushed.isEmpty || !$0.conflicts.isEmpty }
            ?? false
        // A remote that stays away is one outcome, whatever each attempt's message says.
        let key =
            outcome.code == ExitStatus.tempFail
            ? "75"
            : "\(outcome.code.rawValue) \(outcome.message ?? "") \(report?.problems.map(\.message) ?? [])"
                // A send-only replica says when the remote changes it holds aside change.
                + " \(report?.notApplied?.count ?? 0)"
        let tell: Bool
        if outcome.code == ExitStatus.tempFail && lastLogged == key {
            tell = global.verbose  // still away: quiet, even when edits were recorded meanwhile
        } else {
            tell = changed || key != lastLogged || trigger == .start || trigger == .overflow || global.verbose
        }
        if tell { lastLogged = key }
        return tell
    }

    /// Prints the sync's line (text or JSON) and, for an exit 1 or 3, its problems.
    func tell(_ outcome: Outcome, trigger: Trigger) {
        let (code, message, report, retryIn) = (outcome.code, outcome.message, outcome.report, outcome.retryIn)
        let meaning = ExitStatus.meaning(code)
        if code == ExitStatus.failure || code == ExitStatus.conflicts {
            for problem in report?.problems ?? [] { Output.problem(problem.message) }
        }
        if global.json {
            emitJSON(
                WatchSyncLine(
                    time: Timestamp.rfc3339(outcome.time), trigger: trigger.rawValue, exitCode: code.rawValue,
                    meaning: meaning, recorded: report?.recorded.count ?? 0, pulled: report?.pulled.count ?? 0,
                    pushed: report?.pushed.count ?? 0, conflicts: report?.conflicts.count ?? 0,
                    problems: report?.problems.map(\.message) ?? [], pendingAfter: report?.pendingAfter ?? 0,
                    message: message, retryInSeconds: retryIn.map { Int($0) }))
            return
        }
        if let report, global.verbose {
            for c in report.pulled { Output.line(SyncPrinter.changeLine(verb: "pull", c)) }
            for c in report.pushed { Output.line(SyncPrinter.changeLine(verb: "push", c)) }
        }
        var parts: [String] = ["not run"]
        if let report {
            parts = [
                "\(report.recorded.count) recorded", "\(report.pulled.count) pulled", "\(report.pushed.count) pushed"
            ]
            if !report.conflicts.isEmpty {
                parts.append("\(report.conflicts.count) conflict\(report.conflicts.count == 1 ? "" : "s")")
            }
            if let pending = report.pendingSummary { parts.append(pending) }
            if let held = report.notAppliedSummary { parts.append(held) }
        }
        var line =
            "\(Timestamp.rfc3339(outcome.time)) sync \(trigger.rawValue): \(parts.joined(separator: ", ")) -> exit \(code.rawValue) \(meaning)"
        if let message { line += ": \(message)" }
        if let retryIn { line += "; retrying in \(Int(retryIn)) s, then quietly until it works" }
        if code == ExitStatus.failure {
            Output.error(line)
        } else if code == ExitStatus.conflicts && global.quiet {
            Output.writeStderr("docsync: \(line)\n")
        } else {
            Output.line(line)
        }
        StandardOutput.flush()
    }

    // MARK: Lines

    func emitStart(folders: Int) {
        let time = Timestamp.rfc3339(Int64(Date().timeIntervalSince1970 * 1000))
        if global.json {
            emitJSON(
                WatchEventLine(
                    event: "watching", time: time, root: root, folders: folders,
                    debounceMs: Int(debounce * 1000), pullSeconds: pullInterval, signal: nil))
        } else {
            Output.line(
                "\(time) watching \(root): \(folders) folder\(folders == 1 ? "" : "s"), sync \(Int(debounce * 1000)) ms after edits settle, pull every \(Self.seconds(pullInterval))"
            )
            StandardOutput.flush()
        }
    }

    func emitStop(signal: Int32) {
        let time = Timestamp.rfc3339(Int64(Date().timeIntervalSince1970 * 1000))
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        if global.json {
            emitJSON(
                WatchEventLine(
                    event: "stopped", time: time, root: root, folders: nil, debounceMs: nil, pullSeconds: nil,
                    signal: name))
        } else {
            Output.line("\(time) stopped (\(name)); the last sync had finished")
            StandardOutput.flush()
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// One compact JSON object on one line, flushed.
    func emitJSON<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(JSONDocument(command: "watch", body: value)) else { return }
        print(String(decoding: data, as: UTF8.self))
        Output.printedJSON = true
        StandardOutput.flush()
    }
}
