import Crypto
import Foundation

/// OpenSSH's known_hosts, read to check a server's host key: plain and hashed
/// (`|1|salt|hash`) host names, `[host]:port` entries, and `@revoked` markers.
/// A host that is missing or whose key differs is refused; docsync never adds keys.
struct KnownHosts {
    struct Entry {
        var hostPatterns: [String]
        var hashed: (salt: [UInt8], hash: [UInt8])?
        var keyType: String
        var key: [UInt8]
        var revoked: Bool
    }

    var entries: [Entry] = []

    init(path: String) {
        guard let bytes = try? FileSystem.readFile(path) else { return }
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            var fields = raw.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            var revoked = false
            if first.hasPrefix("@") {
                revoked = first == "@revoked"
                fields.removeFirst()
            }
            guard fields.count >= 3, let key = Data(base64Encoded: fields[2]) else { continue }
            var entry = Entry(hostPatterns: [], hashed: nil, keyType: fields[1], key: Array(key), revoked: revoked)
            if fields[0].hasPrefix("|1|") {
                let parts = fields[0].split(separator: "|")
                if parts.count == 3, let salt = Data(base64Encoded: String(parts[1])),
                    let hash = Data(base64Encoded: String(parts[2]))
                {
                    entry.hashed = (Array(salt), Array(hash))
                }
            } else {
                entry.hostPatterns = fields[0].split(separator: ",").map(String.init)
            }
            entries.append(entry)
        }
    }

    /// How known_hosts names a host: `host` on port 22, `[host]:port` otherwise.
    static func name(host: String, port: Int) -> String {
        port == 22 ? host : "[\(host)]:\(port)"
    }

    private func matches(_ entry: Entry, name: String) -> Bool {
        if let hashed = entry.hashed {
            let mac = HMAC<Insecure.SHA1>.authenticationCode(
                for: Array(name.utf8), using: SymmetricKey(data: hashed.salt))
            return Array(mac) == hashed.hash
        }
        // As OpenSSH: the line matches if a pattern matches and no negated one does.
        let negated = entry.hostPatterns.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()) }
        let positive = entry.hostPatterns.filter { !$0.hasPrefix("!") }
        return positive.contains { Self.hostPatternMatches($0, name) }
            && !negated.contains { Self.hostPatternMatches($0, name) }
    }

    /// OpenSSH's host pattern matching (match.c): only `*` and `?` are special, case is
    /// ignored. Not a path glob: `[127.0.0.1]:2222` is literal, not a character class.
    static func hostPatternMatches(_ pattern: String, _ name: String) -> Bool {
        func match(_ p: ArraySlice<UInt8>, _ t: ArraySlice<UInt8>) -> Bool {
            guard let c = p.first else { return t.isEmpty }
            switch c {
            case UInt8(ascii: "*"):
                let rest = p.dropFirst()
                var i = t.startIndex
                while true {
                    if match(rest, t[i...]) { return true }
                    if i == t.endIndex { return false }
                    i += 1
                }
            case UInt8(ascii: "?"):
                return !t.isEmpty && match(p.dropFirst(), t.dropFirst())
            default:
                return t.first == c && match(p.dropFirst(), t.dropFirst())
            }
        }
        return match(Array(pattern.lowercased().utf8)[...], Array(name.lowercased().utf8)[...])
    }

    enum Verdict: Equatable {
        case trusted
        case unknown
        case mismatch
        case revoked
    }

    func verify(host: String, port: Int, key: [UInt8]) -> Verdict {
        let name = Self.name(host: host, port: port)
        let candidates = entries.filter { matches($0, name: name) }
        if candidates.contains(where: { $0.revoked && $0.key == key }) { return .revoked }
        if candidates.contains(where: { !$0.revoked && $0.key == key }) { return .trusted }
        return candidates.contains(where: { !$0.revoked }) ? .mismatch : .unknown
    }

    /// `SHA256:<base64>` as ssh-keygen -l prints it.
    static func fingerprint(_ key: [UInt8]) -> String {
        "SHA256:"
            + Data(SHA256.hash(data: key)).base64EncodedString().trimmingCharacters(in: CharacterSet(charactersIn: "="))
    }
}
