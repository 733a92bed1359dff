/// A version identifier: `<wall ms, 12 hex>-<counter, 4 hex>-<replica id>`, e.g.
/// `0193a1f2c3d4-0000-7f3a9c2e1b4d`. Plain string order is hybrid-logical-clock order,
/// so "later" is well defined across replicas even when their clocks disagree, and the
/// replica id makes every value unique. See docs/FORMATS.md.
public struct ChangesetID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var wallMillis: UInt64
    public var counter: UInt16
    public var replica: String

    public init(wallMillis: UInt64, counter: UInt16, replica: String) {
        self.wallMillis = wallMillis
        self.counter = counter
        self.replica = replica
    }

    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 12, parts[1].count == 4,
            let wall = UInt64(parts[0], radix: 16), let counter = UInt16(parts[1], radix: 16),
            ReplicaID.isValid(String(parts[2]))
        else { return nil }
        self.init(wallMillis: wall, counter: counter, replica: String(parts[2]))
    }

    public var description: String {
        pad(String(wallMillis, radix: 16), 12) + "-" + pad(String(counter, radix: 16), 4) + "-" + replica
    }

    public static func < (a: ChangesetID, b: ChangesetID) -> Bool {
        (a.wallMillis, a.counter, a.replica) < (b.wallMillis, b.counter, b.replica)
    }

    private func pad(_ s: String, _ width: Int) -> String {
        String(repeating: "0", count: max(0, width - s.count)) + s
    }
}

/// Orders two changesetId strings. Well-formed ids compare as clocks; a malformed one
/// (hand-edited) sorts before any well-formed one, then by plain string order.
public func changesetOrder(_ a: String, _ b: String) -> Bool {
    switch (ChangesetID(a), ChangesetID(b)) {
    case let (x?, y?): return x < y
    case (nil, _?): return true
    case (_?, nil): return false
    case (nil, nil): return a < b
    }
}

/// Replica ids: 12 lowercase hex digits, made once per working tree.
public enum ReplicaID {
    public static func generate() -> String {
        var out = ""
        for _ in 0..<12 { out += String(Int.random(in: 0..<16), radix: 16) }
        return out
    }

    public static func isValid(_ s: String) -> Bool {
        s.utf8.count >= 4 && s.utf8.count <= 32
            && s.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }
    }
}

/// Document identities: a random UUID, lowercase. Users may also write their own refId;
/// any non-empty string without control characters is accepted.
public enum RefID {
    public static func generate() -> String {
        UUIDString.random()
    }

    public static func isAcceptable(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 512 && !s.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}

enum UUIDString {
    static func random() -> String {
        // Two draws, not sixteen: each draw is a getrandom(2) call, and a first push
        // makes one id per document.
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = ContentHash.hex(bytes)
        let h = Array(hex)
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-" + String(h[16..<20]) + "-"
            + String(h[20..<32])
    }
}
