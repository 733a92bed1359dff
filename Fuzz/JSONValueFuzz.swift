// libFuzzer target `jsonvalue`: JSONValueParser -> JSONValueWriter -> JSONValueParser.
//
// Properties checked:
// - parse fails exactly when JSONScanner.validate does, with the same error, except
//   for the depth limit, which is reported only for text nested deeper than
//   defaultMaxDepth containers (counted independently here).
// - The pretty and compact writers' output parses back to an equal value; pretty
//   output is stable (write(parse(write(v))) == write(v)), has LF line ends, no trailing
//   spaces and a final newline; writing with the file's detected indent round-trips too.
// - For a document (scanDocument accepts it) the value is an object whose keys are the
//   document's keys in first-occurrence order, each with the value of its last
//   occurrence, parsed on its own from the scanner's value range.
// - A top-level string decodes as the independent reference decoder does.
// - Equality is reflexive; dismantle() empties a copy without touching the original.
// - An array of three values is a three-way merge input: see checkMerge.

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonValueFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    checkJSONValue(fuzzInput(data, size))
    return 0
}

/// Deepest container nesting of text that validated (brackets outside strings).
private func nestingDepth(_ bytes: [UInt8]) -> Int {
    var depth = 0, deepest = 0, inString = false, escaped = false
    for b in bytes {
        if inString {
            if escaped { escaped = false } else if b == 0x5C { escaped = true } else if b == 0x22 { inString = false }
            continue
        }
        switch b {
        case 0x22: inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
            deepest = max(deepest, depth)
        case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
        default: break
        }
    }
    return deepest
}

private func parseOrFail(_ bytes: [UInt8], _ what: String, _ context: @autoclosure () -> String) -> JSONValue? {
    do { return try JSONValueParser.parse(bytes) } catch {
        check(false, "\(what) does not parse back (\(error)): \(show(bytes)) from \(context())")
        return nil
    }
}

func checkJSONValue(_ bytes: [UInt8]) {
    var validateError: JSONSyntaxError?
    do { try JSONScanner.validate(bytes) } catch { validateError = error }

    let value: JSONValue
    do {
        value = try JSONValueParser.parse(bytes)
    } catch {
        if let validateError {
            check(error == validateError, "parse error \(error) differs from validate error \(validateError)")
        } else {
            check(
                error.reason == "nesting deeper than \(JSONValueParser.defaultMaxDepth) levels",
                "parse rejected valid JSON: \(error) for \(show(bytes))")
            check(nestingDepth(bytes) > JSONValueParser.defaultMaxDepth, "depth error for depth \(nestingDepth(bytes))")
            check(
                error.offset < bytes.count
                    && (bytes[error.offset] == UInt8(ascii: "[") || bytes[error.offset] == UInt8(ascii: "{")),
                "depth error not at a bracket: \(error)")
        }
        return
    }
    check(validateError == nil, "parse accepted what validate rejects: \(show(bytes))")
    check(nestingDepth(bytes) <= JSONValueParser.defaultMaxDepth, "parse accepted depth \(nestingDepth(bytes))")
    check(value == value, "value not equal to itself")

    // Round trips.
    let pretty = JSONValueWriter.write(value)
    check(pretty.last == 0x0A, "pretty output has no final newline")
    check(!pretty.contains(0x0D), "pretty output contains CR")
    check(
        !zip(pretty, pretty.dropFirst()).contains { $0 == (0x20, 0x0A) },
        "pretty output has trailing spaces: \(show(pretty))")
    if let reparsed = parseOrFail(pretty, "pretty output", show(bytes)) {
        check(reparsed == value, "pretty output parses to a different value: \(show(pretty)) from \(show(bytes))")
        check(JSONValueWriter.write(reparsed) == pretty, "pretty output not stable: \(show(pretty))")
    }
    let compact = JSONValueWriter.writeCompact(value)
    check(!compact.contains(0x0A) && !compact.contains(0x0D), "compact output has a line break")
    check(value.description.utf8.elementsEqual(compact), "description is not the compact form")
    if let reparsed = parseOrFail(compact, "compact output", show(bytes)) {
        check(reparsed == value, "compact output parses to a different value: \(show(compact)) from \(show(bytes))")
    }
    let indent = JSONValueWriter.detectIndent(of: bytes)
    check(
        indent == "\t" || (1...8).contains(indent.count) && indent.allSatisfy { $0 == " " },
        "odd indent \(indent.debugDescription)")
    if indent != "  ",
        let reparsed = parseOrFail(JSONValueWriter.write(value, indent: indent), "indented output", show(bytes))
    {
        check(reparsed == value, "output with indent \(indent.debugDescription) parses to a different value")
    }

    // Against the scanner's view of a document.
    if let scanned = try? JSONScanner.scanDocument(bytes) {
        guard case .object(let object) = value else {
            check(false, "a document parsed to \(value.kind)")
            return
        }
        var expectedKeys: [String] = []
        var lastIndex: [String: Int] = [:]
        for (i, member) in scanned.members.enumerated() {
            if lastIndex[member.key] == nil { expectedKeys.append(member.key) }
            lastIndex[member.key] = i
        }
        check(
            object.keys.count == expectedKeys.count && zip(object.keys, expectedKeys).allSatisfy { sameBytes($0, $1) },
            "object keys \(Array(object.keys)) differ from the scanner's \(expectedKeys)")
        for key in expectedKeys {
            let member = scanned.members[lastIndex[key]!]
            guard let alone = parseOrFail(Array(bytes[member.valueRange]), "member value", show(bytes)) else {
                continue
            }
            check(object[key] == alone, "value of \(key.debugDescription) differs from its text parsed alone")
        }
    }
    if case .string(let text) = value {
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let token = bytes[start...].drop(while: isJSONWhitespace).reversed().drop(while: isJSONWhitespace).reversed()
        check(
            sameBytes(text, ReferenceJSON.decodeStringToken(Array(token)[...])),
            "top-level string decodes differently from the reference")
    }

    var copy = value
    copy.dismantle()
    check(copy == .null, "dismantle left \(copy.kind)")
    check(JSONValueWriter.write(value) == pretty, "dismantling a copy changed the original")
    if case .array(let three) = value, three.count == 3 {
        checkMerge(base: three[0], local: three[1], remote: three[2])
    }
}

