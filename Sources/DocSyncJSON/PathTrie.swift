// The paths the merge treats specially, declared by dotted path (see FieldMerge.swift).

/// Counter, reserved, set and identity-array paths as a tree of keys, so each key is
/// checked in O(1) while walking and no path text is built unless a conflict is reported.
/// A `*` key matches any key or array element that has no literal entry.
struct PathTrie {
    static let counter: UInt8 = 1
    static let reserved: UInt8 = 2
    static let set: UInt8 = 4

    var children: [[String: Int]] = [[:]]
    var flags: [UInt8] = [0]
    /// The configured identity member of arrays at a node.
    var arrayKeys: [Int: String] = [:]

    mutating func insert(_ keys: [String], flag: UInt8, arrayKey: String? = nil) {
        guard !keys.isEmpty else { return }  // the root is never a counter or reserved
        var node = 0
        for key in keys {
            if let next = children[node][key] {
                node = next
            } else {
                children.append([:])
                flags.append(0)
                children[node][key] = children.count - 1
                node = children.count - 1
            }
        }
        flags[node] |= flag
        if let arrayKey { arrayKeys[node] = arrayKey }
    }

    /// The node for `key` under `node` (a literal key before `*`); -1 when no declared
    /// path goes there.
    func child(_ node: Int, _ key: String) -> Int {
        node < 0 ? -1 : children[node][key] ?? children[node]["*"] ?? -1
    }

    func has(_ node: Int, _ flag: UInt8) -> Bool {
        node >= 0 && flags[node] & flag != 0
    }
}
