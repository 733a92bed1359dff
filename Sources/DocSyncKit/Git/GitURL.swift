import Foundation

/// A git remote URL in any form libgit2 handles, taken apart enough to show it without
/// credentials, apply ~/.ssh/config, and know which host and port to check.
public struct GitURL: Sendable, Equatable {
    public enum Scheme: String, Sendable { case file, git, ssh, http, https }

    public var original: String
    public var scheme: Scheme
    public var user: String?
    public var host: String?
    public var port: Int?
    public var path: String

    public init?(_ text: String) {
        original = text
        if let range = text.range(of: "://") {
            guard let scheme = Scheme(rawValue: String(text[..<range.lowerBound]).lowercased()) else { return nil }
            self.scheme = scheme
            let rest = text[range.upperBound...]
            if scheme == .file {
                host = nil
                path = String(rest)
                return
            }
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = String(rest[..<slash])
            path = String(rest[slash...])
            if let at = authority.lastIndex(of: "@") {
                user = String(authority[..<at]).split(separator: ":").first.map(String.init)
                authority = String(authority[authority.index(after: at)...])
            }
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]"),
                let p = Int(authority[authority.index(after: colon)...])
            {
                port = p
                authority = String(authority[..<colon])
            }
            host = authority.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            return
        }
        // scp-like `user@host:path` (but not a Windows-ish or plain path with a colon after a slash).
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/"),
            text.distance(from: text.startIndex, to: colon) > 1
        {
            scheme = .ssh
            var authority = String(text[..<colon])
            if let at = authority.lastIndex(of: "@") {
                user = String(authority[..<at])
                authority = String(authority[authority.index(after: at)...])
            }
            host = authority
            path = String(text[text.index(after: colon)...])
            return
        }
        scheme = .file
        path = text
    }

    /// The URL without any password or token, for messages and logs.
    public var display: String {
        guard scheme != .file, let host else { return original }
        if original.contains("://") {
            var s = scheme.rawValue + "://"
            if let user { s += user + "@" }
            s += host.contains(":") ? "[\(host)]" : host
            if let port { s += ":\(port)" }
            return s + path
        }
        return (user.map { $0 + "@" } ?? "") + host + ":" + path
    }

    /// The URL libgit2 should use: ssh host aliases resolved from ~/.ssh/config.
    func resolved(with config: SSHConfig) -> (url: String, identityFile: String?) {
        guard scheme == .ssh, let host else { return (original, nil) }
        let settings = config.settings(for: host)
        let realHost = settings.hostName ?? host
        let realUser = user ?? settings.user
        let realPort = port ?? settings.port
        var s = "ssh://" + (realUser.map { $0 + "@" } ?? "") + (realHost.contains(":") ? "[\(realHost)]" : realHost)
        if let realPort { s += ":\(realPort)" }
        s += path.hasPrefix("/") ? path : "/" + path
        if !original.contains("://") && !path.hasPrefix("/") {
            // scp-like paths are relative to the home folder; ssh:// needs `~` for that.
            s = s.replacingOccurrences(of: "/" + path, with: "/~/" + path)
        }
        return (s, settings.identityFile)
    }

    /// Whether text names a git remote rather than a plain folder.
    public static func looksLikeGit(_ text: String) -> Bool {
        guard let url = GitURL(text) else { return false }
        switch url.scheme {
        case .git, .ssh, .http, .https: return true
        case .file:
            let path = FileSystem.absolute(url.path)
            if path.hasSuffix(".git") { return true }
            return FileSystem.exists(path + "/HEAD") && FileSystem.isDirectory(path + "/objects")
                || FileSystem.isDirectory(path + "/.git")
        }
    }
}
