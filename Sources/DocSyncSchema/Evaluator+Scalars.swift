// Keywords on any value and on numbers and strings: type, enum, const (in the dispatch),
// format, the numeric bounds and multipleOf, minLength/maxLength, pattern.
//
// Numbers compare exactly (`ExactNumber`); string lengths count Unicode code points.

import DocSyncJSON

extension Evaluator {
    /// Keywords on any value (`type`, `enum`, `const`, `format`), numbers and strings.
    func checkValueKeyword(
        _ kind: Keyword, _ keyword: String, _ value: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ outcome: inout Outcome
    ) {
        switch kind {
        case .type: checkType(value, instance, path, &outcome)
        case .enum: checkEnum(value, instance, path, &outcome)
        case .const: if !jsonEqual(value, instance) { outcome.fail(path, "const", "expected \(short(value))") }
        case .format: checkFormat(value, instance, path, &outcome)
        case .numberBound: checkNumber(keyword, value, instance, path, &outcome)
        case .length: checkLength(keyword, value, instance, path, &outcome)
        case .pattern: checkPattern(value, instance, path, &outcome)
        default: break
        }
    }

    func checkType(_ expected: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        let names: [String]
        switch expected {
        case .string(let name): names = [name]
        case .array(let items): names = items.compactMap { if case .string(let name) = $0 { name } else { nil } }
        default: return
        }
        guard !names.contains(where: { has(type: $0, instance) }) else { return }
        outcome.fail(path, "type", "expected \(names.joined(separator: " or ")), found \(typeName(instance))")
    }

    func checkEnum(_ allowed: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        guard case .array(let values) = allowed, !values.contains(where: { jsonEqual($0, instance) }) else { return }
        let list = values.count <= 5 ? ": " + values.map(short).joined(separator: ", ") : ""
        outcome.fail(path, "enum", "not one of the allowed values\(list)")
    }

    func checkFormat(_ format: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        guard case .string(let name) = format, case .string(let text) = instance, !Format.check(name, text) else {
            return
        }
        outcome.fail(path, "format", "not a valid \(name)")
    }

    func checkNumber(
        _ keyword: String, _ bound: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ outcome: inout Outcome
    ) {
        guard case .number(let found) = instance, case .number(let limitText) = bound else { return }
        let ok: Bool
        if let value = Int(found), let limit = Int(limitText) {
            // Plain integers that fit in 64 bits: no decimal arithmetic needed.
            ok =
                switch keyword {
                case "minimum": value >= limit
                case "maximum": value <= limit
                case "exclusiveMinimum": value > limit
                case "exclusiveMaximum": value < limit
                default: limit <= 0 || value % limit == 0
                }
        } else {
            guard let value = ExactNumber(found), let limit = ExactNumber(limitText) else { return }
            ok =
                switch keyword {
                case "minimum": !(value < limit)
                case "maximum": !(limit < value)
                case "exclusiveMinimum": limit < value
                case "exclusiveMaximum": value < limit
                default: limit.isZero || limit.negative || value.isMultiple(of: limit)
                }
        }
        guard !ok else { return }
        let expectation =
            switch keyword {
            case "minimum": "at least \(limitText)"
            case "maximum": "at most \(limitText)"
            case "exclusiveMinimum": "more than \(limitText)"
            case "exclusiveMaximum": "less than \(limitText)"
            default: "a multiple of \(limitText)"
            }
        outcome.fail(path, keyword, "expected \(expectation), found \(found)")
    }

    func checkLength(
        _ keyword: String, _ bound: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ outcome: inout Outcome
    ) {
        guard case .string(let text) = instance else { return }
        checkSize(keyword, bound, found: text.unicodeScalars.count, of: "characters", path, &outcome)
    }

    func checkPattern(_ pattern: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        guard case .string(let source) = pattern, case .string(let text) = instance,
            let regex = index.patterns[source], !regex.matches(text)
        else { return }
        outcome.fail(path, "pattern", "does not match the pattern \(source)")
    }
}

/// True when `instance` is of the JSON Schema type `name` ("integer" includes 1.0).
func has(type name: String, _ instance: JSONValue) -> Bool {
    switch (name, instance) {
    case ("null", .null), ("boolean", .bool), ("object", .object), ("array", .array), ("string", .string),
        ("number", .number):
        true
    case ("integer", .number(let text)):
        // Text without a fraction or exponent is an integer; otherwise look at the value (1.0, 1e2).
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
            || (ExactNumber(text)?.isInteger ?? false)
    default:
        false
    }
}

/// The JSON Schema type of a value, for messages: "integer" for integral numbers.
func typeName(_ instance: JSONValue) -> String {
    switch instance {
    case .null: "null"
    case .bool: "boolean"
    case .object: "object"
    case .array: "array"
    case .string: "string"
    case .number: has(type: "integer", instance) ? "integer" : "number"
    }
}

/// A `min…` or `max…` keyword on a size (characters, items, properties): fails when
/// `found` is on the wrong side of the bound.
func checkSize(
    _ keyword: String, _ bound: JSONValue, found: Int, of unit: String, _ path: InstancePath,
    _ outcome: inout Outcome
) {
    guard let limit = count(bound) else { return }
    if keyword.hasPrefix("min"), found < limit {
        outcome.fail(path, keyword, "expected at least \(limit) \(unit), found \(found)")
    } else if keyword.hasPrefix("max"), found > limit {
        outcome.fail(path, keyword, "expected at most \(limit) \(unit), found \(found)")
    }
}

/// A non-negative integer keyword value (1.0 counts), clamped to Int.
func count(_ value: JSONValue) -> Int? {
    if case .number(let text) = value, let plain = Int(text) { return plain >= 0 ? plain : nil }
    guard let number = ExactNumber(value), number.isInteger, !number.negative else { return nil }
    if number.isZero { return 0 }
    guard number.digits.count + number.exponent <= 18 else { return .max }
    var result = 0
    for d in number.digits { result = result * 10 + Int(d) }
    for _ in 0..<number.exponent { result *= 10 }
    return result
}
