// Which JSON Schema draft a schema is read as.
//
// Chosen by the root's `$schema` member; a schema without one is read with the default the
// caller gives (2020-12 unless told otherwise). An unknown `$schema` URI is an error, not a
// guess. The whole document, and every remote it refers to, is read with the root's draft.

public enum SchemaDraft: String, Sendable, CaseIterable {
    case draft2020_12 = "2020-12"
    case draft7 = "draft-07"

    /// The draft a `$schema` URI names, or nil when it names neither supported draft.
    public init?(schemaURI: String) {
        var uri = schemaURI
        if uri.hasSuffix("#") { uri.removeLast() }
        if uri.hasPrefix("https://") {
            uri.removeFirst("https://".count)
        } else if uri.hasPrefix("http://") {
            uri.removeFirst("http://".count)
        } else {
            return nil
        }
        switch uri {
        case "json-schema.org/draft/2020-12/schema": self = .draft2020_12
        case "json-schema.org/draft-07/schema": self = .draft7
        default: return nil
        }
    }
}
