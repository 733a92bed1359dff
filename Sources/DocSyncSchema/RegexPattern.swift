// `pattern` and `patternProperties` regular expressions.
//
// JSON Schema specifies ECMA-262 regular expressions; these run on ICU through
// NSRegularExpression, which agrees on classes, quantifiers, anchors and \p{…}. The class
// escapes differ: ECMA's \d and \w are ASCII-only and its \s has its own list, so those
// six escapes are rewritten to explicit sets before ICU sees them (ICU nests sets, so this
// works inside brackets too). Left as known differences: ICU accepts some syntax ECMA-262
// rejects ((?i), (?#…), \a) and rejects the empty classes [] and [^]. Patterns are not
// anchored (a match anywhere counts).

import Foundation

/// A compiled expression. NSRegularExpression is immutable and documented thread-safe.
struct RegexPattern: @unchecked Sendable {
    let source: String
    private let regex: NSRegularExpression

    init?(_ source: String) {
        guard let regex = try? NSRegularExpression(pattern: ecmaClassEscapes(source), options: []) else { return nil }
        self.source = source
        self.regex = regex
    }

    func matches(_ text: String) -> Bool {
        let range = NSRange(location: 0, length: text.utf16.count)
        return regex.firstMatch(in: text, options: [], range: range) != nil
    }
}

private let ecmaWhitespace =
    #"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}"#

/// `\d`, `\w`, `\s` and their negations as ECMA-262 defines them, spelled for ICU.
func ecmaClassEscapes(_ pattern: String) -> String {
    guard pattern.contains("\\") else { return pattern }
    var result = ""
    var iterator = pattern.makeIterator()
    while let c = iterator.next() {
        guard c == "\\", let escaped = iterator.next() else {
            result.append(c)
            continue
        }
        switch escaped {
        case "d": result += "[0-9]"
        case "D": result += "[^0-9]"
        case "w": result += "[a-zA-Z0-9_]"
        case "W": result += "[^a-zA-Z0-9_]"
        case "s": result += "[" + ecmaWhitespace + "]"
        case "S": result += "[^" + ecmaWhitespace + "]"
        default: result += "\\" + String(escaped)
        }
    }
    return result
}
