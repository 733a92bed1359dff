// Git remotes over real network transports, each served on 127.0.0.1 by a server the test
// starts and stops (TestServers.swift): documents round-trip between two replicas through
// the engine API, and the failure modes (daemon down, race, unknown/changed host key, bad
// key, untrusted certificate, bad token) give the errors the spec asks for, without ever
// showing a secret.

import Crypto
import Foundation
import Testing

@testable import DocSyncKit

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Helpers

/// Replicas of one git URL, made and synced through the engine API, with the config keys
/// a transport needs (remote.sshKey, remote.knownHosts, remote.caFile) set before the
/// first sync.
final class TransportReplicas {
    let folder = TempFolder("transport-replicas")
    let url: String
    let config: [String: String]
    var home: String { folder.sub("home") }

    init(url: String, config: [String: String] = [:]) throws {
        self.url = url
        self.config = config
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    func make(_ name: String) throws -> String {
        let dir = folder.sub(name)
        let (ws, _) = try Workspace.initialize(at: dir, remoteURL: url, kind: .git, replicaName: name)
        defer { ws.close() }
        for (key, value) in config.sorted(by: { $0.key < $1.key }) { try ws.settings.set(key, value) }
        return dir
    }

    @discardableResult
    func sync(_ dir: String) throws -> SyncReport {
        let ws = try Workspace.open(at: dir, readOnly: false)
        defer { ws.close() }
        return try ws.sync.run(.both)
    }

    /// The error a sync throws (nil if it did not throw), with its user-facing message.
    func syncError(_ dir: String) -> (error: Error, message: String)? {
        do {
            try sync(dir)
            return nil
        } catch {
            return (error, message(of: error))
        }
    }

    func pendingCount(_ dir: String) throws -> Int {
        let ws = try Workspace.open(at: dir, readOnly: true)
        defer { ws.close() }
        return try ws.sync.status().pending.count
    }

    func write(_ dir: String, _ relative: String, _ text: String) {
        let path = dir + "/" + relative
        try! FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func read(_ dir: String, _ relative: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: dir + "/" + relative))).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Document files of a tree (not .docsync/) and their text.
    func snapshot(_ dir: String) -> [String: String] {
        var result: [String: String] = [:]
        for file in TreeWalker(root: dir, ignore: IgnoreRules(text: "")).walk().files {
            result[file.path] = read(dir, file.path)
        }
        return result
    }
}

/// What a user would read for this error.
func message(of error: Error) -> String {
    (error as? LocalizedError)?.errorDescription ?? "\(error)"
}

/// Every file under `root` (recursively) whose bytes contain `needle`.
func filesContaining(_ needle: String, under root: String) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    var hits: [String] = []
    let pattern = Data(needle.utf8)
    for case let relative as String in walker {
        let path = root + "/" + relative
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue,
            let data = FileManager.default.contents(atPath: path)
        else { continue }
        if data.range(of: pattern) != nil { hits.append(relative) }
    }
    return hits
}

/// The commits on `main` of a bare repository (subjects, newest first); empty if the
/// branch does not exist (nothing was ever written).
func commitSubjects(bareRepository path: String, home: String) throws -> [String] {
    let exists = try runTool(
        "/usr/bin/git", ["--git-dir", path, "rev-parse", "--verify", "-q", "refs/heads/main"], in: "/", home: home)
    guard exists.status == 0 else { return [] }
    return try plainGit(["--git-dir", path, "log", "--format=%s", "main"], in: "/", home: home)
        .split(separator: "\n").map(String.init)
}

/// The built `docsync` binary, if there is one (DOCSYNC_BIN or <package>/.build/debug/docsync).
let docsyncBinary: String? = {
    if let path = ProcessInfo.processInfo.environment["DOCSYNC_BIN"], !path.isEmpty { return path }
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    let path = url.path + "/.build/debug/docsync"
    return FileManager.default.isExecutableFile(atPath: path) ? path : nil
}()

extension Prerequisite {
    /// The built binary, for cases that need an environment of their own (a credential):
    /// each run gets it as a child process, and this process's environment stays untouched.
    static let docsync = Prerequisite(
        name: "the built docsync binary",
        missing: docsyncBinary.map { path in
            FileManager.default.isExecutableFile(atPath: path) ? nil : "\(path) is not executable"
        } ?? "set DOCSYNC_BIN or run `swift build` first")
}

