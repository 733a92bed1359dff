// Errors are reported in the order of the places they point to in the validated value
// (members in the order written, items by index, a container before its contents), and
// in schema keyword order for one place. Evaluation finds them in schema order, so they
// are sorted once at the end, only when there is more than one.

import DocSyncJSON

func inDocumentOrder(_ errors: [ValidationError], of value: JSONValue) -> [ValidationError] {
    guard errors.count > 1 else { return errors }
    let keyed = errors.enumerated().map {
        (offset: $0.offset, tokens: JSONPointer.tokens($0.element.instancePath) ?? [], error: $0.element)
    }
    return keyed.sorted { a, b in
        let order = compare(a.tokens, b.tokens, in: value)
        return order == 0 ? a.offset < b.offset : order < 0
    }.map(\.error)
}

/// -1, 0 or 1 as the place `a` comes before, at or after the place `b` in `value`.
private func compare(_ a: [String], _ b: [String], in value: JSONValue) -> Int {
    let common = zip(a, b).prefix { $0 == $1 }.count
    if common == a.count || common == b.count { return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1) }
    let parent = JSONPointer.value(at: Array(a[..<common]), in: value)
    let (x, y) = (position(of: a[common], in: parent), position(of: b[common], in: parent))
    return x == y ? 0 : (x < y ? -1 : 1)
}

private func position(of token: String, in container: JSONValue?) -> Int {
    switch container {
    case .object(let members): members.index(forKey: token) ?? .max
    case .array: Int(token) ?? .max
    default: .max
    }
}
