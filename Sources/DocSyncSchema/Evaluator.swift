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

    func evaluate(_ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath, _ context: EvaluationContext) -> Outcome {
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
            if case .string(let ref) = keywords["$ref"] { outcome.absorb(followReference(ref, instance, path, context)) }
            return outcome
        }

        let foreign = draft == .draft7 ? keywordsOnlyIn2020 : keywordsOnlyIn7
        for (keyword, value) in keywords where !foreign.contains(keyword) {
            switch keyword {
            // Applicators on the same value.
            case "$ref":
                if case .string(let ref) = value { outcome.absorb(followReference(ref, instance, path, context)) }
            case "$dynamicRef":
                if case .string(let ref) = value { outcome.absorb(followDynamicReference(ref, instance, path, context)) }
            case "allOf", "anyOf", "oneOf":
                if case .array(let schemas) = value {
                    checkCombination(keyword, schemas, instance, path, context, &outcome)
                }
            case "not":
                checkNot(value, instance, path, context, &outcome)
            case "if":
                checkConditional(value, keywords, instance, path, context, &outcome)

            // Any value.
            case "type":
                checkType(value, instance, path, &outcome)
            case "enum":
                checkEnum(value, instance, path, &outcome)
            case "const":
                if !jsonEqual(value, instance) { outcome.fail(path, "const", "expected \(short(value))") }
            case "format":
                checkFormat(value, instance, path, &outcome)

            // Numbers.
            case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
                checkNumber(keyword, value, instance, path, &outcome)

            // Strings.
            case "minLength", "maxLength":
                checkLength(keyword, value, instance, path, &outcome)
            case "pattern":
                checkPattern(value, instance, path, &outcome)

            // Objects.
            case "properties", "patternProperties", "additionalProperties":
                checkProperties(keyword, value, keywords, instance, path, context, &outcome)
            case "propertyNames":
                checkPropertyNames(value, instance, path, context, &outcome)
            case "required":
                checkRequired(value, instance, path, &outcome)
            case "minProperties", "maxProperties":
                checkPropertyCount(keyword, value, instance, path, &outcome)
            case "dependentRequired", "dependentSchemas", "dependencies":
                checkDependencies(keyword, value, instance, path, context, &outcome)

            // Arrays.
            case "prefixItems", "items", "additionalItems":
                checkItems(keyword, value, keywords, instance, path, context, &outcome)
            case "contains":
                checkContains(value, keywords, instance, path, context, &outcome)
            case "minItems", "maxItems":
                checkItemCount(keyword, value, instance, path, &outcome)
            case "uniqueItems":
                checkUniqueItems(value, instance, path, &outcome)

            default:
                break
            }
        }
        // The unevaluated keywords see what every other keyword evaluated.
        if draft == .draft2020_12 {
            if let value = keywords["unevaluatedProperties"] {
                checkUnevaluatedProperties(value, instance, path, context, &outcome)
            }
            if let value = keywords["unevaluatedItems"] {
                checkUnevaluatedItems(value, instance, path, context, &outcome)
            }
        }
        return outcome
    }

    /// Applies a subschema to a member or item (at `path`). A `false` subschema reports the
    /// keyword that applied it ("additionalProperties: not allowed") rather than "false".
    func evaluateChild(_ schema: JSONValue, _ instance: JSONValue, _ path: InstancePath,
                       _ context: EvaluationContext, keyword: String, reason: @autoclosure () -> String) -> [ValidationError]
    {
        if case .bool(false) = schema {
            return [ValidationError(instancePath: path.pointer, keyword: keyword, reason: reason())]
        }
        return evaluate(schema, instance, path, context).errors
    }
}

private let keywordsOnlyIn2020: Set<String> = [
    "$dynamicRef", "prefixItems", "dependentRequired", "dependentSchemas", "minContains", "maxContains",
]
/// `dependencies` stays in 2020-12 too, as the specification allows for compatibility.
private let keywordsOnlyIn7: Set<String> = ["additionalItems"]

typealias JSONObject = OrderedDictionary<String, JSONValue>

/// A value in compact JSON, cut short for an error message.
func short(_ value: JSONValue) -> String {
    let text = value.description
    return text.count <= 40 ? text : String(text.prefix(37)) + "..."
}


