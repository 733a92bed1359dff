/// One version of one document: who it is, which version, what it holds, where it lives.
public struct DocVersion: Sendable, Hashable, Codable {
    public var refId: String
    public var changesetId: String
    public var hash: String
    public var path: String

    public init(refId: String, changesetId: String, hash: String, path: String) {
        (self.refId, self.changesetId, self.hash, self.path) = (refId, changesetId, hash, path)
    }
}
