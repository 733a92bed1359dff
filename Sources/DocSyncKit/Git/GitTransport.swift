import CLibGit2
import Foundation
import GitShim

/// Where credentials and trust come from for one git remote.
public struct GitTransportSettings: Sendable {
    /// A private key file (ed25519) for ssh; nil: ~/.ssh/config's IdentityFile, then ~/.ssh/id_ed25519.
    public var sshKey: String?
    /// known_hosts to check ssh host keys against (default ~/.ssh/known_hosts).
    public var knownHosts: String?
    /// Extra CA certificates (PEM) to trust for https.
    public var caFile: String?
    /// The home folder for ~/.ssh lookups.
    public var home: String

    public init(
        sshKey: String? = nil, knownHosts: String? = nil, caFile: String? = nil,
        home: String = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
    ) {
        self.sshKey = sshKey
        self.knownHosts = knownHosts
        self.caFile = caFile
        self.home = home
    }
}

/// State shared with libgit2's C callbacks through their payload pointer.
final class TransportContext {
    let settings: GitTransportSettings
    let url: GitURL
    let identityFile: String?
    var credentialAttempts = 0
    var lastCredentialKind = ""
    /// Why a certificate or host key was refused, to explain the failure.
    var trustProblem: String?
    /// A reference the server refused to update during push, with its reason.
    var pushRejection: String?
    /// What the server said while a push ran (a hook's output, git's `remote:` lines).
    var serverMessages = ""

    init(settings: GitTransportSettings, url: GitURL, identityFile: String?) {
        self.settings = settings
        self.url = url
        self.identityFile = identityFile
    }

    var knownHostsPath: String { settings.knownHosts ?? settings.home + "/.ssh/known_hosts" }

    func expand(_ path: String) -> String {
        path.hasPrefix("~/") ? settings.home + path.dropFirst(1) : path
    }

    /// The https token: DOCSYNC_GIT_TOKEN, else `git credential fill`.
    func httpsCredential() -> (user: String, password: String)? {
        let env = ProcessInfo.processInfo.environment
        if let token = env["DOCSYNC_GIT_TOKEN"], !token.isEmpty {
            return (url.user ?? env["DOCSYNC_GIT_USER"] ?? "docsync", token)
        }
        guard let host = url.host else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "credential", "fill"]
        var environment = env
        environment["GIT_TERMINAL_PROMPT"] = "0"
        process.environment = environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        do { try process.run() } catch { return nil }
        var request = "protocol=\(url.scheme.rawValue)\nhost=\(host)\(url.port.map { ":\($0)" } ?? "")\n"
        if let user = url.user { request += "username=\(user)\n" }
        input.fileHandleForWriting.write(Data((request + "\n").utf8))
        try? input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        var user: String?, password: String?
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("username=") { user = String(line.dropFirst(9)) }
            if line.hasPrefix("password=") { password = String(line.dropFirst(9)) }
        }
        guard let user, let password else { return nil }
        return (user, password)
    }
}

/// Fetch and push over any transport libgit2 has, with docsync's credential and
/// trust rules wired into the callbacks.
enum GitTransport {
    static func callbacks(_ context: TransportContext) -> git_remote_callbacks {
        var callbacks = git_remote_callbacks()
        git_remote_init_callbacks(&callbacks, UInt32(GIT_REMOTE_CALLBACKS_VERSION))
        callbacks.payload = Unmanaged.passUnretained(context).toOpaque()
        callbacks.credentials = { out, _, usernameFromURL, allowed, payload in
            guard let payload, let out else { return -1 }
            let context = Unmanaged<TransportContext>.fromOpaque(payload).takeUnretainedValue()
            return GitTransport.credential(out, usernameFromURL: usernameFromURL, allowed: allowed, context: context)
        }
        callbacks.certificate_check = { cert, valid, host, payload in
            guard let payload, let cert else { return -1 }
            let context = Unmanaged<TransportContext>.fromOpaque(payload).takeUnretainedValue()
            return GitTransport.checkCertificate(cert, valid: valid != 0, host: host, context: context)
        }
        // After the server said where its branches are, before it is asked to move one:
        // the step a concurrent push races with.
        callbacks.push_negotiation = { _, _, _ in
            try? CrashPoint.hit("git.before-ref-update")
            return 0
        }
        // The server's own words (a pre-receive hook's output), to tell with a refusal.
        callbacks.sideband_progress = { text, length, payload in
            guard let payload, let text, length > 0 else { return 0 }
            let context = Unmanaged<TransportContext>.fromOpaque(payload).takeUnretainedValue()
            if context.serverMessages.utf8.count < 4096 {
                context.serverMessages += String(
                    decoding: UnsafeRawBufferPointer(start: text, count: Int(length)), as: UTF8.self)
            }
            return 0
        }
        callbacks.push_update_reference = { refname, status, payload in
            guard let payload else { return 0 }
            if let status {
                let context = Unmanaged<TransportContext>.fromOpaque(payload).takeUnretainedValue()
                context.pushRejection = "\(refname.map { String(cString: $0) } ?? "ref"): \(String(cString: status))"
            }
            return 0
        }
        return callbacks
    }

