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
    // posix_spawn, not Process: the pager must stay in the terminal's foreground process
    // group (Process starts a new one, and less is then stopped when it reads the keyboard).
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, readEnd, STDIN_FILENO)
    posix_spawn_file_actions_addclose(&actions, readEnd)
    posix_spawn_file_actions_addclose(&actions, writeEnd)
    let words: [String] = ["/bin/sh", "-c", command]
    let settings: [String] = pagerEnvironment.map { "\($0.key)=\($0.value)" }
    let argv = words.map { strdup($0) } + [nil]
    let envp = settings.map { strdup($0) } + [nil]
    defer { for p in argv + envp { free(p) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, envp)
    close(readEnd)
    guard spawned == 0 else {
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
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
  }
}
