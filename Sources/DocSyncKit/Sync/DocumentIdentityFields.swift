// The two top-level members docsync writes into every record: "refId" (which record it
// is; never changes) and "changesetId" (which version; new with every change). They are
// docsync's, not the user's content, so comparisons of content and what diffs and blame
// show leave them out; which of the two a caller leaves out is its choice, said here.

import DocSyncJSON

struct DocumentIdentityFields: OptionSet, Sendable {
    let rawValue: UInt8

    static let refId = DocumentIdentityFields(rawValue: 1 << 0)
    static let changesetId = DocumentIdentityFields(rawValue: 1 << 1)
    static let both: DocumentIdentityFields = [.refId, .changesetId]

    /// The member names, "refId" first.
    var names: [String] {
        (contains(.refId) ? ["refId"] : []) + (contains(.changesetId) ? ["changesetId"] : [])
    }
}

extension JSONValue {
    /// This value without the top-level `fields`; anything but an object is returned as is.
    func removing(_ fields: DocumentIdentityFields) -> JSONValue {
        guard case .object(var members) = self else { return self }
        for name in fields.names { members.removeValue(forKey: name) }
        return .object(members)
    }

    /// Whether this and `other` are the same document once the top-level `fields` are
    /// left out of both (two values that are not both objects: only when equal).
    func isSameDocument(as other: JSONValue, ignoring fields: DocumentIdentityFields) -> Bool {
        removing(fields).equalsIgnoringMemberOrder(other.removing(fields))
    }

    /// Whether two files hold the same document apart from their ids, whatever their
    /// layout (false if either is not valid JSON): the same values saved twice (a
    /// formatter, a merge another replica wrote).
    static func sameDocument(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard let x = try? JSONValueParser.parse(a), let y = try? JSONValueParser.parse(b) else { return false }
        return x.isSameDocument(as: y, ignoring: .both)
    }
}