    /// The credential libgit2 asks for: the ssh agent once, then a key file; a token for
    /// https; a bounded number of tries, then give up.
    private static func credential(
        _ out: UnsafeMutablePointer<UnsafeMutablePointer<git_credential>?>, usernameFromURL: UnsafePointer<CChar>?,
        allowed: UInt32, context: TransportContext
    ) -> Int32 {
        context.credentialAttempts += 1
        // libgit2 asks again after a refusal: a bounded number of tries, then give up.
        guard context.credentialAttempts <= 3 else { return GIT_EUSER.rawValue }
        let user = usernameFromURL.map { String(cString: $0) } ?? context.url.user ?? "git"
        if allowed & GIT_CREDENTIAL_USERNAME.rawValue != 0 {
            return git_credential_username_new(out, user)
        }
        if allowed & GIT_CREDENTIAL_SSH_KEY.rawValue != 0 {
            let agent = ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"].map { !$0.isEmpty } ?? false
            if agent && context.credentialAttempts == 1 {
                context.lastCredentialKind = "ssh-agent"
                return git_credential_ssh_key_from_agent(out, user)
            }
            let candidates = [context.settings.sshKey, context.identityFile, "~/.ssh/id_ed25519"].compactMap { $0 }
                .map(context.expand)
            guard let key = candidates.first(where: { FileSystem.exists($0) }) else { return GIT_EUSER.rawValue }
            context.lastCredentialKind = "key \(key)"
            let publicKey = FileSystem.exists(key + ".pub") ? key + ".pub" : nil
            return git_credential_ssh_key_new(out, user, publicKey, key, nil)
        }
        if allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT.rawValue != 0 {
            guard context.credentialAttempts == 1, let credential = context.httpsCredential() else {
                return GIT_EUSER.rawValue
            }
            context.lastCredentialKind = "token"
            return git_credential_userpass_plaintext_new(out, credential.user, credential.password)
        }
        return GIT_EUSER.rawValue
    }

    /// Whether the server is the one known: an ssh host key against known_hosts, a TLS
    /// certificate as libgit2 validated it. A refusal says why (`trustProblem`).
    private static func checkCertificate(
        _ cert: UnsafeMutablePointer<git_cert>, valid: Bool, host: UnsafePointer<CChar>?, context: TransportContext
    ) -> Int32 {
        let hostName = host.map { String(cString: $0) } ?? context.url.host ?? "?"
        if cert.pointee.cert_type == GIT_CERT_HOSTKEY_LIBSSH2 {
            let hostkey = UnsafeRawPointer(cert).assumingMemoryBound(to: git_cert_hostkey.self).pointee
            guard hostkey.type.rawValue & GIT_CERT_SSH_RAW.rawValue != 0, let raw = hostkey.hostkey else {
                context.trustProblem = "the ssh server \(hostName) did not present a host key docsync can check"
                return GIT_ECERTIFICATE.rawValue
            }
            let key = Array(UnsafeRawBufferPointer(start: raw, count: hostkey.hostkey_len))
            let port = context.url.port ?? 22
            let name = KnownHosts.name(host: hostName, port: port)
            switch KnownHosts(path: context.knownHostsPath).verify(host: hostName, port: port, key: key) {
            case .trusted:
                return 0
            case .unknown:
                context.trustProblem =
                    "host \(name) is not in \(context.knownHostsPath) (key fingerprint \(KnownHosts.fingerprint(key))); if that is the right server, add it, e.g. `ssh-keyscan -p \(port) \(hostName) >> \(context.knownHostsPath)`, after checking the fingerprint"
            case .mismatch:
                context.trustProblem =
                    "host key of \(name) does NOT match \(context.knownHostsPath) (server presented \(KnownHosts.fingerprint(key))); this may be an attack. Fix known_hosts only if you know the key changed"
            case .revoked:
                context.trustProblem = "host key of \(name) is marked @revoked in \(context.knownHostsPath)"
            }
            return GIT_ECERTIFICATE.rawValue
        }
        if valid { return 0 }
        context.trustProblem =
            "the TLS certificate of \(hostName) is not trusted; if you use a private CA, set it with `docsync config remote.caFile /path/ca.pem`"
        return GIT_ECERTIFICATE.rawValue
    }