/// Secrets an error message must never contain: the lines of a private key file and the
/// base64 of public keys.
func keyMaterial(privateKey: String) -> [String] {
    var secrets = readFile(privateKey).split(separator: "\n").map(String.init).filter {
        !$0.hasPrefix("-----") && $0.count >= 16
    }
    if let pub = readFile(privateKey + ".pub").split(separator: " ").dropFirst().first { secrets.append(String(pub)) }
    return secrets
}

/// A document's text.
func doc(_ name: String) -> String { "{\n  \"name\": \"\(name)\"\n}\n" }

/// Every transport test, nested here so that `swift test --filter GitTransport` runs them
/// all. Each test starts its own servers and stops them when it ends, even on failure. The
/// time limit only catches a hang: a loaded machine may take far longer than usual.
@Suite(.timeLimit(.minutes(5))) enum GitTransportTests {}

// MARK: - git daemon

extension GitTransportTests {
    @Suite(.serialized) struct Daemon {
        @Test func twoReplicasSyncBothWaysThroughGitDaemon() throws {
            let daemon = try GitDaemon()
            defer { daemon.stop() }
            let url = try daemon.makeRepository("docs")
            let reps = try TransportReplicas(url: url)

            let a = try reps.make("a")
            reps.write(a, "people/ann.json", doc("Ann"))
            let first = try reps.sync(a)
            #expect(first.pushed.map(\.path) == ["people/ann.json"])
            #expect(first.remoteUnreachable == nil)

            let b = try reps.make("b")
            let pulled = try reps.sync(b)
            #expect(pulled.pulled.map(\.path) == ["people/ann.json"])
            #expect(reps.snapshot(a) == reps.snapshot(b))

            reps.write(
                b, "people/ann.json",
                reps.read(b, "people/ann.json")!.replacingOccurrences(of: "\"Ann\"", with: "\"Anna\""))
            reps.write(b, "people/bob.json", doc("Bob"))
            let second = try reps.sync(b)
            #expect(Set(second.pushed.map(\.path)) == ["people/ann.json", "people/bob.json"])
            try reps.sync(a)
            #expect(field(reps.read(a, "people/ann.json"), "name") == "Anna")
            #expect(field(reps.read(a, "people/bob.json"), "name") == "Bob")
            #expect(reps.snapshot(a) == reps.snapshot(b))

            // Plain git, over the same git:// URL, sees a normal repository.
            let plain = reps.folder.sub("plain")
            try plainGit(["clone", "-q", url, plain], in: reps.folder.path, home: reps.home)
            #expect(reps.read(plain, "people/bob.json") == reps.read(a, "people/bob.json"))
            try plainGit(["fsck", "--strict"], in: plain, home: reps.home)
            #expect(try commitSubjects(bareRepository: daemon.repositoryPath("docs"), home: reps.home).count == 2)
        }

        @Test func stoppedDaemonLeavesChangesPendingAndRestartSendsThem() throws {
            let daemon = try GitDaemon()
            defer { daemon.stop() }
            let url = try daemon.makeRepository("docs")
            let reps = try TransportReplicas(url: url)
            let a = try reps.make("a")
            reps.write(a, "one.json", doc("one"))
            try reps.sync(a)
            let b = try reps.make("b")
            try reps.sync(b)

            daemon.stop()
            #expect(!Loopback.accepts(port: daemon.port))
            reps.write(a, "two.json", doc("two"))
            let offline = try reps.sync(a)
            let unreachable = try #require(offline.remoteUnreachable, "a stopped daemon is 'unreachable', not an error")
            #expect(unreachable.contains("git://127.0.0.1:\(daemon.port)/docs.git"))
            #expect(offline.pushed.isEmpty)
            #expect(offline.recorded.map(\.path) == ["two.json"])
            #expect(offline.pendingAfter == 1)
            #expect(try reps.pendingCount(a) == 1)
            #expect(try commitSubjects(bareRepository: daemon.repositoryPath("docs"), home: reps.home).count == 1)

            // The command line maps that to exit 75 (try again later).
            if Prerequisite.docsync.runsHere {
                try Prerequisite.docsync.require()
                let cli = try runTool(docsyncBinary!, ["sync"], in: a, home: reps.home)
                #expect(cli.status == 75, "docsync sync with the daemon down: \(cli.stdout)\(cli.stderr)")
                #expect(try reps.pendingCount(a) == 1)
            }

            try daemon.start()  // same port
            let online = try reps.sync(a)
            #expect(online.remoteUnreachable == nil)
            #expect(online.pushed.map(\.path) == ["two.json"])
            #expect(online.pendingAfter == 0)
            let other = try reps.sync(b)
            #expect(other.pulled.map(\.path) == ["two.json"])
            #expect(reps.snapshot(a) == reps.snapshot(b))
        }

