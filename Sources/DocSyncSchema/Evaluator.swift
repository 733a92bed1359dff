// Applies a schema to a value: the keyword dispatch. The keywords themselves live in the
// Evaluator+… files by the kind of value they constrain.
//
// Every keyword is checked and every error kept. In draft-07 a `$ref` replaces its
// siblings (they are ignored, `$id` too); in 2020-12 it is one keyword among the others.
// Keywords of the other draft are ignored (except draft-07 `dependencies`, honoured in
// 2020-12 for compatibility), as are unknown keywords.

import Collections
import DocSyncJSON

/// Where evaluation stands in the schema: the base URI for resolving references, the
/// dynamic scope (resources entered, outermost first, for `$dynamicRef`) and how many
/// schemas deep it is (a guard against references that loop without consuming input).
struct EvaluationContext {
    var base: String
    var scope: [String]
    var depth = 0
}

struct Evaluator {
    let index: SchemaIndex
    var draft: SchemaDraft { index.draft }
    var collectsAnnotations: Bool { index.needsAnnotations }

    static let maxDepth = 500

    func evaluate(_ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ context: EvaluationContext)
        -> Outcome
    {
        let keywords: JSONObject
        switch schema {
        case .bool(true):
            return Outcome()
        case .bool(false):
            var outcome = Outcome()
            outcome.fail(path, "false", "no value is allowed here")
            return outcome
        case .object(let members):
            keywords = members
        default:
            return Outcome()
        }
        var outcome = Outcome()
        guard context.depth < Self.maxDepth else {
            outcome.fail(path, "$ref", "schema references nest deeper than \(Self.maxDepth) levels")
            return outcome
        }
        var context = context
        context.depth += 1
        let refIsAlone = draft == .draft7 && keywords["$ref"] != nil
        if case .string(let id) = keywords["$id"], !refIsAlone, !(draft == .draft7 && id.hasPrefix("#")) {
            context.base = splitFragment(resolveURI(id, against: context.base)).uri
            if context.scope.last != context.base { context.scope.append(context.base) }
        }
        if refIsAlone {
            if case .string(let ref) = keywords["$ref"] {
                outcome.absorb(followReference(ref, instance, path, context))
            }
            return outcome
        }
        applyKeywords(keywords, instance, path, context, &outcome)
        return outcome
    }

    /// Every keyword of the schema that applies in its draft, by family (the families'
    /// dispatch is in the Evaluator+… files); the unevaluated keywords last, as they see
    /// what every other keyword evaluated.
    private func applyKeywords(
        _ keywords: JSONObject, _ instance: JSONValue, _ path: InstancePath, _ context: EvaluationContext,
        _ outcome: inout Outcome
    ) {
        var unevaluatedProperties: JSONValue?, unevaluatedItems: JSONValue?
        for (keyword, value) in keywords {
            guard let kind = Keyword.table[keyword], kind.applies(in: draft) else { continue }
            switch kind {
            case .ref, .dynamicRef, .combination, .not, .if:
                applyApplicator(kind, keyword, value, keywords, instance, path, context, &outcome)
            case .type, .enum, .const, .format, .numberBound, .length, .pattern:
                checkValueKeyword(kind, keyword, value, instance, path, &outcome)
            case .properties, .propertyNames, .required, .propertyCount, .dependencies, .dependentOnly2020:
                checkObjectKeyword(kind, keyword, value, keywords, instance, path, context, &outcome)
            case .items, .prefixItems, .additionalItems, .contains, .itemCount, .uniqueItems:
                checkArrayKeyword(kind, keyword, value, keywords, instance, path, context, &outcome)
            case .unevaluatedProperties:
                unevaluatedProperties = value
            case .unevaluatedItems:
                unevaluatedItems = value
            }
        }
        if let unevaluatedProperties {
            checkUnevaluatedProperties(unevaluatedProperties, instance, path, context, &outcome)
        }
        if let unevaluatedItems {
            checkUnevaluatedItems(unevaluatedItems, instance, path, context, &outcome)
        }
    }

    /// Applies a subschema to a member or item (at `path`). A `false` subschema reports the
    /// keyword that applied it ("additionalProperties: not allowed") rather than "false".
    func evaluateChild(
        _ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath,
        _ context: EvaluationContext, keyword: String, reason: @autoclosure () -> String
    ) -> [ValidationError] {
        if case .bool(false) = schema {
            return [ValidationError(instancePath: path.pointer, keyword: keyword, reason: reason())]
        }
        return evaluate(schema, instance, path, context).errors
    }
}

/// The keywords evaluation acts on, looked up once per member (a table beats comparing
/// the name against every case).
enum Keyword {
    case ref, dynamicRef, combination, not, `if`, type, `enum`, const, format, numberBound, length, pattern
    case properties, propertyNames, required, propertyCount, dependencies, dependentOnly2020, unevaluatedProperties
    case items, prefixItems, additionalItems, contains, itemCount, uniqueItems, unevaluatedItems

    static let table: [String: Keyword] = [
        "$ref": .ref, "$dynamicRef": .dynamicRef, "allOf": .combination, "anyOf": .combination, "oneOf": .combination,
        "not": .not, "if": .if, "type": .type, "enum": .enum, "const": .const, "format": .format,
        "minimum": .numberBound, "maximum": .numberBound, "exclusiveMinimum": .numberBound,
        "exclusiveMaximum": .numberBound, "multipleOf": .numberBound, "minLength": .length, "maxLength": .length,
        "pattern": .pattern, "properties": .properties, "patternProperties": .properties,
        "additionalProperties": .properties, "propertyNames": .propertyNames, "required": .required,
        "minProperties": .propertyCount, "maxProperties": .propertyCount, "dependencies": .dependencies,
        "dependentRequired": .dependentOnly2020, "dependentSchemas": .dependentOnly2020,
        "unevaluatedProperties": .unevaluatedProperties, "items": .items, "prefixItems": .prefixItems,
        "additionalItems": .additionalItems, "contains": .contains, "minItems": .itemCount, "maxItems": .itemCount,
        "uniqueItems": .uniqueItems, "unevaluatedItems": .unevaluatedItems
    ]

    /// `dependencies` stays in 2020-12 too, as the specification allows for compatibility.
    /// (`minContains`/`maxContains` are read by `contains`, in 2020-12 only.)
    func applies(in draft: SchemaDraft) -> Bool {
        switch self {
        case .dynamicRef, .prefixItems, .dependentOnly2020, .unevaluatedProperties, .unevaluatedItems:
            draft == .draft2020_12
        case .additionalItems:
            draft == .draft7
        default:
            true
        }
    }
}

typealias JSONObject = OrderedDictionary<String, JSONValue>

/// A value in compact JSON, cut short for an error message.
func short(_ value: JSONValue) -> String {
    let text = value.description
    return text.count <= 40 ? text : String(text.prefix(37)) + "..."
}
