import DocSyncJSON
import Foundation
import Testing

@testable import DocSyncKit

/// ContentPolicy's merge does not depend on which side is local: both replicas that merge
/// the same three versions write the same bytes (but for the new changesetId), layout
/// and key order included (docs/SYNC.md, "Same bytes everywhere").
@Suite struct MergeSymmetryTests {
    func version(_ id: String, _ bytes: String) -> (DocVersion, [UInt8]) {
        let b = Array(bytes.utf8)
        return (DocVersion(refId: "r1", changesetId: id, hash: ContentHash.of(b), path: "p.json"), b)
    }

    @Test("local and remote swapped: the same merged bytes, whatever their indentation, key order and line ends")
    func swappedSidesWriteTheSameBytes() throws {
        let base =
            "{\n  \"refId\": \"r1\",\n  \"changesetId\": \"c0\",\n  \"a\": 1,\n  \"b\": [1, 2],\n  \"c\": {\"x\": 1}\n}\n"
        // Earlier save: 4 spaces, adds d; later save: a tab, CRLF, adds e, keys reordered.
        let (early, earlyBytes) = version(
            "0000000001000-0000-aaaaaaaaaaaa",
            "{\n    \"refId\": \"r1\",\n    \"changesetId\": \"c1\",\n    \"a\": 2,\n    \"b\": [0, 1, 2],\n    \"c\": {\"x\": 1},\n    \"d\": true\n}\n"
        )
        let (late, lateBytes) = version(
            "0000000002000-0000-bbbbbbbbbbbb",
            "{\r\n\t\"refId\": \"r1\",\r\n\t\"changesetId\": \"c2\",\r\n\t\"c\": {\"x\": 2},\r\n\t\"a\": 1,\r\n\t\"b\": [1, 2, 3],\r\n\t\"e\": null\r\n}\r\n"
        )
        let policy = ContentPolicy(policy: .merge, counters: [])
        let one = policy.settle(
            base: Array(base.utf8), local: early, localBytes: earlyBytes, remote: late, remoteBytes: lateBytes,
            path: "p.json", newChangesetId: { "NEW" })
        let other = policy.settle(
            base: Array(base.utf8), local: late, localBytes: lateBytes, remote: early, remoteBytes: earlyBytes,
            path: "p.json", newChangesetId: { "NEW" })
        let a = try #require(one.mergedBytes), b = try #require(other.mergedBytes)
        #expect(a == b, "\(String(decoding: a, as: UTF8.self)) vs \(String(decoding: b, as: UTF8.self))")
        let merged = try JSONValueParser.parse(a)
        #expect(
            String(decoding: JSONValueWriter.writeCompact(merged), as: UTF8.self)
                == #"{"refId":"r1","changesetId":"NEW","a":2,"b":[0,1,2,3],"c":{"x":2},"d":true,"e":null}"#)
        #expect(one.fields.isEmpty && other.fields.isEmpty)
    }
}