        /// Two replicas with different changes push at the same moment, from two threads: one
        /// push is refused (the branch moved), fetches, reconciles and retries; no commit is lost.
        @Test func twoReplicasPushingAtTheSameMomentBothLand() throws {
            let daemon = try GitDaemon()
            defer { daemon.stop() }
            let url = try daemon.makeRepository("docs")
            let reps = try TransportReplicas(url: url)
            let a = try reps.make("a")
            reps.write(a, "base.json", doc("base"))
            try reps.sync(a)
            let b = try reps.make("b")
            try reps.sync(b)

            final class Outcome: @unchecked Sendable {
                let lock = NSLock()
                var reports: [String: SyncReport] = [:]
                var errors: [String: String] = [:]
            }
            let rounds = 3
            for round in 1...rounds {
                reps.write(a, "from-a-\(round).json", doc("a\(round)"))
                reps.write(b, "from-b-\(round).json", doc("b\(round)"))
                let outcome = Outcome()
                let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0),
                    done = DispatchSemaphore(value: 0)
                for (name, dir) in [("a", a), ("b", b)] {
                    let thread = Thread {
                        defer { done.signal() }
                        let record = { (report: SyncReport?, error: Error?) in
                            outcome.lock.lock()
                            defer { outcome.lock.unlock() }
                            if let report { outcome.reports[name] = report }
                            if let error { outcome.errors[name] = message(of: error) }
                        }
                        let ws: Workspace
                        do { ws = try Workspace.open(at: dir, readOnly: false) } catch {
                            record(nil, error)
                            ready.signal()
                            return
                        }
                        defer { ws.close() }
                        ready.signal()
                        go.wait()
                        do { record(try ws.sync.run(.both), nil) } catch { record(nil, error) }
                    }
                    thread.start()
                }
                for _ in 0..<2 { #expect(ready.wait(timeout: .now() + 60) == .success) }
                go.signal()
                go.signal()
                for _ in 0..<2 { #expect(done.wait(timeout: .now() + 300) == .success) }

                #expect(outcome.errors.isEmpty, "round \(round): \(outcome.errors)")
                #expect(outcome.reports["a"]?.pushed.map(\.path) == ["from-a-\(round).json"], "round \(round)")
                #expect(outcome.reports["b"]?.pushed.map(\.path) == ["from-b-\(round).json"], "round \(round)")
                #expect(outcome.reports.values.allSatisfy { $0.remoteUnreachable == nil && $0.conflicts.isEmpty })
                // Both started from the same commit: the later push was refused (or saw the
                // other's commit first) and reconciled, so exactly one of them pulled the other's change.
                let aPulledB = outcome.reports["a"]?.pulled.map(\.path).contains("from-b-\(round).json") == true
                let bPulledA = outcome.reports["b"]?.pulled.map(\.path).contains("from-a-\(round).json") == true
                #expect(
                    aPulledB != bPulledA, "round \(round): a pulled b's change: \(aPulledB), b pulled a's: \(bPulledA)")
            }

            // A fresh clone over git:// holds every change, and the history has every commit.
            let fresh = reps.folder.sub("fresh")
            try plainGit(["clone", "-q", url, fresh], in: reps.folder.path, home: reps.home)
            for round in 1...rounds {
                #expect(field(reps.read(fresh, "from-a-\(round).json"), "name") == "a\(round)")
                #expect(field(reps.read(fresh, "from-b-\(round).json"), "name") == "b\(round)")
            }
            let log = try plainGit(["log", "--format=%s", "main"], in: fresh, home: reps.home).split(separator: "\n")
            #expect(log.count == 1 + 2 * rounds, "\(log)")
            #expect(log.filter { $0.hasSuffix("from a") }.count == 1 + rounds)
            #expect(log.filter { $0.hasSuffix("from b") }.count == rounds)
            try plainGit(["fsck", "--strict"], in: fresh, home: reps.home)

            try reps.sync(a)
            try reps.sync(b)
            #expect(reps.snapshot(a) == reps.snapshot(b))
            #expect(reps.snapshot(a).count == 1 + 2 * rounds)
        }
    }
}

// MARK: - ssh

extension GitTransportTests {
    @Suite struct KnownHostsMatching {
        let key: [UInt8] = Array("host-key-bytes".utf8)
        let other: [UInt8] = Array("other-key-bytes".utf8)

