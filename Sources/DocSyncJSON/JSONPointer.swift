// JSON pointers (RFC 6901): "/items/0/qty" names member "items", its element 0, that
// element's member "qty"; "" names the whole value. In a token "~" is written "~0" and
// "/" is written "~1". One place for the rule, used by diffs, blame, the merge driver's
// collisions, schema errors and `$ref` fragments.
//
// Tokens are read and written by Swift `Character`s, as every copy this replaced did: a
// "~" or "/" followed by a combining mark is one character that is neither, so it is
// neither escaped nor a separator. Pointers docsync prints are unchanged by that choice;
// RFC 6901 itself counts code points.

public enum JSONPointer {
    /// One reference token as it is written in a pointer: "a/b~c" → "a~1b~0c".
    public static func escape(_ token: String) -> String {
        guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
        var out = ""
        for ch in token {
            switch ch {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.append(ch)
            }
        }
        return out
    }

    /// The pointer of a list of tokens: ["a/b", "0"] → "/a~1b/0"; [] → "" (the whole value).
    public static func pointer<Tokens: Sequence>(_ tokens: Tokens) -> String where Tokens.Element == String {
        tokens.map { "/" + escape($0) }.joined()
    }

    /// `pointer` with one more token: ("/a", "b/c") → "/a/b~1c".
    public static func appending(_ token: String, to pointer: String) -> String {
        pointer + "/" + escape(token)
    }

    /// The unescaped tokens of a pointer: "/a~1b/0" → ["a/b", "0"]; "" → []; "/" → [""].
    /// Nil when it is not a pointer: not "" and not starting with "/", or a "~" not
    /// followed by "0" or "1". With `keepingInvalidEscapes` such a "~" is read as itself
    /// instead ("/a~2" → ["a~2"]), as `$ref` fragments always have been.
    public static func tokens(_ pointer: String, keepingInvalidEscapes: Bool = false) -> [String]? {
        if pointer.isEmpty { return [] }
        guard pointer.hasPrefix("/") else { return nil }
        var out: [String] = []
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let token = unescape(raw, keepingInvalidEscapes: keepingInvalidEscapes) else { return nil }
            out.append(token)
        }
        return out
    }

    /// One written token unescaped: "a~1b~0c" → "a/b~c"; nil for a "~" not followed by
    /// "0" or "1" (unless `keepingInvalidEscapes`: then it stays as written).
    public static func unescape(_ token: Substring, keepingInvalidEscapes: Bool = false) -> String? {
        guard token.contains("~") else { return String(token) }
        var out = ""
        var tilde = false
        for ch in token {
            if tilde {
                tilde = false
                switch ch {
                case "0":
                    out += "~"
                    continue
                case "1":
                    out += "/"
                    continue
                default:
                    guard keepingInvalidEscapes else { return nil }
                    out += "~"  // then `ch` as any other character, which may start an escape
                }
            }
            if ch == "~" { tilde = true } else { out.append(ch) }
        }
        if tilde {
            guard keepingInvalidEscapes else { return nil }
            out += "~"
        }
        return out
    }

    /// The value `tokens` name inside `root` (nil: not there). An array element is named by
    /// its index without leading zeros ("0", "12"; not "01").
    public static func value(at tokens: [String], in root: JSONValue) -> JSONValue? {
        var current = root
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), index >= 0, index < items.count,
                    token == "0" || !token.hasPrefix("0")
                else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// The value `pointer` names inside `root` (nil: not there, or not a pointer).
    public static func value(at pointer: String, in root: JSONValue) -> JSONValue? {
        tokens(pointer).flatMap { value(at: $0, in: root) }
    }
}