/// The three-way merge on an input `[base, local, remote]` (docs/SYNC.md#arrays): it ends,
/// a side that did not change gives the other side, both sides the same gives that, and
/// swapping the sides (with the later save) gives the same arrays everywhere. With
/// `"tags"` declared a set and `items.*.n` a counter, so those paths are reached too.
func checkMerge(base: JSONValue, local: JSONValue, remote: JSONValue) {
    let arrays = FieldMerge.ArrayRules(sets: ["tags", "*.tags"], keys: [:])
    func merge(_ b: JSONValue?, _ l: JSONValue, _ r: JSONValue, _ later: FieldMerge.Winner) -> FieldMerge.Result {
        FieldMerge.merge(base: b, local: l, remote: r, collisions: later, counters: ["items.*.n"], arrays: arrays)
    }
    for later in [FieldMerge.Winner.local, .remote] {
        check(merge(base, base, remote, later).merged == remote, "local unchanged must give remote")
        check(merge(base, local, base, later).merged == local, "remote unchanged must give local")
        check(merge(base, local, local, later).merged == local, "both the same must give it")
        let one = merge(base, local, remote, later)
        let other = merge(base, remote, local, later == .local ? .remote : .local)
        check(
            arraysOf(one.merged) == arraysOf(other.merged),
            "arrays differ when the sides are swapped: base \(base) local \(local) remote \(remote)")
        _ = merge(nil, local, remote, later)
    }
}

/// Every array in a value, compactly, in a walk that does not depend on object key order
/// (keys sorted), so only the arrays' contents are compared.
private func arraysOf(_ value: JSONValue) -> [String] {
    var out: [String] = []
    var pending = [value]
    while let next = pending.popLast() {
        switch next {
        case .array(let items):
            out.append(String(decoding: JSONValueWriter.writeCompact(.array(items.map(sortedKeys))), as: UTF8.self))
            pending += items
        case .object(let members):
            pending += members.keys.sorted().map { members[$0]! }
        default: break
        }
    }
    return out
}

private func sortedKeys(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let members):
        .object(.init(uniqueKeysWithValues: members.keys.sorted().map { ($0, sortedKeys(members[$0]!)) }))
    case .array(let items): .array(items.map(sortedKeys))
    default: value
    }
}
