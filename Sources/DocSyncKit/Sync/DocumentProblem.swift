/// A file docsync could not take as a document, reported as `path:line:col: reason`
/// (invalid JSON) or `path: /json/pointer: reason` (a record that fails its schema), and
/// left untouched.
public struct DocumentProblem: Sendable, Codable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var column: Int?
    /// The failing place in the record (RFC 6901; "" for the record itself), for schema errors.
    public var pointer: String?
    public var reason: String

    public init(path: String, line: Int? = nil, column: Int? = nil, pointer: String? = nil, reason: String) {
        self.path = path
        self.line = line
        self.column = column
        self.pointer = pointer
        self.reason = reason
    }

    public var description: String {
        if let line, let column { return "\(path):\(line):\(column): \(reason)" }
        if let pointer { return "\(path): \(pointer.isEmpty ? "(root)" : pointer): \(reason)" }
        return "\(path): \(reason)"
    }
}
