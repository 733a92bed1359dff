// URI references as `$id` and `$ref` use them: resolving against a base (RFC 3986 §5.2,
// enough of it for schema identifiers), splitting off the fragment, percent-decoding.

/// The base of a document that has no `$id` of its own. Never fetched; only a name.
let defaultBaseURI = "https://docsync.invalid/schema.json"

/// `reference` resolved against `base`. Both may carry fragments; the result keeps the
/// reference's fragment.
func resolveURI(_ reference: String, against base: String) -> String {
    let (baseURI, _) = splitFragment(base)
    if reference.hasPrefix("#") { return baseURI + reference }
    if reference.isEmpty { return baseURI }
    if hasScheme(reference) { return removeDotSegments(inPathOf: reference) }
    let parts = URIParts(baseURI)
    if reference.hasPrefix("//") { return removeDotSegments(inPathOf: parts.scheme + ":" + reference) }
    let prefix = parts.scheme + ":" + (parts.authority.map { "//" + $0 } ?? "")
    if reference.hasPrefix("/") { return removeDotSegments(inPathOf: prefix + reference) }
    if reference.hasPrefix("?") { return prefix + parts.path + reference }
    // Merge: the base path without its last segment, then the reference.
    var directory = parts.path
    if let slash = directory.lastIndex(of: "/") {
        directory = String(directory[...slash])
    } else {
        directory = parts.authority == nil ? "" : "/"
    }
    return removeDotSegments(inPathOf: prefix + directory + reference)
}

/// ("http://x/a.json", "/defs/b") from "http://x/a.json#/defs/b"; the fragment is "" when
/// there is none.
func splitFragment(_ uri: String) -> (uri: String, fragment: String) {
    guard let hash = uri.firstIndex(of: "#") else { return (uri, "") }
    return (String(uri[..<hash]), String(uri[uri.index(after: hash)...]))
}

/// "%25" → "%"; invalid escapes are kept as written.
func percentDecode(_ text: String) -> String {
    guard text.contains("%") else { return text }
    var bytes: [UInt8] = []
    let source = Array(text.utf8)
    var i = 0
    while i < source.count {
        if source[i] == UInt8(ascii: "%"), i + 2 < source.count,
            let high = hexValue(source[i + 1]), let low = hexValue(source[i + 2])
        {
            bytes.append(high << 4 | low)
            i += 3
        } else {
            bytes.append(source[i])
            i += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

private func hasScheme(_ text: String) -> Bool {
    guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isLetter else { return false }
    return text[..<colon].allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
}

/// scheme, authority (after "//"), path and query-and-after of an absolute URI.
private struct URIParts {
    var scheme = ""
    var authority: String?
    var path = ""

    init(_ uri: String) {
        guard let colon = uri.firstIndex(of: ":") else {
            path = uri
            return
        }
        scheme = String(uri[..<colon])
        var rest = uri[uri.index(after: colon)...]
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            authority = String(rest[..<end])
            rest = rest[end...]
        }
        let queryStart = rest.firstIndex(of: "?") ?? rest.endIndex
        path = String(rest[..<queryStart])
    }
}

/// Removes "." and ".." segments from the path of an absolute URI (fragment kept).
private func removeDotSegments(inPathOf uri: String) -> String {
    guard uri.contains("/."), let colon = uri.firstIndex(of: ":") else { return uri }
    let (withoutFragment, fragment) = splitFragment(uri)
    var rest = withoutFragment[withoutFragment.index(after: colon)...]
    var head = String(withoutFragment[...colon])
    if rest.hasPrefix("//") {
        let end = rest.dropFirst(2).firstIndex(of: "/") ?? rest.endIndex
        head += rest[..<end]
        rest = rest[end...]
    }
    var output: [Substring] = []
    let segments = rest.split(separator: "/", omittingEmptySubsequences: false)
    for (i, segment) in segments.enumerated() {
        switch segment {
        case ".": if i == segments.count - 1 { output.append("") }
        case "..":
            if output.count > 1 { output.removeLast() }
            if i == segments.count - 1 { output.append("") }
        default: output.append(segment)
        }
    }
    let path = output.joined(separator: "/")
    return head + path + (uri.contains("#") ? "#" + fragment : "")
}