    /// Makes an in-memory remote for `url` (nothing is written to any config).
    static func anonymousRemote(_ repo: GitRepository, url: String) throws -> OpaquePointer {
        var remote: OpaquePointer?
        try GitError.check(git_remote_create_anonymous(&remote, repo.pointer, url), "git_remote_create_anonymous")
        return remote!
    }

    /// Fetches `branch` into refs/remotes/origin/<branch>. Returns the names of the
    /// remote's branches (to explain a wrong branch).
    static func fetch(_ repo: GitRepository, url: String, branch: String, context: TransportContext) throws -> [String]
    {
        let remote = try anonymousRemote(repo, url: url)
        defer { git_remote_free(remote) }
        var options = fetchOptions(context)
        let refspec = "+refs/heads/\(branch):refs/remotes/origin/\(branch)"
        try withStrArray([refspec]) { specs in
            try GitError.check(git_remote_fetch(remote, &specs, &options, "docsync fetch"), "git_remote_fetch")
        }
        let names = branchNames(of: remote)
        // A branch deleted on the server would leave a stale tracking ref behind.
        if !names.contains(branch) { repo.deleteReference("refs/remotes/origin/\(branch)") }
        return names
    }

    /// A fetch that prunes stale tracking refs and takes no tags.
    private static func fetchOptions(_ context: TransportContext) -> git_fetch_options {
        var options = git_fetch_options()
        git_fetch_options_init(&options, UInt32(GIT_FETCH_OPTIONS_VERSION))
        options.callbacks = callbacks(context)
        options.prune = GIT_FETCH_PRUNE
        options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE
        return options
    }

    /// The branches the remote advertised in the last fetch (`refs/heads/` left off).
    private static func branchNames(of remote: OpaquePointer) -> [String] {
        var heads: UnsafeMutablePointer<UnsafePointer<git_remote_head>?>?
        var count = 0
        guard git_remote_ls(&heads, &count, remote) == 0, let heads else { return [] }
        return (0..<count).compactMap { i in
            guard let name = heads[i].map({ String(cString: $0.pointee.name) }), name.hasPrefix("refs/heads/") else {
                return nil
            }
            return String(name.dropFirst(11))
        }
    }

    /// Pushes `localRef` to `branch` without force. Throws `GitError` with code
    /// `nonFastForward` when the server refuses because the branch moved, whichever of
    /// the two ways libgit2 reports it.
    static func push(_ repo: GitRepository, url: String, localRef: String, branch: String, context: TransportContext)
        throws
    {
        let remote = try anonymousRemote(repo, url: url)
        defer { git_remote_free(remote) }
        var options = git_push_options()
        git_push_options_init(&options, UInt32(GIT_PUSH_OPTIONS_VERSION))
        options.callbacks = callbacks(context)
        // Set by the push-update callback when the server refuses the branch's update.
        context.pushRejection = nil
        context.serverMessages = ""
        try withStrArray(["\(localRef):refs/heads/\(branch)"]) { specs in
            try GitError.check(git_remote_push(remote, &specs, &options), "git_remote_push")
        }
        if let rejection = context.pushRejection {
            // Only a branch that moved (or is locked right now) is worth a fetch and a
            // retry; a hook, a protected branch or receive.denyCurrentBranch refuses every
            // retry alike. Why: those were taken for "moved", and after five attempts
            // the run exited 75, so cron stayed silent about a refusal for days.
            guard isMovedOrLocked(rejection) else {
                let said = serverWords(context.serverMessages)
                throw GitError(
                    code: GitError.refused, function: "git_remote_push",
                    message: "the server refused the push (\(rejection))" + (said.isEmpty ? "" : ": " + said))
            }
            throw GitError(
                code: GitError.nonFastForward, function: "git_remote_push", message: "rejected: \(rejection)")
        }
    }

    /// Whether a ref update the server refused (`<ref>: <status>`) was refused because
    /// the branch moved (or its lock is held): what receive-pack says then.
    static func isMovedOrLocked(_ rejection: String) -> Bool {
        let lower = rejection.lowercased()
        return [
            "non-fast-forward", "fetch first", "stale info", "failed to lock", "cannot lock", "failed to update ref"
        ]
        .contains { lower.contains($0) }
    }

    /// The server's messages as one line each, without progress output; at most 2000 characters.
    static func serverWords(_ text: String) -> String {
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("Resolving deltas") && !$0.hasPrefix("Counting objects") }
        return String(lines.joined(separator: "; ").prefix(2000))
    }

    static func withStrArray<T>(_ strings: [String], _ body: (inout git_strarray) throws -> T) throws -> T {
        var pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return try pointers.withUnsafeMutableBufferPointer { buffer in
            var array = git_strarray(strings: buffer.baseAddress, count: buffer.count)
            return try body(&array)
        }
    }
}
