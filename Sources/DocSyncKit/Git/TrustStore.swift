import Foundation
import GitShim

/// The CA certificates libgit2 trusts for one https operation.
///
/// libgit2 keeps its trust store in a process-wide option
/// (`GIT_OPT_SET_SSL_CERT_LOCATIONS`), and Debian's mbedTLS build replaces the store
/// with whatever is set rather than adding to it. So every https operation sets the store
/// it needs — the system bundle, plus the remote's `remote.caFile` when it has one —
/// under one process-wide lock: a CA trusted for one remote never leaks to another, and
/// the public CAs stay trusted next to a private one.
enum TrustStore {
    private static let lock = NSLock()

    /// The system's CA bundle: `SSL_CERT_FILE` if set, else the usual Debian/Fedora/BSD places.
    static var systemBundle: String? {
        let candidates = [
            ProcessInfo.processInfo.environment["SSL_CERT_FILE"], "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Runs `body` with the trust store `settings` asks for. `scratch` is a folder where a
    /// combined bundle (system + caFile) can be written. Non-https URLs need no store.
    static func with<T>(_ settings: GitTransportSettings, url: GitURL, scratch: String, _ body: () throws -> T) throws
        -> T
    {
        guard url.scheme == .https else { return try body() }
        lock.lock()
        defer { lock.unlock() }
        let bundle = try bundle(for: settings, scratch: scratch)
        if let bundle { _ = docsync_git_set_ssl_cert_locations(bundle, nil) }
        return try body()
    }

    private static func bundle(for settings: GitTransportSettings, scratch: String) throws -> String? {
        guard let caFile = settings.caFile else { return systemBundle }
        guard let extra = FileManager.default.contents(atPath: caFile) else {
            throw RemoteError.rejected(
                url: caFile,
                reason: "remote.caFile cannot be read; fix the path with `docsync config remote.caFile /path/ca.pem`")
        }
        guard String(decoding: extra, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw RemoteError.rejected(
                url: caFile, reason: "remote.caFile holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        var combined = systemBundle.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
        if !combined.isEmpty && combined.last != UInt8(ascii: "\n") { combined.append(UInt8(ascii: "\n")) }
        combined.append(extra)
        let path = scratch + "/trusted-ca.pem"
        try combined.write(to: URL(fileURLWithPath: path), options: .atomic)
        return path
    }
}
