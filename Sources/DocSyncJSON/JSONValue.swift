// A JSON value tree for field-level merging.
//
// Choices worth knowing:
// - Objects keep their key order (`OrderedDictionary`), so a merged file keeps the order
//   the user wrote.
// - A number is kept as the exact text it was written as: 1.0 stays "1.0", 1e400 and
//   20-digit integers are kept digit for digit. Numbers are never converted, so equality
//   of numbers is textual ("1.0" != "1", "1e2" != "100").
// - Equality is exact and order-sensitive: objects are equal when they hold the same keys
//   in the same order with equal values; strings and keys compare by their UTF-8 bytes
//   (not by Swift's canonical equivalence). It is iterative, so it works on values nested
//   100,000 levels deep.
// - Duplicate keys in parsed input: the last value wins, at the position of the key's
//   first occurrence (as JavaScript's JSON.parse does).
// - Keys are Swift `String`s, so two keys that differ only by Unicode normalization
//   (precomposed "é" vs "e" + U+0301) are one key in an object: the later one wins.
// - Deep values: Swift frees nested values recursively, so dropping a value nested tens
//   of thousands of levels deep overflows the thread's stack. The parser refuses input
//   nested deeper than `JSONValueParser.defaultMaxDepth` unless told otherwise; whoever
//   builds deeper values must free them with `dismantle()`.
//
// The case is not `indirect`: the containers already live on the heap, and boxing every
// scalar would cost an allocation per number, string and literal.

import Collections

public enum JSONValue: Sendable {
    /// Key order is kept.
    case object(OrderedDictionary<String, JSONValue>)
    case array([JSONValue])
    case string(String)
    /// The number's text exactly as written. It must match the JSON number grammar
    /// (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`): the parser only makes
    /// such text and the writer copies it verbatim.
    case number(String)
    case bool(Bool)
    case null

    /// An object of these members, in order; a repeated key keeps its first position and
    /// its last value (as the parser does with duplicate keys).
    public init(members: some Sequence<(String, JSONValue)>) {
        var object = OrderedDictionary<String, JSONValue>()
        for (key, value) in members { object[key] = value }
        self = .object(object)
    }

    public var kind: JSONValueKind {
        switch self {
        case .object: .object
        case .array: .array
        case .string: .string
        case .number: .number
        case .bool: .bool
        case .null: .null
        }
    }

    /// Replaces the value with `null`, freeing the old tree without recursion.
    ///
    /// Swift frees a nested value recursively, one stack frame chain per level, which
    /// overflows an 8 MB stack somewhere past 50,000 levels (much sooner on a small
    /// thread stack). Call this on values that may be that deep (for example ones parsed
    /// with `maxDepth: nil`) before the last copy goes away. Parts shared with another copy
    /// are only walked; they are freed when their last holder lets go, so dismantle that
    /// holder too.
    public mutating func dismantle() {
        var pending: [JSONValue] = [self]
        self = .null
        while var value = pending.popLast() {
            switch value {
            case .array(let items):
                value = .null
                pending.append(contentsOf: items)
            case .object(let members):
                value = .null
                pending.append(contentsOf: members.values)
            default:
                break
            }
            // `items`/`members` go away here; their children are still held by `pending`,
            // so nothing below is freed recursively.
        }
    }
}

// MARK: - Equality

extension JSONValue: Equatable {
    /// Exact, order-sensitive, iterative equality (see the file header).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        var pending: [(JSONValue, JSONValue)] = [(lhs, rhs)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case let (.object(x), .object(y)):
                guard x.count == y.count else { return false }
                let xk = x.keys, yk = y.keys, xv = x.values, yv = y.values
                for i in (0..<x.count).reversed() {
                    guard sameText(xk[i], yk[i]) else { return false }
                    guard shallowMatch(xv[i], yv[i]) else { return false }
                    if xv[i].isContainer { pending.append((xv[i], yv[i])) }
                }
            case let (.array(x), .array(y)):
                guard x.count == y.count else { return false }
                for i in (0..<x.count).reversed() {
                    guard shallowMatch(x[i], y[i]) else { return false }
                    if x[i].isContainer { pending.append((x[i], y[i])) }
                }
            default:
                guard shallowMatch(a, b) else { return false }
            }
        }
        return true
    }

    fileprivate var isContainer: Bool {
        switch self {
        case .object, .array: true
        default: false
        }
    }
}

/// Scalars: equal. Containers: same kind and count (members are compared later).
private func shallowMatch(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case let (.object(x), .object(y)): x.count == y.count
    case let (.array(x), .array(y)): x.count == y.count
    case let (.string(x), .string(y)): sameText(x, y)
    case let (.number(x), .number(y)): sameText(x, y)
    case let (.bool(x), .bool(y)): x == y
    case (.null, .null): true
    default: false
    }
}

@inline(__always) private func sameText(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}

// MARK: - Description and literals

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text (`JSONValueWriter.compactString`).
    public var description: String {
        JSONValueWriter.compactString(self)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Keys in the order written; a repeated key keeps its first position and last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(members: elements)
    }
}

extension JSONValue {
    /// Equal as JSON data: objects by key whatever the order of their members (JSON gives
    /// that order no meaning), arrays element by element, scalars exactly. Iterative, like
    /// `==`. Why: a merge whose values are exactly one side's, laid out in the other side's
    /// order, is that side's version, not a new one to push.
    public func equalsIgnoringMemberOrder(_ other: JSONValue) -> Bool {
        var pending: [(JSONValue, JSONValue)] = [(self, other)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case let (.object(x), .object(y)):
                guard x.count == y.count else { return false }
                for (key, value) in x {
                    guard let match = y[key] else { return false }
                    pending.append((value, match))
                }
            case let (.array(x), .array(y)):
                guard x.count == y.count else { return false }
                for i in x.indices { pending.append((x[i], y[i])) }
            default:
                guard a == b else { return false }
            }
        }
        return true
    }
}
