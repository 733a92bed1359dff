import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Long output through a pager, like git: only when stdout is a terminal; the command is
/// `$DOCSYNC_PAGER`, else `$PAGER`, else `less -FRX` (quits at once when the text fits on
/// one screen); empty or `cat` means none. stdout is pointed at the pager's input until
/// `finish()`, which waits for the reader to quit.
final class Pager {
  private let process: Process

  private init(process: Process) { self.process = process }

  static func start() -> Pager? {
    guard isatty(STDOUT_FILENO) != 0 else { return nil }
    let environment = ProcessInfo.processInfo.environment
    let command = (environment["DOCSYNC_PAGER"] ?? environment["PAGER"] ?? "less -FRX")
      .trimmingCharacters(in: .whitespaces)
    guard !command.isEmpty, command != "cat" else { return nil }
    let pipe = Pipe()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    process.standardInput = pipe.fileHandleForReading
    var pagerEnvironment = environment
    if pagerEnvironment["LESS"] == nil { pagerEnvironment["LESS"] = "FRX" }
    process.environment = pagerEnvironment
    do { try process.run() } catch { return nil }
    StandardOutput.flush()
    dup2(pipe.fileHandleForWriting.fileDescriptor, STDOUT_FILENO)
    try? pipe.fileHandleForWriting.close()
    try? pipe.fileHandleForReading.close()
    // A reader who quits early closes the pipe: the next write fails with EPIPE
    // (StandardOutput treats that as done) instead of killing docsync.
    signal(SIGPIPE, SIG_IGN)
    return Pager(process: process)
  }

  func finish() {
    StandardOutput.flush()
    close(STDOUT_FILENO)
    process.waitUntilExit()
  }
}
