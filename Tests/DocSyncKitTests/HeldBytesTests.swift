import Foundation
import Testing

@testable import DocSyncKit

/// The recorder holds new files' bytes from the scan to the stamp only up to a budget
/// (`ChangeRecorder.heldBytesBudget`); past it a file is read again when it is stamped.
/// Either way a file is stamped with the content the scan decided on, or left alone.
@Suite struct HeldBytesTests {
    /// 24 files of 1 MB (past the 16 MB budget: the first 15 in walk order are held, the
    /// rest read again). Between the scan and the stamps one held file and one read again
    /// are edited: both are left alone by this run and recorded, edited, by the next; every
    /// other file is stamped with its own content.
    @Test func filesPastTheBudgetAreReadAgainAndAnEditInBetweenWaitsForTheNextRun() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let filler = String(repeating: "x", count: 1 << 20)
        let names = (0..<24).map { "doc\($0).json" }
        for (i, name) in names.enumerated() { set.write(a, name, "{\"n\": \(i), \"text\": \"\(filler)\"}") }
        #expect(24 << 20 > ChangeRecorder.heldBytesBudget, "the tree is larger than the budget")
        // In walk (byte) order doc0 is first (held) and doc9 last (read again).
        let edited = ["doc0.json", "doc9.json"]

        let workspace = try Workspace.open(at: a, readOnly: false)
        workspace.progress = { event in
            guard case .finished(.scan) = event else { return }
            for name in edited { set.write(a, name, "{\"n\": 100, \"text\": \"edited\"}") }
        }
        var report = SyncReport()
        let first = try workspace.recordLocalChanges(write: true, report: &report)
        workspace.close()
        #expect(Set(Self.versions(first.actions).map(\.path)) == Set(names).subtracting(edited))
        for (i, name) in names.enumerated() where !edited.contains(name) {
            let object = try Self.object(a, name)
            #expect(object["n"] as? Int == i && object["text"] as? String == filler, "\(name) keeps its content")
            #expect(object["refId"] is String && object["changesetId"] is String, "\(name) is stamped")
            let version = try #require(Self.versions(first.actions).first { $0.path == name })
            #expect(
                ContentHash.of(try FileSystem.readFile(a + "/" + name)) == version.hash,
                "\(name): the recorded version is the stamped file")
        }
        for name in edited {
            #expect(set.read(a, name) == "{\"n\": 100, \"text\": \"edited\"}", "\(name) left alone this run")
        }

        let again = try Workspace.open(at: a, readOnly: false)
        var second = SyncReport()
        let next = try again.recordLocalChanges(write: true, report: &second)
        again.close()
        #expect(Set(Self.versions(next.actions).map(\.path)) == Set(edited))
        for name in edited {
            let object = try Self.object(a, name)
            #expect(object["n"] as? Int == 100 && object["refId"] is String, "\(name) recorded as edited")
        }
    }

    static func versions(_ actions: [JournalEntry]) -> [DocVersion] {
        actions.compactMap { if case .local(_, let version, _) = $0.event { version } else { nil } }
    }

    static func object(_ root: String, _ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
