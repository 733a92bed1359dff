import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Starts `/bin/sh -c script sh arguments…` with posix_spawn, in docsync's own process
/// group. Why not Foundation's `Process`: it starts a new group, and a program that reads
/// the terminal (an editor, a pager) is then stopped by SIGTTIN and never returns. Used by
/// ForegroundCommand (the editor) and Pager.
enum ShellSpawn {
    /// How the started program ended.
    enum Outcome: Equatable {
        case exited(Int32)
        case signalled(Int32)
        case notStarted(Int32)
    }

    /// posix_spawn's error number.
    struct SpawnFailure: Error { var code: Int32 }

    /// Starts the script; returns its pid, or the errno of the failure.
    /// - Parameters:
    ///   - environment: the child's environment (nil: docsync's own).
    ///   - stdin: a descriptor to become the child's stdin; `closing` are closed in the child.
    ///   - defaultSignals: signals docsync ignores that the child gets back at their default.
    static func start(
        _ script: String, arguments: [String] = [], environment: [String: String]? = nil,
        stdin: Int32? = nil, closing: [Int32] = [], defaultSignals: [Int32] = []
    ) -> Result<pid_t, SpawnFailure> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin { posix_spawn_file_actions_adddup2(&actions, stdin, STDIN_FILENO) }
        for fd in closing { posix_spawn_file_actions_addclose(&actions, fd) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if !defaultSignals.isEmpty {
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in defaultSignals { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        }

        let argv = (["/bin/sh", "-c", script, "sh"] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for word in argv + (envp ?? []) { free(word) } }
        StandardOutput.flush()
        var pid: pid_t = 0
        let spawned =
            envp.map { envp in posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp) }
            ?? posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        return spawned == 0 ? .success(pid) : .failure(SpawnFailure(code: spawned))
    }

    /// Waits for a started program (through EINTR).
    static func wait(_ pid: pid_t) -> Outcome {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return .notStarted(errno) }
        }
        // The wait-status macros are not imported into Swift: low 7 bits = the signal, 0 = exited.
        let signalNumber = status & 0x7f
        return signalNumber == 0 ? .exited((status >> 8) & 0xff) : .signalled(signalNumber)
    }
}
