/// Writing a sealed file's fields after the first one of a line, each behind its tab.
extension SealedFile.Builder {
    /// A tab, then `value` escaped.
    mutating func tabText(_ value: String) {
        tab()
        text(value)
    }

    /// A tab, then `value` as it is (no tab or newline in it).
    mutating func tabRaw(_ value: String) {
        tab()
        raw(value)
    }

    /// A tab, then `value`.
    mutating func tabNumber<N: BinaryInteger>(_ value: N) {
        tab()
        number(value)
    }

    /// `a` and `b`, each behind a tab. Plain generics, not a parameter pack: the optimizer
    /// specializes these, and a pack left `number` generic for every digit.
    mutating func tabNumbers<A: BinaryInteger, B: BinaryInteger>(_ a: A, _ b: B) {
        tabNumber(a)
        tabNumber(b)
    }

    /// A whole line of two fields: `tag` as it is and `value` escaped.
    mutating func line(_ tag: String, text value: String) {
        raw(tag)
        tabText(value)
        newline()
    }
}
