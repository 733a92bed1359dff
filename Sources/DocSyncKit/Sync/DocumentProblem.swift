/// A file docsync could not take as a document, reported as `path:line:col: reason`
/// and left untouched.
public struct DocumentProblem: Sendable, Codable, Equatable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var column: Int?
    public var reason: String

    public var description: String {
        if let line, let column { return "\(path):\(line):\(column): \(reason)" }
        return "\(path): \(reason)"
    }
}
