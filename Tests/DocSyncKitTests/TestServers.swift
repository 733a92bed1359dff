// Real git servers on 127.0.0.1, started and stopped by the tests: `git daemon`, Debian's
// `sshd`, and smart HTTP (`git http-backend`) behind a small loopback HTTPS server with a
// self-signed CA. `scripts/install-test-servers.sh` installs what they need.
//
// Rules every server here follows:
// - it listens on 127.0.0.1 only, on a free port, and nothing here talks to any other address;
// - every process gets an isolated environment: HOME is a temp folder, no system or global
//   git config (this machine's system config rewrites some URLs), no ssh-agent, no proxies;
// - start waits (≤ 60 s: the machine may be loaded) until the port accepts connections, or
//   throws with the server's log;
// - each server runs under a tiny watchdog in its own process group: `stop()` (also called
//   from `deinit` and at process exit) kills the group, and the watchdog stops the server
//   if the test process dies without cleaning up.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct TestServerError: Error, CustomStringConvertible {
    var description: String
}

// MARK: - What a suite needs from the machine

/// Something a suite needs from the machine: a server binary, permission to mount a tmpfs,
/// the built docsync. On a developer's machine a missing one skips the suite, loudly (a
/// `SKIPPED: …` line on stdout, which scripts/reliability.sh collects); with CI=true it
/// fails the suite, so CI can never pass by running nothing.
struct Prerequisite: Sendable {
    var name: String
    /// Why it is missing; nil when it is there.
    var missing: String?

    static var requiredByCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// For `.enabled(if:)`: true when available, and always under CI=true (the suite then
    /// runs and `require()` fails it with the reason). A skip is announced.
    var runsHere: Bool {
        guard let missing else { return true }
        if Self.requiredByCI { return true }
        if Self.announced.firstTime(name) {
            print("SKIPPED: tests needing \(name) did not run: \(missing) (with CI=true they fail instead)")
            fflush(nil)
        }
        return false
    }

    /// Names whose skip was announced already (a suite's condition is checked per test).
    private final class Announced: @unchecked Sendable {
        private let lock = NSLock()
        private var names: Set<String> = []

        func firstTime(_ name: String) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return names.insert(name).inserted
        }
    }

    private static let announced = Announced()

    /// Throws, naming what is missing, when the prerequisite is not there; call it first in
    /// every test of a suite guarded by `runsHere`.
    func require() throws {
        guard let missing else { return }
        throw TestServerError(description: "this test needs \(name), which is unavailable: \(missing)")
    }

    private static func executables(_ paths: [String]) -> String? {
        let absent = paths.filter { !FileManager.default.isExecutableFile(atPath: $0) }
        guard !absent.isEmpty else { return nil }
        return "missing \(absent.joined(separator: ", ")) (scripts/install-test-servers.sh installs them)"
    }

    /// sshd for the ssh transport tests. libgit2 reads SSH_AUTH_SOCK from the environment and
    /// would offer an agent's keys first; those tests are about the configured key file.
    static let sshd: Prerequisite = {
        var problems = [executables(["/usr/sbin/sshd", "/usr/bin/ssh-keygen", "/usr/bin/python3"])].compactMap { $0 }
        if !(ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"] ?? "").isEmpty {
            problems.append("SSH_AUTH_SOCK is set (run without an ssh-agent)")
        }
        if getuid() != 0 && !FileManager.default.fileExists(atPath: "/run/sshd") {
            problems.append("/run/sshd is missing and this is not root")
        }
        return Prerequisite(name: "sshd", missing: problems.isEmpty ? nil : problems.joined(separator: "; "))
    }()

    /// The loopback HTTPS git server (openssl makes its certificates, python3 serves).
    static let httpsServer = Prerequisite(
        name: "the HTTPS git server",
        missing: executables(["/usr/bin/openssl", "/usr/bin/python3", "/usr/bin/git"]))
}