        func knownHosts(_ text: String) throws -> KnownHosts {
            let folder = TempFolder("known-hosts")
            try writeFile(folder.sub("known_hosts"), text)
            return KnownHosts(path: folder.sub("known_hosts"))
        }

        func line(_ hosts: String, _ key: [UInt8], marker: String = "") -> String {
            (marker.isEmpty ? "" : marker + " ") + hosts + " ssh-ed25519 " + Data(key).base64EncodedString() + "\n"
        }

        /// OpenSSH patterns: only `*` and `?` are special; `[host]:port` is literal (a path
        /// glob would read the brackets as a character class and never match).
        @Test func patternsFollowOpenSSH() throws {
            let hosts = try knownHosts(
                line("[127.0.0.1]:2222", key) + line("*.example.com,!bad.example.com", key) + line("h?st", key))
            #expect(hosts.verify(host: "127.0.0.1", port: 2222, key: key) == .trusted)
            #expect(hosts.verify(host: "127.0.0.1", port: 2223, key: key) == .unknown)
            #expect(hosts.verify(host: "127.0.0.1", port: 22, key: key) == .unknown)
            #expect(hosts.verify(host: "1", port: 2222, key: key) == .unknown)
            #expect(hosts.verify(host: "git.example.com", port: 22, key: key) == .trusted)
            #expect(hosts.verify(host: "GIT.Example.COM", port: 22, key: key) == .trusted)
            #expect(hosts.verify(host: "bad.example.com", port: 22, key: key) == .unknown)
            #expect(hosts.verify(host: "host", port: 22, key: key) == .trusted)
            #expect(hosts.verify(host: "git.example.com", port: 22, key: other) == .mismatch)
            #expect(hosts.verify(host: "127.0.0.1", port: 2222, key: other) == .mismatch)
        }

        @Test func hashedAndRevokedEntries() throws {
            let salt: [UInt8] = Array(0..<20)
            let mac = HMAC<Insecure.SHA1>.authenticationCode(
                for: Array("[10.1.2.3]:2200".utf8), using: SymmetricKey(data: salt))
            let hashed = "|1|" + Data(salt).base64EncodedString() + "|" + Data(mac).base64EncodedString()
            let hosts = try knownHosts(line(hashed, key) + line("[10.1.2.3]:2200", other, marker: "@revoked"))
            #expect(hosts.verify(host: "10.1.2.3", port: 2200, key: key) == .trusted)
            #expect(hosts.verify(host: "10.1.2.3", port: 2200, key: other) == .revoked)
            #expect(hosts.verify(host: "10.1.2.3", port: 22, key: key) == .unknown)
        }
    }
}

extension GitTransportTests {
    @Suite(.serialized, .enabled(if: Prerequisite.sshd.runsHere, "needs /usr/sbin/sshd, python3, and no SSH_AUTH_SOCK"))
    struct SSH {
        @Test func roundTripWithKeyFileAndKnownHosts() throws {
            try Prerequisite.sshd.require()
            let server = try SSHServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let knownHostsBefore = readFile(server.knownHosts)
            let reps = try TransportReplicas(
                url: server.url("docs"),
                config: ["remote.sshKey": server.userKey, "remote.knownHosts": server.knownHosts])
            let a = try reps.make("a")
            reps.write(a, "people/ann.json", doc("Ann"))
            #expect(try reps.sync(a).pushed.map(\.path) == ["people/ann.json"])

            let b = try reps.make("b")
            #expect(try reps.sync(b).pulled.map(\.path) == ["people/ann.json"])
            reps.write(
                b, "people/ann.json",
                reps.read(b, "people/ann.json")!.replacingOccurrences(of: "\"Ann\"", with: "\"Anna\""))
            try reps.sync(b)
            try reps.sync(a)
            #expect(field(reps.read(a, "people/ann.json"), "name") == "Anna")
            #expect(reps.snapshot(a) == reps.snapshot(b))

            let subjects = try commitSubjects(bareRepository: repo, home: reps.home)
            #expect(subjects.count == 2)
            #expect(subjects.first?.hasSuffix("from b") == true)
            try plainGit(["--git-dir", repo, "fsck", "--strict"], in: "/", home: reps.home)
            #expect(readFile(server.knownHosts) == knownHostsBefore, "docsync never writes known_hosts")
            // The key is only ever named by path.
            for secret in keyMaterial(privateKey: server.userKey) {
                #expect(filesContaining(secret, under: a).isEmpty)
            }
        }

