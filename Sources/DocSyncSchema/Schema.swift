// A compiled JSON Schema: the public entry point of DocSyncSchema.
//
//     let schema = try Schema(JSONValueParser.parse(bytes))
//     for error in schema.validate(record) { print(error) }   // "/items/0/qty: expected integer, found string"
//
// Compiling reads the draft from `$schema`, indexes every `$id`, `$anchor` and subschema,
// compiles every pattern and checks that every `$ref` resolves; validation is then a pure
// function of the schema and the value, and a `Schema` can be shared across threads.
// Remote references are never fetched: documents they name are passed in `remotes`.

import DocSyncJSON

public struct Schema: Sendable {
    public let draft: SchemaDraft
    private let root: JSONValue
    private let rootBase: String
    private let index: SchemaIndex

    /// - Parameters:
    ///   - schema: the schema document (an object or a boolean).
    ///   - defaultDraft: the draft when the root has no `$schema`.
    ///   - remotes: documents that `$ref`s may name, by absolute URI (no fragment).
    ///   - baseURI: the document's URI when it has no `$id` (a `file:` URI lets relative
    ///     `$ref`s name the files beside it, passed in `remotes`).
    public init(
        _ schema: JSONValue, defaultDraft: SchemaDraft = .draft2020_12,
        remotes: [String: JSONValue] = [:], baseURI: String? = nil
    ) throws(SchemaError) {
        var draft = defaultDraft
        if case .object(let keywords) = schema, case .string(let uri) = keywords["$schema"] {
            guard let named = SchemaDraft(schemaURI: uri) else { throw .unsupportedDraft(uri) }
            draft = named
        }
        self.draft = draft
        self.root = schema
        self.rootBase = baseURI ?? defaultBaseURI
        self.index = try SchemaIndex(root: schema, rootBase: rootBase, remotes: remotes, draft: draft)
    }

    /// Every way `value` fails the schema, in the order of the places in `value` they
    /// point to; empty when it is valid.
    public func validate(_ value: JSONValue) -> [ValidationError] {
        let context = EvaluationContext(base: rootBase, scope: [rootBase])
        let errors = Evaluator(index: index).evaluate(root, value, InstancePath(), context).errors
        return inDocumentOrder(errors, of: value)
    }

    public func isValid(_ value: JSONValue) -> Bool {
        validate(value).isEmpty
    }
}
