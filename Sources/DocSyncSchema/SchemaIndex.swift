// Every schema a document names, found once when the schema is compiled.
//
// The walk visits only real subschema positions (the values of `properties`, the items
// of `allOf` …), so an `$id` inside an `enum` or an unknown keyword identifies nothing.
// Each subschema is recorded under "<resource URI>#<pointer>" for every enclosing
// resource, each `$anchor` (and draft-07 "#name" `$id`) under "<resource URI>#name", and
// `$dynamicAnchor`s also in their own table for `$dynamicRef`. Every pattern is compiled.

import DocSyncJSON

/// A subschema and the base URI it sits in: that of the enclosing resource, before the
/// subschema's own `$id` (which evaluation applies on entering it).
struct SchemaLocation {
    var schema: JSONValue
    var base: String
}

struct SchemaIndex {
    let draft: SchemaDraft
    private(set) var locations: [String: SchemaLocation] = [:]
    private(set) var anchors: [String: SchemaLocation] = [:]
    private(set) var dynamicAnchors: Set<String> = []
    private(set) var patterns: [String: RegexPattern] = [:]
    /// Every `$ref`/`$dynamicRef` as absolute URIs, in the order walked. The root
    /// document's must resolve; a remote's own are resolved when validation reaches them.
    private var references: [String] = []
    /// True when some schema uses `unevaluatedProperties` or `unevaluatedItems`, so
    /// validation must collect which members and items were evaluated.
    private(set) var needsAnnotations = false
    private var invalidPattern: String?
    /// Each reference as written, by the base it appears under, resolved once here so
    /// validation does no URI work: base → reference → target.
    private var targets: [String: [String: SchemaLocation]] = [:]
    private var written: [(base: String, ref: String)] = []

    init(root: JSONValue, rootBase: String, remotes: [String: JSONValue], draft: SchemaDraft) throws(SchemaError) {
        self.draft = draft
        walk(root, base: rootBase, paths: [(rootBase, "")])
        let rootReferences = references
        // Remote documents are indexed when some reference names them, transitively.
        var next = 0
        while next < references.count {
            let resource = splitFragment(references[next]).uri
            next += 1
            if locations[resource + "#"] == nil, let document = remotes[resource] {
                walk(document, base: resource, paths: [(resource, "")])
            }
        }
        if let invalidPattern { throw .invalidPattern(invalidPattern) }
        for (base, ref) in written {
            if let target = resolve(resolveURI(ref, against: base)) { targets[base, default: [:]][ref] = target }
        }
        for reference in rootReferences where resolve(reference) == nil {
            throw .unresolvedReference(reference)
        }
    }

    /// The schema a reference written under `base` names (resolved when compiling).
    func target(of ref: String, base: String) -> SchemaLocation? {
        if let found = targets[base]?[ref] { return found }
        return resolve(resolveURI(ref, against: base))
    }

    /// The schema an absolute URI with optional fragment names.
    func resolve(_ uri: String) -> SchemaLocation? {
        let (resource, rawFragment) = splitFragment(uri)
        let fragment = percentDecode(rawFragment)
        if fragment.isEmpty || fragment.hasPrefix("/") {
            if let found = locations[resource + "#" + fragment] { return found }
            // A pointer into a place the walk does not visit: follow it from the resource.
            guard let root = locations[resource + "#"],
                let tokens = JSONPointer.tokens(fragment, keepingInvalidEscapes: true),
                let value = JSONPointer.value(at: tokens, in: root.schema)
            else { return nil }
            return SchemaLocation(schema: value, base: resource)
        }
        return anchors[resource + "#" + fragment]
    }

    /// True when the resource `base` declares `$dynamicAnchor` `name`.
    func hasDynamicAnchor(_ name: String, in base: String) -> Bool {
        dynamicAnchors.contains(base + "#" + name)
    }

    private mutating func walk(_ schema: JSONValue, base: String, paths: [(String, String)]) {
        let outer = SchemaLocation(schema: schema, base: base)
        var base = base
        var paths = paths
        if case .object(let keywords) = schema {
            let refIsAlone = draft == .draft7 && keywords["$ref"] != nil
            if case .string(let id) = keywords["$id"], !refIsAlone {
                if draft == .draft7, id.hasPrefix("#") {
                    anchors[base + id] = outer
                } else {
                    let (resolved, fragment) = splitFragment(resolveURI(id, against: base))
                    base = resolved
                    paths.append((resolved, ""))
                    if !fragment.isEmpty { anchors[resolved + "#" + fragment] = outer }
                }
            }
            if draft == .draft2020_12 {
                if case .string(let name) = keywords["$anchor"] {
                    anchors[base + "#" + name] = outer
                }
                if case .string(let name) = keywords["$dynamicAnchor"] {
                    anchors[base + "#" + name] = outer
                    dynamicAnchors.insert(base + "#" + name)
                }
            }
            for key in ["$ref", "$dynamicRef"] {
                if case .string(let ref) = keywords[key] {
                    references.append(resolveURI(ref, against: base))
                    written.append((base, ref))
                }
            }
            if keywords["unevaluatedProperties"] != nil || keywords["unevaluatedItems"] != nil {
                needsAnnotations = true
            }
            if case .string(let pattern) = keywords["pattern"] { compile(pattern) }
            if case .object(let members) = keywords["patternProperties"] {
                for key in members.keys { compile(key) }
            }
        }
        for (uri, pointer) in paths {
            let key = uri + "#" + pointer
            if locations[key] == nil { locations[key] = outer }
        }
        forEachSubschema(of: schema, draft: draft) { child, tokens in
            let suffix = JSONPointer.pointer(tokens)
            walk(child, base: base, paths: paths.map { ($0.0, $0.1 + suffix) })
        }
    }

    private mutating func compile(_ pattern: String) {
        guard patterns[pattern] == nil else { return }
        if let compiled = RegexPattern(pattern) { patterns[pattern] = compiled } else { invalidPattern = pattern }
    }
}

private let singleSchemaKeywords = [
    "additionalProperties", "propertyNames", "not", "if", "then", "else", "contains", "items",
    "additionalItems", "unevaluatedProperties", "unevaluatedItems", "contentSchema"
]
private let schemaMapKeywords = [
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"
]
private let schemaArrayKeywords = ["allOf", "anyOf", "oneOf", "prefixItems", "items"]

/// Calls `body` with every direct subschema and the pointer tokens from `schema` to it.
func forEachSubschema(of schema: JSONValue, draft: SchemaDraft, _ body: (JSONValue, [String]) -> Void) {
    guard case .object(let keywords) = schema else { return }
    for key in singleSchemaKeywords {
        if let child = keywords[key], child.isSchema { body(child, [key]) }
    }
    for key in schemaMapKeywords {
        guard case .object(let members) = keywords[key] else { continue }
        for (name, child) in members where child.isSchema { body(child, [key, name]) }
    }
    for key in schemaArrayKeywords {
        guard case .array(let items) = keywords[key] else { continue }
        for (i, child) in items.enumerated() { body(child, [key, String(i)]) }
    }
}

extension JSONValue {
    /// An object or a boolean: the two shapes a schema can take.
    var isSchema: Bool {
        switch self {
        case .object, .bool: true
        default: false
        }
    }
}