        @Test func unknownHostIsRefusedWithItsFingerprintAndNothingIsWritten() throws {
            try Prerequisite.sshd.require()
            let server = try SSHServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let emptyKnownHosts = server.folder.sub("client/empty_known_hosts")
            try writeFile(emptyKnownHosts, "")
            let reps = try TransportReplicas(
                url: server.url("docs"),
                config: ["remote.sshKey": server.userKey, "remote.knownHosts": emptyKnownHosts])
            let a = try reps.make("a")
            reps.write(a, "secret-plans.json", doc("plans"))

            let failure = try #require(reps.syncError(a), "an unknown host must be refused")
            guard case RemoteError.rejected = failure.error else {
                Issue.record("expected RemoteError.rejected (not retryable), got \(failure.error)")
                return
            }
            let fingerprint = try server.hostKeyFingerprint()
            #expect(fingerprint.hasPrefix("SHA256:"))
            #expect(failure.message.contains(fingerprint), "\(failure.message)")
            #expect(failure.message.contains("[127.0.0.1]:\(server.port)"), "\(failure.message)")
            #expect(
                failure.message.contains(emptyKnownHosts), "the message names the known_hosts file: \(failure.message)")
            for secret in keyMaterial(privateKey: server.userKey) + keyMaterial(privateKey: server.hostKey) {
                #expect(!failure.message.contains(secret))
            }
            #expect(readFile(emptyKnownHosts).isEmpty, "the host key is never added automatically")
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).isEmpty, "nothing reached the server")
            #expect(try reps.pendingCount(a) == 1, "the change stays pending")
            #expect(!server.log.contains("Accepted publickey"), "no credentials were offered to an unverified host")
        }

        @Test func changedHostKeyIsRefused() throws {
            try Prerequisite.sshd.require()
            let server = try SSHServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let impostor = server.folder.sub("client/other_host_key")
            try SSHServer.makeKey(impostor, comment: "someone-else", home: server.home)
            let staleKnownHosts = server.folder.sub("client/stale_known_hosts")
            try writeFile(staleKnownHosts, "[127.0.0.1]:\(server.port) \(server.publicKey(impostor + ".pub"))\n")
            let reps = try TransportReplicas(
                url: server.url("docs"),
                config: ["remote.sshKey": server.userKey, "remote.knownHosts": staleKnownHosts])
            let a = try reps.make("a")
            reps.write(a, "x.json", doc("x"))

            let failure = try #require(reps.syncError(a), "a changed host key must be refused")
            guard case RemoteError.rejected = failure.error else {
                Issue.record("expected RemoteError.rejected, got \(failure.error)")
                return
            }
            #expect(failure.message.contains("does NOT match"), "\(failure.message)")
            #expect(
                failure.message.contains(try server.hostKeyFingerprint()),
                "the presented key's fingerprint: \(failure.message)")
            for secret in keyMaterial(privateKey: server.userKey) + keyMaterial(privateKey: server.hostKey)
                + keyMaterial(privateKey: impostor)
            {
                #expect(!failure.message.contains(secret))
            }
            #expect(
                readFile(staleKnownHosts).contains(server.publicKeyBase64(impostor + ".pub")),
                "known_hosts is left alone")
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).isEmpty)
            #expect(try reps.pendingCount(a) == 1)
        }

        @Test func wrongUserKeyIsAnAuthenticationErrorNamingTheFix() throws {
            try Prerequisite.sshd.require()
            let server = try SSHServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let strangerKey = server.folder.sub("client/stranger_ed25519")
            try SSHServer.makeKey(strangerKey, comment: "stranger", home: server.home)
            let reps = try TransportReplicas(
                url: server.url("docs"),
                config: ["remote.sshKey": strangerKey, "remote.knownHosts": server.knownHosts])
            let a = try reps.make("a")
            reps.write(a, "x.json", doc("x"))

            let failure = try #require(reps.syncError(a), "an unauthorized key must be refused")
            guard case RemoteError.rejected = failure.error else {
                Issue.record("expected RemoteError.rejected, got \(failure.error)")
                return
            }
            #expect(failure.message.contains("authentication failed"), "\(failure.message)")
            #expect(failure.message.contains("remote.sshKey"), "names the fix: \(failure.message)")
            #expect(failure.message.contains(server.url("docs")), "names the URL: \(failure.message)")
            for secret in keyMaterial(privateKey: strangerKey) + keyMaterial(privateKey: server.userKey) {
                #expect(!failure.message.contains(secret))
            }
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).isEmpty)
            #expect(try reps.pendingCount(a) == 1)
        }

        /// `host:path` with a Host alias from ~/.ssh/config (HostName, Port, User,
        /// IdentityFile with `~`): libgit2 does not read that file, docsync does, with the
        /// home folder given in GitTransportSettings (no process-wide HOME change).
        @Test func scpLikeURLThroughAnSSHConfigHostAlias() throws {
            try Prerequisite.sshd.require()
            let server = try SSHServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let reps = try TransportReplicas(
                url: server.url("docs"),
                config: ["remote.sshKey": server.userKey, "remote.knownHosts": server.knownHosts])
            let a = try reps.make("a")
            reps.write(a, "people/ann.json", doc("Ann"))
            try reps.sync(a)

            let aliasHome = reps.folder.sub("alias-home")
            try FileManager.default.createDirectory(atPath: aliasHome + "/.ssh", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: server.userKey, toPath: aliasHome + "/.ssh/id_test")
            try FileManager.default.copyItem(atPath: server.userKey + ".pub", toPath: aliasHome + "/.ssh/id_test.pub")
            try writeFile(
                aliasHome + "/.ssh/config",
                """
                Host testhost
                    HostName 127.0.0.1
                    Port \(server.port)
                    User \(server.user)
                    IdentityFile ~/.ssh/id_test

                Host *
                    User nobody-else
                    Port 1
                """)
            let settings = GitTransportSettings(knownHosts: server.knownHosts, home: aliasHome)
            let remote = try GitRemote(
                url: "testhost:\(repo)", branch: "main", cachePath: reps.folder.sub("alias-cache.git"),
                settings: settings)
            #expect(remote.displayURL == "testhost:\(repo)")

            // Read what replica a pushed.
            let changes = try remote.changes(since: nil)
            #expect(changes.entries.map(\.path) == ["people/ann.json"])
            let entry = try #require(changes.entries.first)
            #expect(try remote.read(entry) == Array(reps.read(a, "people/ann.json")!.utf8))

            // Write a document through the alias; replica a pulls it.
            let refId = RefID.generate()
            let changesetId = ChangesetID(
                wallMillis: UInt64(Date().timeIntervalSince1970 * 1000), counter: 0, replica: "a11a5a11a5a1"
            ).description
            let content = Array(
                "{\n  \"refId\": \"\(refId)\",\n  \"changesetId\": \"\(changesetId)\",\n  \"name\": \"Bob\"\n}\n".utf8)
            let write = RemoteWrite(
                refId: refId,
                new: DocVersion(
                    refId: refId, changesetId: changesetId, hash: ContentHash.of(content), path: "people/bob.json"),
                previous: nil, content: content)
            _ = try remote.commit(
                [write], expecting: changes.cursor, replica: ReplicaInfo(replicaId: "a11a5a11a5a1", name: "alias"))
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).first?.hasSuffix("from alias") == true)
            let pulled = try reps.sync(a)
            #expect(pulled.pulled.map(\.path) == ["people/bob.json"])
            #expect(reps.read(a, "people/bob.json") == String(decoding: content, as: UTF8.self))
        }
    }
}

