import Testing

@testable import DocSyncKit

/// `HistoryService.compared`: what a diff says about one document, from the bytes of the
/// version compared with and of the file now (pure; the CLI's DiffTests drive the rest).
@Suite struct DiffComparisonTests {
    static let ids = "\"refId\": \"r\", \"changesetId\": \"c1\", "

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var old: String?
        var now: String?
        /// "pointer kind" per change, and the note; nil: nothing to say.
        var expected: (changes: [String], note: String?)?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "neither exists", old: nil, now: nil, expected: nil),
        Case(name: "unchanged", old: "{\(ids)\"a\": 1}", now: "{\(ids)\"a\": 1}", expected: nil),
        Case(
            name: "only the changesetId differs: docsync's, not an edit", old: "{\(ids)\"a\": 1}",
            now: "{\"refId\": \"r\", \"changesetId\": \"c2\", \"a\": 1}", expected: nil),
        Case(
            name: "a field changed", old: "{\(ids)\"a\": 1}", now: "{\(ids)\"a\": 2}",
            expected: (["/a changed"], nil)),
        Case(
            name: "a field added and one removed", old: "{\(ids)\"a\": 1}", now: "{\(ids)\"b\": 1}",
            expected: (["/a removed", "/b added"], nil)),
        Case(name: "a new document", old: nil, now: "{\(ids)\"a\": 1}", expected: ([" added"], "new")),
        Case(name: "a deleted document", old: "{\(ids)\"a\": 1}", now: nil, expected: ([" removed"], "deleted")),
        Case(
            name: "the file is not valid JSON now", old: "{\(ids)\"a\": 1}", now: "{\"a\": ",
            expected: ([], "not a valid document")),
        Case(
            name: "a new file that is not valid JSON", old: nil, now: "[1,",
            expected: ([], "new, not a valid document")),
        Case(
            name: "the version compared with is not JSON", old: "nope", now: "{\(ids)\"a\": 1}",
            expected: ([], "the version compared with is not valid JSON"))
    ]

    @Test(arguments: cases)
    func compared(_ c: Case) {
        let blank = DocumentDiff(path: "d.json", refId: "r", against: "base", againstChangesetId: nil, changes: [])
        let result = HistoryService.compared(
            c.old.map { Array($0.utf8) }, c.now.map { Array($0.utf8) }, into: blank)
        guard let expected = c.expected else {
            #expect(result == nil, "\(String(describing: result))")
            return
        }
        #expect(result?.changes.map { "\($0.pointer) \($0.kind.rawValue)" } == expected.changes)
        if let note = expected.note {
            #expect(result?.note?.hasPrefix(note) == true, "\(String(describing: result?.note))")
        } else {
            #expect(result?.note == nil)
        }
    }
}
