// One reason a value does not satisfy its schema.

/// Where in the value, which keyword, and why, in a few words.
public struct ValidationError: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// JSON pointer (RFC 6901) to the failing part of the validated value: "" for the value
    /// itself, "/items/0/qty" for a member of an element.
    public var instancePath: String
    /// The schema keyword that failed: "type", "required" … Through a `$ref` it is the
    /// keyword inside the referenced schema; "$ref" itself only for the nesting limit. A
    /// `false` subschema reports the keyword that applied it ("additionalProperties"), or
    /// "false" when it is the root or in an in-place applicator.
    public var keyword: String
    /// A short lowercase reason: "expected integer, found string".
    public var reason: String

    /// `/items/0/qty: expected integer, found string`; the value itself (the empty
    /// pointer) shows as `(root)`.
    public var description: String {
        "\(instancePath.isEmpty ? "(root)" : instancePath): \(reason)"
    }
}

/// A schema that cannot be compiled.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `$schema` names a draft that is not supported.
    case unsupportedDraft(String)
    /// A `$ref` (or `$dynamicRef`) that names nothing in the document or the given remotes.
    case unresolvedReference(String)
    /// A `pattern` or `patternProperties` key that is not a regular expression.
    case invalidPattern(String)

    public var description: String {
        switch self {
        case .unsupportedDraft(let uri): "unsupported $schema \(uri) (supported: 2020-12, draft-07)"
        case .unresolvedReference(let ref): "cannot resolve $ref \(ref)"
        case .invalidPattern(let pattern): "invalid regular expression \(pattern)"
        }
    }
}
