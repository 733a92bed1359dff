import DocSyncJSON
import Testing

/// `FieldPaths.taking`: what `resolve --take` puts into the document for one colliding
/// field, checked against hand-written expectations.
@Suite struct ResolveTakeTests {
    static func json(_ text: String) -> JSONValue { try! JSONValueParser.parse(Array(text.utf8)) }

    /// The conflict was recorded on `i.1.v` against `kept` (q is element 1 there).
    static let kept = json(#"{"i": [{"id": "p", "v": "1"}, {"id": "q", "v": "B"}]}"#)
    static let stored = json(#"{"i": [{"id": "p", "v": "1"}, {"id": "q", "v": "A"}]}"#)

    @Test func anElementsFieldIsTakenAndEditsOfOtherElementsSinceStay() {
        let now = Self.json(#"{"i": [{"id": "p", "v": "P2"}, {"id": "q", "v": "B"}]}"#)
        let taken = FieldPaths.taking("i.1.v", from: Self.stored, into: now, recordedAgainst: Self.kept)
        #expect(taken == Self.json(#"{"i": [{"id": "p", "v": "P2"}, {"id": "q", "v": "A"}]}"#))
    }

    @Test func theElementIsFoundByItsIdentityWhereverItIsNow() {
        // Reordered and grown since: index 1 of the kept version is q, now at 0.
        let now = Self.json(#"{"i": [{"id": "q", "v": "B"}, {"id": "r", "v": "3"}, {"id": "p", "v": "P2"}]}"#)
        let taken = FieldPaths.taking("i.1.v", from: Self.stored, into: now, recordedAgainst: Self.kept)
        #expect(
            taken == Self.json(#"{"i": [{"id": "q", "v": "A"}, {"id": "r", "v": "3"}, {"id": "p", "v": "P2"}]}"#))
    }

    @Test func aConflictAtAnElementTakesThatElement() {
        let stored = Self.json(#"{"i": [{"id": "p", "v": "1"}, {"id": "q", "v": "A", "w": 1}]}"#)
        let now = Self.json(#"{"i": [{"id": "p", "v": "P2"}, {"id": "q", "v": "B"}]}"#)
        let taken = FieldPaths.taking("i.1", from: stored, into: now, recordedAgainst: Self.kept)
        #expect(taken == Self.json(#"{"i": [{"id": "p", "v": "P2"}, {"id": "q", "v": "A", "w": 1}]}"#))
    }

    @Test func withoutTheKeptVersionOrAnIdentityTheWholeArrayIsTaken() {
        let now = Self.json(#"{"i": [{"id": "p", "v": "P2"}, {"id": "q", "v": "B"}]}"#)
        #expect(FieldPaths.taking("i.1.v", from: Self.stored, into: now, recordedAgainst: nil) == Self.stored)
        // Not records with an identity: a sequence, settled at the array.
        let storedList = Self.json(#"{"l": ["a", "X"]}"#), nowList = Self.json(#"{"l": ["b", "Y"]}"#)
        #expect(
            FieldPaths.taking("l.1", from: storedList, into: nowList, recordedAgainst: Self.json(#"{"l": ["a", "Y"]}"#))
                == storedList)
    }

    @Test func aFieldOutsideArraysIsReplacedAlone() {
        let stored = Self.json(#"{"n": {"x": "A", "y": "1"}, "a": "1"}"#)
        let now = Self.json(#"{"n": {"x": "B", "y": "2"}, "a": "2"}"#)
        #expect(
            FieldPaths.taking("n.x", from: stored, into: now, recordedAgainst: nil)
                == Self.json(#"{"n": {"x": "A", "y": "2"}, "a": "2"}"#))
    }

    @Test func nestedArraysAreMatchedLevelByLevel() {
        let kept = Self.json(#"{"o": [{"id": 1, "l": [{"key": "a", "v": "K"}]}]}"#)
        let stored = Self.json(#"{"o": [{"id": 1, "l": [{"key": "a", "v": "S"}]}]}"#)
        let now = Self.json(
            #"{"o": [{"id": 2, "l": []}, {"id": 1, "l": [{"key": "b", "v": "new"}, {"key": "a", "v": "K"}]}]}"#)
        #expect(
            FieldPaths.taking("o.0.l.0.v", from: stored, into: now, recordedAgainst: kept)
                == Self.json(
                    #"{"o": [{"id": 2, "l": []}, {"id": 1, "l": [{"key": "b", "v": "new"}, {"key": "a", "v": "S"}]}]}"#)
        )
    }
}