// MARK: - https

extension TransportReplicas {
    /// `docsync sync --json` in `dir`, run by the built binary with `env` added to an
    /// isolated environment (HOME is this set's home, no global git config): a credential
    /// reaches that run only, never this process, whose environment other tests share.
    func syncThroughBinary(_ dir: String, env: [String: String]) throws -> ToolResult {
        try runTool(docsyncBinary!, ["sync", "--json"], in: dir, home: home, env: env)
    }

    /// The report of a `docsync sync --json` that must succeed.
    func syncReport(
        _ dir: String, env: [String: String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SyncReport {
        let run = try syncThroughBinary(dir, env: env)
        try #require(
            run.status == 0, "docsync sync: exit \(run.status)\n\(run.stdout)\(run.stderr)",
            sourceLocation: sourceLocation)
        return try JSONDecoder().decode(SyncReport.self, from: Data(run.stdout.utf8))
    }
}

extension GitTransportTests {
    /// The token comes from the environment of a docsync run, so these cases run the built
    /// binary with its own environment (never `setenv` in this process: tests run in parallel).
    @Suite(.serialized, .enabled(if: Prerequisite.httpsServer.runsHere, "needs openssl and python3"))
    struct HTTPS {
        @Test(.enabled(if: Prerequisite.docsync.runsHere, "needs the built docsync"))
        func roundTripWithTokenFromTheEnvironmentAndCAFile() throws {
            try Prerequisite.httpsServer.require()
            try Prerequisite.docsync.require()
            let server = try HTTPSGitServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let reps = try TransportReplicas(url: server.url("docs"), config: ["remote.caFile": server.caFile])
            let env = ["DOCSYNC_GIT_TOKEN": server.token]
            let a = try reps.make("a")
            reps.write(a, "people/ann.json", doc("Ann"))
            let first = try reps.syncThroughBinary(a, env: env)
            #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
            let firstReport = try JSONDecoder().decode(SyncReport.self, from: Data(first.stdout.utf8))
            #expect(firstReport.pushed.map(\.path) == ["people/ann.json"])
            let b = try reps.make("b")
            #expect(try reps.syncReport(b, env: env).pulled.map(\.path) == ["people/ann.json"])
            reps.write(
                b, "people/ann.json",
                reps.read(b, "people/ann.json")!.replacingOccurrences(of: "\"Ann\"", with: "\"Anna\""))
            reps.write(b, "people/bob.json", doc("Bob"))
            let second = try reps.syncThroughBinary(b, env: env)
            #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
            _ = try reps.syncReport(a, env: env)
            #expect(field(reps.read(a, "people/ann.json"), "name") == "Anna")
            #expect(reps.snapshot(a) == reps.snapshot(b))
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).count == 2)

