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

    /// Each of `values` behind a tab.
    mutating func tabNumbers<each N: BinaryInteger>(_ values: repeat each N) {
        for value in repeat each values {
            tab()
            number(value)
        }
    }

    /// A whole line of two fields: `tag` as it is and `value` escaped.
    mutating func line(_ tag: String, text value: String) {
        raw(tag)
        tabText(value)
        newline()
    }
}
