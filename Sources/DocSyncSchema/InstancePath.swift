// JSON pointers (RFC 6901): building the instance path while validating, and reading
// pointer fragments of `$ref`.

import DocSyncJSON
import Foundation

/// The path to the value being validated, kept as tokens and written out only when an
/// error is reported.
struct InstancePath {
    private var tokens: [String] = []

    func appending(_ key: String) -> InstancePath {
        var copy = self
        copy.tokens.append(key)
        return copy
    }

    func appending(_ index: Int) -> InstancePath { appending(String(index)) }

    /// "/items/0/qty"; "" for the root.
    var pointer: String {
        tokens.map { "/" + escapePointerToken($0) }.joined()
    }
}

func escapePointerToken(_ token: String) -> String {
    guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
    return token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
}

/// The tokens of a pointer ("/a~1b/0" → ["a/b", "0"]), or nil when it is not a pointer.
func pointerTokens(_ pointer: String) -> [String]? {
    if pointer.isEmpty { return [] }
    guard pointer.hasPrefix("/") else { return nil }
    return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
        String($0).replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
    }
}

/// The value a pointer names inside `root`, or nil.
func resolvePointer(_ tokens: [String], in root: JSONValue) -> JSONValue? {
    var current = root
    for token in tokens {
        switch current {
        case .object(let members):
            guard let next = members[token] else { return nil }
            current = next
        case .array(let items):
            guard let index = Int(token), index >= 0, index < items.count,
                  token == "0" || !token.hasPrefix("0") else { return nil }
            current = items[index]
        default:
            return nil
        }
    }
    return current
}