// MARK: - Loopback sockets

enum Loopback {
    static let host = "127.0.0.1"

    private static func address(port: Int) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr(host)
        return addr
    }

    /// A port the kernel says is free on 127.0.0.1 (bind port 0, read it back).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestServerError(description: "socket() failed: errno \(errno)") }
        defer { close(fd) }
        var addr = address(port: 0)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw TestServerError(description: "bind(127.0.0.1:0) failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestServerError(description: "getsockname failed: errno \(errno)") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:port right now.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = address(port: port)
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }
}

// MARK: - Running tools

/// An environment for child processes that knows nothing of this machine's user: the
/// given HOME, no system/global git config, no ssh-agent, no proxies, C locale.
func isolatedEnvironment(home: String, _ extra: [String: String] = [:]) -> [String: String] {
    var env: [String: String] = [
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": home,
        "LANG": "C",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_AUTHOR_NAME": "Plain Git", "GIT_AUTHOR_EMAIL": "plain@example.com",
        "GIT_COMMITTER_NAME": "Plain Git", "GIT_COMMITTER_EMAIL": "plain@example.com"
    ]
    if let tmp = ProcessInfo.processInfo.environment["TMPDIR"] { env["TMPDIR"] = tmp }
    for (key, value) in extra { env[key] = value }
    return env
}

