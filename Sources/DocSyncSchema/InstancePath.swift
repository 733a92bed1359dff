// The instance path (a JSON pointer, RFC 6901) built while validating. Pointers are
// escaped, split and followed by `JSONPointer` (DocSyncJSON).

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
        JSONPointer.pointer(tokens)
    }
}
