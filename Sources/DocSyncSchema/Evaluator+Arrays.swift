// Keywords on arrays: prefixItems/items (2020-12), items/additionalItems (draft-07, where
// `items` may be an array), contains with minContains/maxContains, minItems/maxItems,
// uniqueItems, unevaluatedItems.

import DocSyncJSON

extension Evaluator {
    /// The array keywords but `unevaluatedItems` (which waits for all the others).
    func checkArrayKeyword(
        _ kind: Keyword, _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue,
        _ path: InstancePath, _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        switch kind {
        case .items, .prefixItems, .additionalItems:
            checkItems(keyword, value, keywords, instance, path, context, &outcome)
        case .contains: checkContains(value, keywords, instance, path, context, &outcome)
        case .itemCount: checkItemCount(keyword, value, instance, path, &outcome)
        case .uniqueItems: checkUniqueItems(value, instance, path, &outcome)
        default: break
        }
    }

    func checkItems(
        _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue,
        _ path: InstancePath, _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .array(let items) = instance else { return }
        // The positional schemas: prefixItems (2020-12) or an items array (draft-07).
        let positionalKeyword = draft == .draft2020_12 ? "prefixItems" : "items"
        var positional: [JSONValue]?
        if case .array(let schemas) = keywords[positionalKeyword] { positional = schemas }

        if case .array(let schemas) = value, keyword == positionalKeyword {
            for (i, item) in items.prefix(schemas.count).enumerated() {
                outcome.errors += evaluateChild(
                    schemas[i], item, path.appending(i), context,
                    keyword: keyword, reason: "item \(i) is not allowed")
            }
            markEvaluated(0..<min(items.count, schemas.count), of: items.count, &outcome)
            return
        }
        // The schema for every item after the positional ones: 2020-12 `items`, draft-07
        // `items` as one schema (no positional ones) or `additionalItems` after an items array.
        let isRest = draft == .draft2020_12 ? keyword == "items" : (keyword == "items" || positional != nil)
        guard isRest, value.isSchema else { return }
        let start = positional?.count ?? 0
        guard start < items.count else { return }
        for i in start..<items.count {
            outcome.errors += evaluateChild(
                value, items[i], path.appending(i), context, keyword: keyword,
                reason: "expected at most \(start) items, found \(items.count)")
        }
        markEvaluated(start..<items.count, of: items.count, &outcome)
    }

    /// `contains`, bounded by 2020-12 `minContains` (default 1) and `maxContains`.
    func checkContains(
        _ schema: JSONValue, _ keywords: JSONObject, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .array(let items) = instance else { return }
        var matching: [Int] = []
        for (i, item) in items.enumerated() where evaluate(schema, item, path.appending(i), context).isValid {
            matching.append(i)
        }
        var minimum = 1, maximum = Int.max
        if draft == .draft2020_12 {
            if let bound = keywords["minContains"].flatMap(count) { minimum = bound }
            if let bound = keywords["maxContains"].flatMap(count) { maximum = bound }
        }
        if matching.count < minimum {
            outcome.fail(
                path, minimum == 1 ? "contains" : "minContains",
                "expected at least \(minimum) items matching contains, found \(matching.count)")
        }
        if matching.count > maximum {
            outcome.fail(
                path, "maxContains", "expected at most \(maximum) items matching contains, found \(matching.count)")
        }
        if collectsAnnotations, !outcome.allItems { outcome.items.formUnion(matching) }
    }

    func checkItemCount(
        _ keyword: String, _ bound: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ outcome: inout Outcome
    ) {
        guard case .array(let items) = instance else { return }
        checkSize(keyword, bound, found: items.count, of: "items", path, &outcome)
    }

    func checkUniqueItems(_ flag: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        guard case .bool(true) = flag, case .array(let items) = instance else { return }
        for i in items.indices {
            for j in items.indices.dropFirst(i + 1) where jsonEqual(items[i], items[j]) {
                outcome.fail(path, "uniqueItems", "items \(i) and \(j) are equal")
                return
            }
        }
    }

    func checkUnevaluatedItems(
        _ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .array(let items) = instance, !outcome.allItems else { return }
        for (i, item) in items.enumerated() where !outcome.items.contains(i) {
            outcome.errors += evaluateChild(
                schema, item, path.appending(i), context,
                keyword: "unevaluatedItems", reason: "item \(i) is not allowed")
        }
        outcome.allItems = true
        outcome.items = []
    }

    private func markEvaluated(_ range: Range<Int>, of count: Int, _ outcome: inout Outcome) {
        guard collectsAnnotations, !outcome.allItems else { return }
        if range.lowerBound == 0, range.upperBound >= count {
            outcome.allItems = true
            outcome.items = []
        } else {
            outcome.items.formUnion(range)
        }
    }
}
