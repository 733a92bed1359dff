// Keywords that apply subschemas to the same value: $ref, $dynamicRef, allOf, anyOf,
// oneOf, not, if/then/else. Annotations (evaluated members and items) flow up only from
// subschemas that passed.

import DocSyncJSON

extension Evaluator {
    /// `$ref`, `$dynamicRef`, `allOf`/`anyOf`/`oneOf`, `not`, `if`: subschemas on the same value.
    func applyApplicator(
        _ kind: Keyword, _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue,
        _ path: InstancePath, _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        switch kind {
        case .ref:
            if case .string(let ref) = value { outcome.absorb(followReference(ref, instance, path, context)) }
        case .dynamicRef:
            if case .string(let ref) = value {
                outcome.absorb(followDynamicReference(ref, instance, path, context))
            }
        case .combination:
            if case .array(let schemas) = value {
                checkCombination(keyword, schemas, instance, path, context, &outcome)
            }
        case .not: checkNot(value, instance, path, context, &outcome)
        case .if: checkConditional(value, keywords, instance, path, context, &outcome)
        default: break
        }
    }

    func followReference(_ ref: String, _ instance: JSONValue, _ path: InstancePath, _ context: EvaluationContext)
        -> Outcome
    {
        guard let target = index.target(of: ref, base: context.base) else { return unresolved(ref, path) }
        return evaluate(target.schema, instance, path, entering(target, context))
    }

    /// `$dynamicRef`: resolved like `$ref`, unless its target declares the `$dynamicAnchor`
    /// it names; then the outermost resource in the dynamic scope that declares that anchor
    /// wins.
    func followDynamicReference(
        _ ref: String, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext
    ) -> Outcome {
        guard var target = index.target(of: ref, base: context.base) else { return unresolved(ref, path) }
        let name = percentDecode(splitFragment(ref).fragment)
        if !name.isEmpty, !name.hasPrefix("/"), case .object(let keywords) = target.schema,
            case .string(name) = keywords["$dynamicAnchor"]
        {
            for resource in context.scope where index.hasDynamicAnchor(name, in: resource) {
                if let outer = index.resolve(resource + "#" + name) { target = outer }
                break
            }
        }
        return evaluate(target.schema, instance, path, entering(target, context))
    }

    private func entering(_ target: SchemaLocation, _ context: EvaluationContext) -> EvaluationContext {
        var context = context
        context.base = target.base
        // A target with its own `$id` enters that resource (evaluate adds it to the scope);
        // any other enters the resource that holds it.
        let hasID = if case .object(let keywords) = target.schema, keywords["$id"] != nil { true } else { false }
        if !hasID, context.scope.last != target.base { context.scope.append(target.base) }
        return context
    }

    private func unresolved(_ ref: String, _ path: InstancePath) -> Outcome {
        var outcome = Outcome()
        outcome.fail(path, "$ref", "cannot resolve \(ref)")
        return outcome
    }

    func checkCombination(
        _ keyword: String, _ schemas: [JSONValue], _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        let results = schemas.map { evaluate($0, instance, path, context) }
        let passed = results.filter(\.isValid)
        switch keyword {
        case "allOf":
            for result in results { outcome.absorb(result) }
        case "anyOf":
            if passed.isEmpty {
                outcome.fail(path, keyword, "matches none of the anyOf schemas")
            }
            for result in passed { outcome.absorbAnnotations(result) }
        default:
            if passed.count == 1 {
                outcome.absorbAnnotations(passed[0])
            } else if passed.isEmpty {
                outcome.fail(path, keyword, "matches none of the oneOf schemas")
            } else {
                outcome.fail(path, keyword, "matches \(passed.count) of the oneOf schemas, expected exactly one")
            }
        }
    }

    func checkNot(
        _ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ context: EvaluationContext,
        _ outcome: inout Outcome
    ) {
        if evaluate(schema, instance, path, context).isValid {
            outcome.fail(path, "not", "matches the schema it must not match")
        }
    }

    /// `if` with its `then` and `else` siblings.
    func checkConditional(
        _ condition: JSONValue, _ keywords: JSONObject, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        let test = evaluate(condition, instance, path, context)
        if test.isValid {
            outcome.absorbAnnotations(test)
            if let then = keywords["then"] { outcome.absorb(evaluate(then, instance, path, context)) }
        } else if let otherwise = keywords["else"] {
            outcome.absorb(evaluate(otherwise, instance, path, context))
        }
    }
}
