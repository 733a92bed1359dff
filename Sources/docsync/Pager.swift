import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Long output through a pager, like git: only when stdout is a terminal; the command is
/// `$DOCSYNC_PAGER`, else `$PAGER`, else `less -FRX` if installed (it quits at once when the
/// text fits on one screen); empty or `cat` means none. stdout is pointed at the pager's input until
/// `finish()`, which waits for the reader to quit.
final class Pager {
    private let pid: pid_t

    private init(pid: pid_t) { self.pid = pid }

    static func start() -> Pager? {
        guard isatty(STDOUT_FILENO) != 0 else { return nil }
        let environment = ProcessInfo.processInfo.environment
        // The default only where less is installed: output must never vanish into a missing pager.
        let fallback = isInstalled("less", path: environment["PATH"]) ? "less -FRX" : ""
        let command = (environment["DOCSYNC_PAGER"] ?? environment["PAGER"] ?? fallback)
            .trimmingCharacters(in: .whitespaces)
        guard !command.isEmpty, command != "cat" else { return nil }
        var pagerEnvironment = environment
        if pagerEnvironment["LESS"] == nil { pagerEnvironment["LESS"] = "FRX" }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // In docsync's process group (ShellSpawn): less must stay in the terminal's foreground.
        let started = ShellSpawn.start(
            command, environment: pagerEnvironment, stdin: readEnd, closing: [readEnd, writeEnd])
        close(readEnd)
        guard case .success(let pid) = started else {
            close(writeEnd)
            return nil
        }
        StandardOutput.flush()
        dup2(writeEnd, STDOUT_FILENO)
        close(writeEnd)
        // A reader who quits early closes the pipe: the next write fails with EPIPE
        // (StandardOutput treats that as done) instead of killing docsync.
        signal(SIGPIPE, SIG_IGN)
        return Pager(pid: pid)
    }

    private static func isInstalled(_ program: String, path: String?) -> Bool {
        (path ?? "/usr/bin:/bin").split(separator: ":").contains {
            access("\($0)/\(program)", X_OK) == 0
        }
    }

    func finish() {
        StandardOutput.flush()
        close(STDOUT_FILENO)
        _ = ShellSpawn.wait(pid)
    }
}
