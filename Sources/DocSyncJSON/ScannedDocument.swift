// What `JSONScanner.scanDocument` reports: where each member of the top-level object sits
// in the file, so the identity stamper can edit it in place.

public enum JSONValueKind: Sendable, Equatable { case object, array, string, number, bool, null }

public struct ScannedDocument: Sendable, Equatable {
    /// Top-level members in file order.
    public var members: [TopLevelMember]
    /// Offset of the top-level '{'.
    public var openBrace: Int
    /// Offset of the matching '}'.
    public var closeBrace: Int

    public init(members: [TopLevelMember], openBrace: Int, closeBrace: Int) {
        self.members = members
        self.openBrace = openBrace
        self.closeBrace = closeBrace
    }

    /// The member with this key (keys are unique: `scanDocument` refuses repeats).
    public func member(named key: String) -> TopLevelMember? {
        members.last { $0.key == key }
    }
}

/// One key/value pair at the top level of a document, with byte offsets into the file.
public struct TopLevelMember: Sendable, Equatable {
    /// Decoded key (escapes resolved).
    public var key: String
    /// Bytes of the key token including its quotes.
    public var keyRange: Range<Int>
    /// Bytes of the value token (for strings: including quotes; for containers: brackets included).
    public var valueRange: Range<Int>
    public var kind: JSONValueKind
    /// Decoded value when `kind == .string`.
    public var stringValue: String?

    public init(
        key: String, keyRange: Range<Int>, valueRange: Range<Int>, kind: JSONValueKind, stringValue: String? = nil
    ) {
        self.key = key
        self.keyRange = keyRange
        self.valueRange = valueRange
        self.kind = kind
        self.stringValue = stringValue
    }
}
