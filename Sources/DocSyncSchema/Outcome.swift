// What evaluating one schema against one value found: its errors, and (when some schema
// uses `unevaluatedProperties`/`unevaluatedItems`) which members and items it evaluated.

struct Outcome {
    var errors: [ValidationError] = []
    /// Object members evaluated by this schema and its valid in-place subschemas.
    var properties: Set<String> = []
    /// True when every item was evaluated; otherwise `items` holds the evaluated indices.
    var allItems = false
    var items: Set<Int> = []

    var isValid: Bool { errors.isEmpty }

    mutating func fail(_ path: InstancePath, _ keyword: String, _ reason: String) {
        errors.append(ValidationError(instancePath: path.pointer, keyword: keyword, reason: reason))
    }

    /// Takes the evaluated members and items of a subschema applied to the same value.
    mutating func absorbAnnotations(_ other: Outcome) {
        properties.formUnion(other.properties)
        allItems = allItems || other.allItems
        if !allItems { items.formUnion(other.items) }
    }

    /// Takes a same-value subschema's errors and annotations.
    mutating func absorb(_ other: Outcome) {
        errors += other.errors
        absorbAnnotations(other)
    }
}
