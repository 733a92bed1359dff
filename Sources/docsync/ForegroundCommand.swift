import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a shell command the way `system(3)` does, for programs the user talks to (an
/// editor): in docsync's own process group, so it stays in the terminal's foreground and can
/// read the keyboard (Foundation's `Process` starts a new group, and a terminal editor is
/// then stopped by SIGTTIN and never returns), with stdin, stdout and stderr inherited.
/// While it runs docsync ignores SIGINT and SIGQUIT, so a Ctrl-C meant for the editor does
/// not kill docsync half-way.
enum ForegroundCommand {
  enum Outcome: Equatable {
    case exited(Int32)
    case signalled(Int32)
    case notStarted(Int32)
  }

  /// Runs `/bin/sh -c script sh arguments…` and waits for it.
  static func run(_ script: String, arguments: [String]) -> Outcome {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // The child gets the default actions back for the signals docsync ignores meanwhile.
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGQUIT)
    sigaddset(&defaults, SIGPIPE)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

    let words = ["/bin/sh", "-c", script, "sh"] + arguments
    let argv = words.map { strdup($0) } + [nil]
    defer { for word in argv { free(word) } }
    let previousInterrupt = signal(SIGINT, SIG_IGN)
    let previousQuit = signal(SIGQUIT, SIG_IGN)
    defer {
      signal(SIGINT, previousInterrupt)
      signal(SIGQUIT, previousQuit)
    }
    StandardOutput.flush()
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, environ)
    guard spawned == 0 else { return .notStarted(spawned) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
      guard errno == EINTR else { return .notStarted(errno) }
    }
    // The wait-status macros are not imported into Swift: low 7 bits = the signal, 0 = exited.
    let signalNumber = status & 0x7f
    return signalNumber == 0 ? .exited((status >> 8) & 0xff) : .signalled(signalNumber)
  }
}
