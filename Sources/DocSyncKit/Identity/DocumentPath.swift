/// Relative document paths as they travel between replicas. Anything that could
/// escape the tree or the remote root is refused before it reaches the filesystem.
public enum DocumentPath {
    public static let metadataFolder = ".docsync"

    /// Why `path` is not acceptable as a document path, or nil when it is.
    public static func problem(_ path: String) -> String? {
        if path.isEmpty { return "empty path" }
        if path.utf8.count > 4096 { return "path longer than 4096 bytes" }
        if path.hasPrefix("/") { return "absolute path" }
        if path.unicodeScalars.contains(where: { $0.value == 0 }) { return "NUL byte in path" }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 }) { return "control character in path" }
        if !path.hasSuffix(".json") { return "not a .json path" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        for part in parts {
            if part.isEmpty { return "empty path component" }
            if part == "." || part == ".." { return "'\(part)' path component" }
            if part.utf8.count > 255 { return "path component longer than 255 bytes" }
        }
        // Reserved at any depth: a `.docsync/` below the root makes its folder another
        // tree, which the scan does not enter (one commit adding `sub/.docsync/x.json`
        // would otherwise hide every document of `sub/`); `.git` at the root is the
        // tree's own repository, if it is one.
        if let depth = parts.dropLast().firstIndex(of: Substring(metadataFolder)) {
            return depth == 0 ? "path inside .docsync/" : "path inside .docsync/ (a reserved name at any depth)"
        }
        if parts.count > 1 && parts.first == ".git" { return "path inside .git/" }
        if parts.contains(where: { $0.hasPrefix(".docsync-tmp-") }) { return "temporary file name" }
        return nil
    }

    public static func isSafe(_ path: String) -> Bool { problem(path) == nil }

    /// `path` with control characters shown as escapes (`\n`, `\u{1b}`), for messages.
    public static func printable(_ path: String) -> String {
        var out = ""
        for scalar in path.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x09: out += "\\t"
            case 0x0D: out += "\\r"
            case 0..<0x20, 0x7F: out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A file name for `refId` inside a metadata folder: readable where the id is
    /// plain, percent-encoded otherwise, so no id can name a path outside that folder.
    public static func fileName(forRefId refId: String) -> String {
        var out = ""
        for byte in refId.utf8 {
            let plain =
                (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122) || byte == 45
                || byte == 95
            if plain || (byte == 46 && !out.isEmpty) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(2)
            }
        }
        if out.utf8.count > 200 { out = String(out.prefix(136)) + "~" + ContentHash.of(refId).prefix(40) }
        return out
    }

    /// A path next to `path` that nothing occupies: `name~<tag>.json`, `name~<tag>-2.json`…
    public static func sibling(of path: String, tag: String, isFree: (String) -> Bool) -> String {
        let stem = String(path.dropLast(5))
        var candidate = stem + "~" + tag + ".json"
        var n = 2
        while !isFree(candidate) {
            candidate = stem + "~" + tag + "-\(n).json"
            n += 1
        }
        return candidate
    }
}

extension String {
    func leftPadded(_ width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
