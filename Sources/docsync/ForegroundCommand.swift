import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a shell command the way `system(3)` does, for programs the user talks to (an
/// editor): in docsync's own process group (see ShellSpawn), so it stays in the terminal's
/// foreground and can read the keyboard, with stdin, stdout and stderr inherited. While it
/// runs docsync ignores SIGINT and SIGQUIT, so a Ctrl-C meant for the editor does not kill
/// docsync half-way.
enum ForegroundCommand {
    typealias Outcome = ShellSpawn.Outcome

    /// Runs `/bin/sh -c script sh arguments…` and waits for it.
    static func run(_ script: String, arguments: [String]) -> Outcome {
        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        // The child gets the default actions back for the signals docsync ignores meanwhile.
        switch ShellSpawn.start(script, arguments: arguments, defaultSignals: [SIGINT, SIGQUIT, SIGPIPE]) {
        case .failure(let failure): return .notStarted(failure.code)
        case .success(let pid): return ShellSpawn.wait(pid)
        }
    }
}
