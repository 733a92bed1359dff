// Keywords on objects: properties, patternProperties, additionalProperties,
// propertyNames, required, minProperties/maxProperties, dependentRequired,
// dependentSchemas, draft-07 dependencies, unevaluatedProperties.

import DocSyncJSON

extension Evaluator {
    /// The object keywords but `unevaluatedProperties` (which waits for all the others).
    func checkObjectKeyword(
        _ kind: Keyword, _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue,
        _ path: InstancePath, _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        switch kind {
        case .properties: checkProperties(keyword, value, keywords, instance, path, context, &outcome)
        case .propertyNames: checkPropertyNames(value, instance, path, context, &outcome)
        case .required: checkRequired(value, instance, path, &outcome)
        case .propertyCount: checkPropertyCount(keyword, value, instance, path, &outcome)
        case .dependencies, .dependentOnly2020: checkDependencies(keyword, value, instance, path, context, &outcome)
        default: break
        }
    }

    /// `properties`, `patternProperties` and `additionalProperties`; the last one looks at
    /// its two siblings to know which members are additional.
    func checkProperties(
        _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue,
        _ path: InstancePath, _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .object(let members) = instance else { return }
        switch keyword {
        case "properties":
            guard case .object(let schemas) = value else { return }
            for (name, schema) in schemas {
                guard let member = members[name] else { continue }
                outcome.errors += evaluateChild(
                    schema, member, path.appending(name), context,
                    keyword: keyword, reason: "property \(name) is not allowed")
                if collectsAnnotations { outcome.properties.insert(name) }
            }
        case "patternProperties":
            guard case .object(let schemas) = value else { return }
            for (pattern, schema) in schemas {
                guard let regex = index.patterns[pattern] else { continue }
                for (name, member) in members where regex.matches(name) {
                    outcome.errors += evaluateChild(
                        schema, member, path.appending(name), context,
                        keyword: keyword, reason: "property \(name) is not allowed")
                    if collectsAnnotations { outcome.properties.insert(name) }
                }
            }
        default:
            var declared: JSONObject = [:]
            if case .object(let schemas) = keywords["properties"] { declared = schemas }
            var patterns: [RegexPattern] = []
            if case .object(let schemas) = keywords["patternProperties"] {
                patterns = schemas.keys.compactMap { index.patterns[$0] }
            }
            for (name, member) in members where declared[name] == nil && !patterns.contains(where: { $0.matches(name) })
            {
                outcome.errors += evaluateChild(
                    value, member, path.appending(name), context,
                    keyword: keyword, reason: "property \(name) is not allowed")
                if collectsAnnotations { outcome.properties.insert(name) }
            }
        }
    }

    func checkPropertyNames(
        _ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .object(let members) = instance else { return }
        for name in members.keys {
            outcome.errors += evaluateChild(
                schema, .string(name), path.appending(name), context,
                keyword: "propertyNames", reason: "property name \(name) is not allowed")
        }
    }

    func checkRequired(_ names: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ outcome: inout Outcome) {
        guard case .object(let members) = instance, case .array(let list) = names else { return }
        for case .string(let name) in list where members[name] == nil {
            outcome.fail(path, "required", "missing required property \(name)")
        }
    }

    func checkPropertyCount(
        _ keyword: String, _ bound: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ outcome: inout Outcome
    ) {
        guard case .object(let members) = instance else { return }
        checkSize(keyword, bound, found: members.count, of: "properties", path, &outcome)
    }

    /// `dependentRequired` (lists of names), `dependentSchemas` (schemas) and draft-07
    /// `dependencies` (either, per member).
    func checkDependencies(
        _ keyword: String, _ value: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .object(let members) = instance, case .object(let dependencies) = value else { return }
        for (trigger, dependency) in dependencies where members[trigger] != nil {
            switch dependency {
            case .array(let names) where keyword != "dependentSchemas":
                for case .string(let name) in names where members[name] == nil {
                    outcome.fail(path, keyword, "missing property \(name), required when \(trigger) is present")
                }
            case .object, .bool:
                guard keyword != "dependentRequired" else { continue }
                if case .bool(false) = dependency {
                    outcome.fail(path, keyword, "property \(trigger) is not allowed")
                } else {
                    outcome.absorb(evaluate(dependency, instance, path, context))
                }
            default:
                continue
            }
        }
    }

    func checkUnevaluatedProperties(
        _ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, _ outcome: inout Outcome
    ) {
        guard case .object(let members) = instance else { return }
        for (name, member) in members where !outcome.properties.contains(name) {
            outcome.errors += evaluateChild(
                schema, member, path.appending(name), context,
                keyword: "unevaluatedProperties", reason: "property \(name) is not allowed")
        }
        outcome.properties.formUnion(members.keys)
    }
}
