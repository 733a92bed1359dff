// `pattern` and `patternProperties` regular expressions.
//
// JSON Schema specifies ECMA-262 regular expressions; these run on ICU through
// NSRegularExpression, which agrees on everything the required test suite uses
// (classes, quantifiers, anchors, \p{…}). Known differences: ICU's \d and \w also match
// non-ASCII digits and letters. Patterns are not anchored (a match anywhere counts).

import Foundation

/// A compiled expression. NSRegularExpression is immutable and documented thread-safe.
struct RegexPattern: @unchecked Sendable {
    let source: String
    private let regex: NSRegularExpression

    init?(_ source: String) {
        guard let regex = try? NSRegularExpression(pattern: source, options: []) else { return nil }
        self.source = source
        self.regex = regex
    }

    func matches(_ text: String) -> Bool {
        let range = NSRange(location: 0, length: text.utf16.count)
        return regex.firstMatch(in: text, options: [], range: range) != nil
    }
}
