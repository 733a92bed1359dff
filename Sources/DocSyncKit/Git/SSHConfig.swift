import Foundation

/// The parts of `~/.ssh/config` that decide where an ssh URL goes, since libgit2 does
/// not read it: HostName, User, Port and IdentityFile of the first matching Host block
/// (first value wins, as in ssh).
struct SSHConfig {
    struct HostSettings: Equatable {
        var hostName: String?
        var user: String?
        var port: Int?
        var identityFile: String?
    }

    private var blocks: [(patterns: [String], settings: [(String, String)])] = []

    init(path: String) {
        guard let bytes = try? FileSystem.readFile(path) else { return }
        var current: (patterns: [String], settings: [(String, String)])? = nil
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" || $0 == "=" })
            guard parts.count == 2 else { continue }
            let key = parts[0].lowercased()
            let value = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t=\""))
            if key == "host" {
                if let current { blocks.append(current) }
                current = (value.split(separator: " ").map(String.init), [])
            } else if key == "match" {
                if let current { blocks.append(current) }
                current = nil
            } else if current != nil {
                current!.settings.append((key, value))
            } else {
                blocks.append((["*"], [(key, value)]))
            }
        }
        if let current { blocks.append(current) }
    }

    func settings(for host: String) -> HostSettings {
        var result = HostSettings()
        for block in blocks {
            let positive = block.patterns.filter { !$0.hasPrefix("!") }
            let negated = block.patterns.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()) }
            guard positive.contains(where: { Glob.match(Array($0.utf8), Array(host.utf8)) }),
                !negated.contains(where: { Glob.match(Array($0.utf8), Array(host.utf8)) })
            else { continue }
            for (key, value) in block.settings {
                switch key {
                case "hostname" where result.hostName == nil: result.hostName = value
                case "user" where result.user == nil: result.user = value
                case "port" where result.port == nil: result.port = Int(value)
                case "identityfile" where result.identityFile == nil: result.identityFile = value
                default: break
                }
            }
        }
        return result
    }
}