struct ToolResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a tool to completion with the isolated environment; output goes through temp
/// files so no pipe can fill up.
@discardableResult
func runTool(
    _ executable: String, _ args: [String], in dir: String, home: String, env extra: [String: String] = [:],
    timeoutSeconds: Double = 300
) throws -> ToolResult {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("docsync-tool-\(UUID().uuidString)")
        .path
    _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
    _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
    defer {
        try? FileManager.default.removeItem(atPath: scratch + ".out")
        try? FileManager.default.removeItem(atPath: scratch + ".err")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = args
    process.currentDirectoryURL = URL(fileURLWithPath: dir)
    process.environment = isolatedEnvironment(home: home, extra)
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = FileHandle(forWritingAtPath: scratch + ".out")
    process.standardError = FileHandle(forWritingAtPath: scratch + ".err")
    try process.run()
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while process.isRunning {
        if Date() > deadline {
            kill(-process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestServerError(
                description: "\(executable) \(args.joined(separator: " ")) timed out after \(timeoutSeconds) s")
        }
        usleep(10_000)
    }
    let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    return ToolResult(status: process.terminationStatus, stdout: read(scratch + ".out"), stderr: read(scratch + ".err"))
}

/// Runs a tool and throws unless it exits 0; returns stdout.
@discardableResult
func mustRun(_ executable: String, _ args: [String], in dir: String, home: String, env: [String: String] = [:]) throws
    -> String
{
    let result = try runTool(executable, args, in: dir, home: home, env: env)
    guard result.status == 0 else {
        throw TestServerError(
            description: "\(executable) \(args.joined(separator: " ")) exited \(result.status): \(result.stderr)")
    }
    return result.stdout
}

/// The git CLI as an independent client, isolated from this machine's git config.
@discardableResult
func plainGit(_ args: [String], in dir: String, home: String) throws -> String {
    try mustRun("/usr/bin/git", args, in: dir, home: home)
}

/// The user the tests run as (sshd logs this user in).
var currentUserName: String {
    if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
    return NSUserName()
}

func writeFile(_ path: String, _ text: String, mode: Int? = nil) throws {
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    if let mode { chmod(path, mode_t(mode)) }
}

func readFile(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

// MARK: - Server processes

/// Every server process still running, so that an exiting test process stops them.
private final class RunningServers: @unchecked Sendable {
    static let shared = RunningServers()
    private let lock = NSLock()
    private var groups: Set<Int32> = []
    private var hookInstalled = false

    func add(_ pgid: Int32) {
        lock.lock()
        defer { lock.unlock() }
        groups.insert(pgid)
        if !hookInstalled {
            hookInstalled = true
            atexit { RunningServers.shared.killAll() }
        }
    }

    func remove(_ pgid: Int32) {
        lock.lock()
        defer { lock.unlock() }
        groups.remove(pgid)
    }

    func killAll() {
        lock.lock()
        defer { lock.unlock() }
        for group in groups { kill(-group, SIGKILL) }
        groups.removeAll()
    }
}

/// Runs the server command as its child and exits (stopping it) when the test process
/// that started it goes away, even if that process was killed.
private let watchdogScript = """
    import os, signal, subprocess, sys, time
    parent = os.getppid()
    child = subprocess.Popen(sys.argv[1:])
    def stop(*_):
        try:
            child.terminate()
            child.wait(3)
        except Exception:
            child.kill()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        code = child.poll()
        if code is not None:
            os._exit(code)
        if os.getppid() != parent:
            stop()
        time.sleep(0.2)
    """

/// One server process in its own process group (Foundation's Process makes one per child).
final class ServerProcess: @unchecked Sendable {
    let name: String
    let logPath: String
    private let process = Process()

    /// Starts `command` under the watchdog; output goes to `logPath`.
    init(name: String, command: [String], home: String, env: [String: String] = [:], workDir: String, logPath: String)
        throws
    {
        self.name = name
        self.logPath = logPath
        let watchdog = workDir + "/watchdog.py"
        if !FileManager.default.fileExists(atPath: watchdog) { try writeFile(watchdog, watchdogScript) }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-u", watchdog] + command
        process.currentDirectoryURL = URL(fileURLWithPath: workDir)
        process.environment = isolatedEnvironment(home: home, env)
        process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardOutput = log
        process.standardError = log
        try process.run()
        RunningServers.shared.add(process.processIdentifier)
    }

    var isRunning: Bool { process.isRunning }

    var log: String { readFile(logPath) }

    /// Waits until 127.0.0.1:port accepts connections (or `ready` says so), at most `seconds`.
    func waitUntilListening(port: Int, seconds: Double = 60, ready: (() -> Bool)? = nil) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !process.isRunning {
                throw TestServerError(
                    description:
                        "\(name) exited (status \(process.terminationStatus)) before listening on 127.0.0.1:\(port):\n\(log)"
                )
            }
            if ready?() ?? true, Loopback.accepts(port: port) { return }
            usleep(20_000)
        }
        stop()
        throw TestServerError(
            description: "\(name) did not accept connections on 127.0.0.1:\(port) within \(seconds) s:\n\(log)")
    }

    /// Kills the process group: TERM, then KILL after 3 s.
    func stop() {
        let pid = process.processIdentifier
        guard pid > 0 else { return }
        if process.isRunning {
            kill(-pid, SIGTERM)
            let deadline = Date().addingTimeInterval(3)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning {
                kill(-pid, SIGKILL)
                process.waitUntilExit()
            }
        }
        kill(-pid, SIGKILL)  // anything left in the group
        RunningServers.shared.remove(pid)
    }

    deinit { stop() }
}

/// Tries `attempts` free ports (another process may grab one between picking and binding).
private func startOnFreePort<T>(attempts: Int = 3, _ start: (Int) throws -> T) throws -> T {
    var lastError: Error = TestServerError(description: "no port tried")
    for _ in 0..<attempts {
        do { return try start(try Loopback.freePort()) } catch { lastError = error }
    }
    throw lastError
}

// MARK: - git daemon

/// `git daemon` serving bare repositories under `base` (push enabled) on 127.0.0.1.
final class GitDaemon: @unchecked Sendable {
    let folder = TempFolder("git-daemon")
    let base: String
    let home: String
    private(set) var port = 0
    private var server: ServerProcess?

    init(base: String? = nil) throws {
        self.base = base ?? folder.sub("repos")
        home = folder.sub("home")
        try FileManager.default.createDirectory(atPath: self.base, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try startOnFreePort { port in
            self.port = port
            try start()
        }
    }

    /// A new empty bare repository `<name>.git` (branch main); returns its git:// URL.
    @discardableResult
    func makeRepository(_ name: String) throws -> String {
        try plainGit(["init", "-q", "--bare", "-b", "main", repositoryPath(name)], in: base, home: home)
        return url(name)
    }

    func repositoryPath(_ name: String) -> String { base + "/\(name).git" }

    func url(_ name: String) -> String { "git://127.0.0.1:\(port)/\(name).git" }

    /// Starts (or restarts) the daemon on the same port.
    func start() throws {
        guard server == nil else { return }
        let process = try ServerProcess(
            name: "git daemon",
            command: [
                "/usr/bin/git", "daemon", "--export-all", "--enable=receive-pack", "--base-path=\(base)",
                "--listen=127.0.0.1", "--port=\(port)", "--reuseaddr", "--pid-file=\(folder.sub("daemon.pid"))"
            ],
            home: home, workDir: folder.path, logPath: folder.sub("daemon.log"))
        do { try process.waitUntilListening(port: port) } catch {
            process.stop()
            throw error
        }
        server = process
    }

    func stop() {
        guard let running = server else { return }
        running.stop()
        server = nil
        // The listening socket closes only once the killed daemon has finished exiting,
        // a moment after the signal on a loaded machine: wait for that (bounded), so a
        // stopped daemon is really stopped when this returns.
        let deadline = Date().addingTimeInterval(20)
        while Loopback.accepts(port: port) && Date() < deadline { usleep(20_000) }
    }

    var log: String { readFile(folder.sub("daemon.log")) }

    deinit { stop() }
}

// MARK: - sshd

/// Debian's OpenSSH server on 127.0.0.1 with a throwaway ed25519 host key and one
/// authorized throwaway ed25519 user key; logs in the current user (root in CI).
final class SSHServer: @unchecked Sendable {
    let folder = TempFolder("sshd")
    let home: String
    let user = currentUserName
    private(set) var port = 0
    private var server: ServerProcess?

    var hostKey: String { folder.sub("ssh_host_ed25519_key") }
    /// The authorized user key (private key file; `.pub` next to it).
    var userKey: String { folder.sub("client/id_ed25519") }
    /// known_hosts trusting this server's host key for `[127.0.0.1]:port`.
    var knownHosts: String { folder.sub("client/known_hosts") }
    var reposFolder: String { folder.sub("repos") }

    init() throws {
        home = folder.sub("home")
        for dir in [home, reposFolder, folder.sub("client")] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
        // sshd's privilege separation needs /run/sshd.
        if !FileManager.default.fileExists(atPath: "/run/sshd") {
            try FileManager.default.createDirectory(
                atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        try Self.makeKey(hostKey, comment: "docsync-test-host", home: home)
        try Self.makeKey(userKey, comment: "docsync-test-user", home: home)
        try writeFile(folder.sub("authorized_keys"), readFile(userKey + ".pub"), mode: 0o600)
        try startOnFreePort { port in
            self.port = port
            try start()
        }
        try writeFile(knownHosts, "[127.0.0.1]:\(port) \(publicKey(hostKey + ".pub"))\n", mode: 0o644)
    }

    static func makeKey(_ path: String, comment: String, home: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try mustRun(
            "/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", path], in: "/", home: home)
    }

    /// `ssh-ed25519 AAAA…` (type and base64, no comment) of a .pub file.
    func publicKey(_ pubFile: String) -> String {
        readFile(pubFile).split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// The base64 part of a .pub file.
    func publicKeyBase64(_ pubFile: String) -> String {
        readFile(pubFile).split(separator: " ").dropFirst().first.map(String.init) ?? "?"
    }

    /// `SHA256:…` of the host key, as ssh-keygen -l prints it.
    func hostKeyFingerprint() throws -> String {
        let out = try mustRun(
            "/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", hostKey + ".pub"], in: "/", home: home)
        return out.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
    }

    /// A new empty bare repository; returns its absolute path.
    @discardableResult
    func makeRepository(_ name: String) throws -> String {
        let path = reposFolder + "/\(name).git"
        try plainGit(["init", "-q", "--bare", "-b", "main", path], in: reposFolder, home: home)
        return path
    }

    /// `ssh://user@127.0.0.1:port/<abs path>`.
    func url(_ name: String) -> String { "ssh://\(user)@127.0.0.1:\(port)\(reposFolder)/\(name).git" }

    func start() throws {
        guard server == nil else { return }
        let config = """
            Port \(port)
            ListenAddress 127.0.0.1
            AddressFamily inet
            HostKey \(hostKey)
            PidFile \(folder.sub("sshd.pid"))
            AuthorizedKeysFile \(folder.sub("authorized_keys"))
            AuthenticationMethods publickey
            PubkeyAuthentication yes
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            AllowUsers \(user)
            StrictModes no
            UsePAM no
            UseDNS no
            X11Forwarding no
            AllowTcpForwarding no
            AllowAgentForwarding no
            PrintMotd no
            LogLevel VERBOSE
            """
        try writeFile(folder.sub("sshd_config"), config + "\n", mode: 0o600)
        let process = try ServerProcess(
            name: "sshd",
            command: ["/usr/sbin/sshd", "-D", "-e", "-f", folder.sub("sshd_config")],
            home: home, workDir: folder.path, logPath: folder.sub("sshd.log"))
        do { try process.waitUntilListening(port: port) } catch {
            process.stop()
            throw error
        }
        server = process
    }

    func stop() {
        server?.stop()
        server = nil
    }

    var log: String { readFile(folder.sub("sshd.log")) }

    deinit { stop() }
}

// MARK: - smart HTTP over HTTPS

/// The loopback HTTPS front end for `git http-backend`: Basic auth with a fixed token as
/// the password (any user), CGI environment and body passed through, CGI headers relayed.
private let httpsGitServerScript = #"""
    import base64, os, ssl, subprocess, sys, urllib.parse
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    project_root, cert_file, key_file, token, port_file = sys.argv[1:6]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            # Never log headers (they carry the token).
            sys.stderr.write("https-git: %s\n" % (fmt % args))

        def do_GET(self):
            self.serve_git()

        def do_POST(self):
            self.serve_git()

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                parts = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def user(self):
            header = self.headers.get("Authorization", "")
            if not header.startswith("Basic "):
                return None
            try:
                name, _, password = base64.b64decode(header[6:]).decode("utf-8").partition(":")
            except Exception:
                return None
            return (name or "git") if password == token else None

        def reply(self, status, reason, headers, body):
            self.send_response(status, reason)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def serve_git(self):
            body = self.read_body()
            user = self.user()
            if user is None:
                self.close_connection = True
                self.reply(401, "Unauthorized", [("WWW-Authenticate", 'Basic realm="git"'), ("Content-Type", "text/plain"),
                                                 ("Connection", "close")], b"authentication required\n")
                return
            path, _, query = self.path.partition("?")
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": os.environ.get("HOME", project_root),
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_PROJECT_ROOT": project_root,
                "GIT_HTTP_EXPORT_ALL": "1",
                "REMOTE_USER": user,
                "REMOTE_ADDR": "127.0.0.1",
                "GATEWAY_INTERFACE": "CGI/1.1",
                "SERVER_PROTOCOL": "HTTP/1.1",
                "SERVER_NAME": "127.0.0.1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": urllib.parse.unquote(path),
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
            }
            for header in ("Content-Encoding", "Git-Protocol", "Accept"):
                if header in self.headers:
                    env["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
            result = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env, timeout=60)
            if result.stderr:
                sys.stderr.write(result.stderr.decode("utf-8", "replace"))
            out = result.stdout
            end, skip = out.find(b"\r\n\r\n"), 4
            if end < 0:
                end, skip = out.find(b"\n\n"), 2
            if end < 0:
                self.reply(500, "Internal Server Error", [("Content-Type", "text/plain")], b"http-backend gave no headers\n")
                return
            status, reason, headers = 200, "OK", []
            for line in out[:end].decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                value = value.strip()
                if name.lower() == "status":
                    code, _, reason = value.partition(" ")
                    status = int(code)
                elif name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    headers.append((name, value))
            self.reply(status, reason or None, headers, out[end + skip:])

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    # The handshake happens in the handler thread, so a client that refuses the certificate
    # (or a bare connect probe) never blocks the accept loop.
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(httpd.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    httpd.serve_forever()
    """#

/// Smart HTTP (`git http-backend`) behind a loopback HTTPS server whose certificate comes
/// from a throwaway CA; every request needs `Authorization: Basic` with `token` as password.
final class HTTPSGitServer: @unchecked Sendable {
    let folder = TempFolder("https-git")
    let home: String
    let token: String
    private(set) var port = 0
    private var server: ServerProcess?

    var reposFolder: String { folder.sub("repos") }
    /// The CA certificate (PEM) that signed the server's certificate.
    var caFile: String { folder.sub("tls/ca.pem") }

    init(token: String = "tok-" + UUID().uuidString.lowercased()) throws {
        self.token = token
        home = folder.sub("home")
        for dir in [home, reposFolder, folder.sub("tls")] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
        try makeCertificates()
        try writeFile(folder.sub("https_git_server.py"), httpsGitServerScript)
        let portFile = folder.sub("port")
        let process = try ServerProcess(
            name: "https git server",
            command: [
                "/usr/bin/python3", "-u", folder.sub("https_git_server.py"), reposFolder,
                folder.sub("tls/server.pem"), folder.sub("tls/server.key"), token, portFile
            ],
            home: home, workDir: folder.path, logPath: folder.sub("server.log"))
        // The script binds port 0 and writes the port it got.
        let deadline = Date().addingTimeInterval(60)
        while port == 0 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let p = Int(text) {
                port = p
                break
            }
            if !process.isRunning || Date() > deadline {
                let log = process.log
                process.stop()
                throw TestServerError(description: "https git server did not start within 60 s:\n\(log)")
            }
            usleep(20_000)
        }
        try process.waitUntilListening(port: port, seconds: max(1, deadline.timeIntervalSinceNow))
        server = process
    }

    private func makeCertificates() throws {
        let tls = folder.sub("tls")
        let openssl = "/usr/bin/openssl"
        try writeFile(
            tls + "/server.ext",
            """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature, keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:127.0.0.1

            """)
        try mustRun(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj",
                "/CN=docsync test CA \(UUID().uuidString.prefix(8))",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
            ],
            in: tls, home: home)
        try mustRun(
            openssl,
            [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"
            ], in: tls, home: home)
        try mustRun(
            openssl,
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-set_serial", String(Int.random(in: 1000...999_999_999)), "-days", "2", "-extfile", "server.ext",
                "-out", "server.pem"
            ], in: tls, home: home)
    }

    /// A new empty bare repository that accepts pushes over HTTP; returns its path.
    @discardableResult
    func makeRepository(_ name: String) throws -> String {
        let path = reposFolder + "/\(name).git"
        try plainGit(["init", "-q", "--bare", "-b", "main", path], in: reposFolder, home: home)
        try plainGit(["config", "http.receivepack", "true"], in: path, home: home)
        return path
    }

    func url(_ name: String) -> String { "https://127.0.0.1:\(port)/\(name).git" }

    func stop() {
        server?.stop()
        server = nil
    }

    var log: String { readFile(folder.sub("server.log")) }

    deinit { stop() }
}