            // The token is nowhere: not in what the runs printed, the journal, state, config
            // or the cache repository.
            for run in [first, second] { #expect(!(run.stdout + run.stderr).contains(server.token)) }
            #expect(filesContaining(server.token, under: a).isEmpty)
            #expect(filesContaining(server.token, under: b).isEmpty)
            #expect(server.log.contains("POST /docs.git/git-receive-pack"), "pushed over smart HTTP")
        }

        @Test(.enabled(if: Prerequisite.docsync.runsHere, "needs the built docsync"))
        func tokenFromGitCredentialFill() throws {
            try Prerequisite.httpsServer.require()
            try Prerequisite.docsync.require()
            let server = try HTTPSGitServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let reps = try TransportReplicas(url: server.url("docs"), config: ["remote.caFile": server.caFile])
            let gitconfig = reps.folder.sub("credential-gitconfig")
            try writeFile(
                gitconfig,
                """
                [credential]
                \thelper = "!f() { test \\"$1\\" = get && echo username=alice && echo password=\(server.token); }; f"

                """)
            // No DOCSYNC_GIT_TOKEN (the isolated environment has none): git's credential helper answers.
            let env = ["GIT_CONFIG_GLOBAL": gitconfig, "GIT_CONFIG_NOSYSTEM": "1"]
            let a = try reps.make("a")
            reps.write(a, "x.json", doc("x"))
            #expect(try reps.syncReport(a, env: env).pushed.map(\.path) == ["x.json"])
            let b = try reps.make("b")
            #expect(try reps.syncReport(b, env: env).pulled.map(\.path) == ["x.json"])
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).count == 1)
            #expect(filesContaining(server.token, under: reps.folder.sub("a")).isEmpty)
        }

        @Test(.enabled(if: Prerequisite.docsync.runsHere, "needs the built docsync"))
        func withoutTheCAFileTheCertificateIsRefused() throws {
            try Prerequisite.httpsServer.require()
            try Prerequisite.docsync.require()
            // A server with its own fresh CA, which nothing trusts.
            let server = try HTTPSGitServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let reps = try TransportReplicas(url: server.url("docs"))
            let a = try reps.make("a")
            reps.write(a, "x.json", doc("x"))
            let run = try reps.syncThroughBinary(a, env: ["DOCSYNC_GIT_TOKEN": server.token])
            // Refused for good (exit 1), not "unreachable, try again later" (75).
            #expect(run.status == 1, "an untrusted certificate must be refused: exit \(run.status)\n\(run.stderr)")
            #expect(run.stderr.contains("TLS certificate"), "\(run.stderr)")
            #expect(run.stderr.contains("remote.caFile"), "names the fix: \(run.stderr)")
            #expect(run.stderr.contains(server.url("docs")))
            #expect(!(run.stdout + run.stderr).contains(server.token))
            #expect(try reps.pendingCount(a) == 1)
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).isEmpty)
            #expect(!server.log.contains("git-receive-pack"), "no request got through")
        }

        @Test(.enabled(if: Prerequisite.docsync.runsHere, "needs the built docsync"))
        func wrongTokenIsAnAuthenticationError() throws {
            try Prerequisite.httpsServer.require()
            try Prerequisite.docsync.require()
            let server = try HTTPSGitServer()
            defer { server.stop() }
            let repo = try server.makeRepository("docs")
            let reps = try TransportReplicas(url: server.url("docs"), config: ["remote.caFile": server.caFile])
            let wrong = "wrong-" + UUID().uuidString.lowercased()
            let a = try reps.make("a")
            reps.write(a, "x.json", doc("x"))
            let run = try reps.syncThroughBinary(a, env: ["DOCSYNC_GIT_TOKEN": wrong])
            #expect(run.status == 1, "a wrong token must be refused: exit \(run.status)\n\(run.stderr)")
            #expect(run.stderr.contains("authentication failed"), "\(run.stderr)")
            #expect(run.stderr.contains("DOCSYNC_GIT_TOKEN"), "names the fix: \(run.stderr)")
            #expect(run.stderr.contains(server.url("docs")))
            #expect(!(run.stdout + run.stderr).contains(wrong))
            #expect(!(run.stdout + run.stderr).contains(server.token))
            #expect(filesContaining(wrong, under: a).isEmpty, "not in the journal, state or config")
            #expect(try reps.pendingCount(a) == 1)
            #expect(try commitSubjects(bareRepository: repo, home: reps.home).isEmpty)
            #expect(server.log.contains("401"), "the server refused the token")
        }

        /// remote.caFile is per tree: a tree without it must not trust a CA another tree in
        /// the same process configured. In-process, without a token: the trusting tree gets
        /// past TLS (the server answers it, 401), the other one must not.
        @Test
        func caFileOfOneTreeDoesNotLeakToAnother() throws {
            try Prerequisite.httpsServer.require()
            let server = try HTTPSGitServer()
            defer { server.stop() }
            try server.makeRepository("docs")
            let trusting = try TransportReplicas(url: server.url("docs"), config: ["remote.caFile": server.caFile])
            let plain = try TransportReplicas(url: server.url("docs"))
            let a = try trusting.make("a")
            trusting.write(a, "x.json", doc("x"))
            let trusted = trusting.syncError(a)
            #expect(
                trusted?.message.contains("TLS certificate") != true,
                "remote.caFile was not used: \(trusted?.message ?? "")")
            #expect(server.log.contains("GET /docs.git/info/refs"), "the trusting tree got past TLS: \(server.log)")
            let b = try plain.make("b")
            let failure = plain.syncError(b)
            #expect(
                failure?.message.contains("TLS certificate") == true,
                "a tree without remote.caFile trusted the CA of another tree: \(failure?.message ?? "no error")")
        }

        /// remote.caFile adds to the system's CAs (public hosts stay trusted); a caFile that
        /// cannot be read or holds no certificate is a clear error naming it, before any
        /// connection is made.
        @Test
        func caFileExtendsTheSystemBundleAndABadOneIsNamed() throws {
            try Prerequisite.httpsServer.require()
            let server = try HTTPSGitServer()
            defer { server.stop() }
            let scratch = TempFolder("trust")
            let url = try #require(GitURL(server.url("docs")))
            let settings = GitTransportSettings(caFile: server.caFile)
            try TrustStore.with(settings, url: url, scratch: scratch.path) {}
            let combined = try String(contentsOfFile: scratch.path + "/trusted-ca.pem", encoding: .utf8)
            let ours = try String(contentsOfFile: server.caFile, encoding: .utf8)
            #expect(combined.hasSuffix(ours))
            if let system = TrustStore.systemBundle {
                let systemText = try String(contentsOfFile: system, encoding: .utf8)
                #expect(combined.hasPrefix(systemText), "the system CAs must stay trusted next to remote.caFile")
            }
            for bad in [scratch.path + "/missing.pem", scratch.path + "/trusted-ca.txt"] {
                if bad.hasSuffix(".txt") {
                    try "not a certificate\n".write(toFile: bad, atomically: true, encoding: .utf8)
                }
                let message: String
                do {
                    try TrustStore.with(GitTransportSettings(caFile: bad), url: url, scratch: scratch.path) {}
                    message = "no error"
                } catch { message = "\(error.localizedDescription)" }
                #expect(message.contains(bad) && message.contains("remote.caFile"), "\(message)")
            }
        }
    }
}
