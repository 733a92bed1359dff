import Foundation

/// A remote as the user gives it (`init --remote`, `clone`, `config remote.url`), checked
/// once, when it is given. Why here: a malformed URL that was accepted (or taken for a
/// folder name) made every later cron run exit 75, "try again later", forever. Exit 75
/// is for conditions that can pass; a URL that can never work is an error at once.
public struct RemoteAddress: Sendable, Equatable {
    public var kind: RemoteKind
    /// What the config stores: an absolute path for a folder or a local repository
    /// given as a path, the URL as given otherwise.
    public var url: String

    public struct Invalid: Error, LocalizedError, Equatable {
        public var text: String
        public var reason: String
        public var errorDescription: String? { "remote '\(text)': \(reason)" }
    }

    static let schemes = ["file", "git", "ssh", "http", "https"]

    /// Checks `text` and decides its kind (`kind` when given). Relative paths are taken
    /// from `cwd`.
    public static func parse(_ text: String, kind: RemoteKind?, relativeTo cwd: String) throws(Invalid) -> RemoteAddress
    {
        func invalid(_ reason: String) -> Invalid { Invalid(text: text, reason: reason) }
        if text.trimmingCharacters(in: .whitespaces).isEmpty { throw invalid("empty; give a folder path or a git URL") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw invalid("contains a control character")
        }
        if let separator = text.range(of: "://") {
            let scheme = text[..<separator.lowerBound].lowercased()
            guard schemes.contains(scheme) else {
                let shown = scheme.isEmpty ? "no scheme before ://" : "unsupported scheme '\(scheme)'"
                throw invalid(
                    "\(shown); docsync reaches a folder (a path or file://) or git over file://, git://, ssh://, http:// and https://"
                )
            }
            guard let url = GitURL(text) else { throw invalid("not a URL docsync understands") }
            if url.scheme == .file {
                guard url.path.hasPrefix("/") else {
                    throw invalid("a file:// URL needs an absolute path (file:///path/to/folder)")
                }
                let resolved = kind ?? RemoteKind.detect(url.path)
                return RemoteAddress(kind: resolved, url: resolved == .dir ? FileSystem.absolute(url.path) : text)
            }
            if kind == .dir { throw invalid("a folder remote is a path or a file:// URL, not a \(scheme):// URL") }
            guard let host = url.host, isHost(host) else {
                throw invalid("'\(url.host ?? "")' is not a valid host name")
            }
            guard url.path.count > 1 else {
                throw invalid("no repository path after the host (\(scheme)://\(host)/path/to/repo.git)")
            }
            return RemoteAddress(kind: .git, url: text)
        }
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains("/") {
            // scp-like `[user@]host:path`, or a mistyped URL.
            let url = GitURL(text)
            guard let url, url.scheme == .ssh, let host = url.host, isHost(host), url.user.map(isUser) ?? true else {
                throw invalid(
                    "neither a folder path nor a git URL (scheme://host/path, or user@host:path for ssh); write ./\(text) for a folder whose name has a colon"
                )
            }
            guard !url.path.isEmpty else { throw invalid("no repository path after '\(host):'") }
            if kind == .dir {
                throw invalid(
                    "a folder remote is a path, not host:path (write ./\(text) for a folder whose name has a colon)")
            }
            return RemoteAddress(kind: .git, url: text)
        }
        let path = FileSystem.absolute(text.hasPrefix("/") ? text : FileSystem.join(cwd, text))
        return RemoteAddress(kind: kind ?? RemoteKind.detect(path), url: path)
    }

    /// The remote's folder on this machine, if it is one (a folder remote, or a git
    /// repository given as a path or file:// URL).
    public var localPath: String? {
        if kind == .dir { return url }
        guard let git = GitURL(url), git.scheme == .file else { return nil }
        return FileSystem.absolute(git.path)
    }

    /// Refuses a remote inside the working tree (it would be synced into itself on every
    /// run) and a working tree inside a folder remote.
    public func checkSeparate(fromTree root: String) throws(Invalid) {
        guard let path = localPath.map(FileSystem.absolute) else { return }
        let tree = FileSystem.absolute(root)
        if path == tree || path.hasPrefix(tree + "/") {
            throw Invalid(text: url, reason: "it is inside the working tree \(tree); put the remote outside the tree")
        }
        if kind == .dir, tree.hasPrefix(path + "/") {
            throw Invalid(
                text: url,
                reason: "the working tree \(tree) is inside this folder remote; put the tree outside the remote folder")
        }
    }

    static func isHost(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        if host.contains(":") {
            return host.unicodeScalars.allSatisfy { ($0.properties.isASCIIHexDigit) || $0 == ":" || $0 == "." }
        }
        return host.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "." || $0 == "-"
                || $0 == "_"
        }
            && !host.hasPrefix("-") && !host.hasPrefix(".")
    }

    static func isUser(_ user: String) -> Bool {
        !user.isEmpty
            && user.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}
