import Collections

/// Reading and replacing values by dotted field path (FieldMerge's path syntax), and the
/// fields where two documents differ. Used for conflict records (which fields collided)
/// and `docsync resolve --take` (replace exactly those fields, nothing else).
public enum FieldPaths {
    /// Reserved top-level members, never a field of a conflict.
    static let reserved: Set<String> = ["refId", "changesetId"]

    /// Dotted paths where `a` and `b` differ: objects are compared key by key, anything
    /// else (arrays, scalars, a type change) is one field. Iterative.
    public static func differing(_ a: JSONValue, _ b: JSONValue) -> [String] {
        var out: [String] = []
        var stack: [([String], JSONValue?, JSONValue?)] = [([], a, b)]
        while let (keys, x, y) = stack.popLast() {
            if case .object(let l)? = x, case .object(let r)? = y {
                var names = Array(l.keys)
                for key in r.keys where l[key] == nil { names.append(key) }
                for key in names.reversed() where !(keys.isEmpty && reserved.contains(key)) {
                    stack.append((keys + [key], l[key], r[key]))
                }
            } else if x != y {
                out.append(FieldMerge.path(keys))
            }
        }
        return out
    }

    /// The field a conflict at `path` is settled at: `path` itself, or, where `path` goes
    /// into an array in any of `documents` (an element of a merged array: its index differs
    /// between versions), the array. Taking a side then takes that side's whole array.
    public static func settledField(_ path: String, in documents: [JSONValue]) -> String {
        let keys = FieldMerge.keys(inPath: path)
        var currents = documents.map { Optional($0) }
        for (depth, key) in keys.enumerated() {
            if currents.contains(where: { if case .array? = $0 { true } else { false } }) {
                return FieldMerge.path(Array(keys.prefix(depth)))
            }
            currents = currents.map { current in
                guard case .object(let members)? = current else { return nil }
                return members[key]
            }
        }
        return path
    }

    /// The value at `path` (nil: absent).
    public static func value(at path: String, in root: JSONValue) -> JSONValue? {
        var current = root
        for key in FieldMerge.keys(inPath: path) {
            guard case .object(let members) = current, let next = members[key] else { return nil }
            current = next
        }
        return current
    }

    /// `root` with the value at `path` replaced by `value` (nil removes it). Missing
    /// objects on the way are created; a non-object on the way is replaced by one.
    public static func setting(_ value: JSONValue?, at path: String, in root: JSONValue) -> JSONValue {
        let keys = FieldMerge.keys(inPath: path)
        guard let first = keys.first else { return value ?? root }
        guard case .object(var members) = root else {
            return value.map { setting($0, at: path, in: .object([:])) } ?? root
        }
        if keys.count == 1 {
            if let value { members[first] = value } else { members.removeValue(forKey: first) }
        } else {
            let rest = FieldMerge.path(Array(keys.dropFirst()))
            let child = members[first] ?? .object([:])
            members[first] = setting(value, at: rest, in: child)
        }
        return .object(members)
    }
}
