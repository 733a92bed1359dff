/// The check of a base's lines as a sealed file is read (the base file, or the `base`
/// lines of a state an older version wrote): five fields each, counted, and where they
/// lie noted, without parsing them (see `BaseStorage`).
struct BaseLinesCheck {
    private(set) var count = 0
    /// From the first base line's start to the last one's end.
    private(set) var range = 0..<0
    /// Whether no other line lies between base lines (an older state wrote its pending
    /// and held lines after the base).
    private(set) var inOneRun = true
    /// Whether the refIds are in strictly rising byte order (as escaped), as this
    /// version writes them; older ones wrote them in any order.
    private(set) var inOrder = true
    /// Where each line starts, while they are in order.
    private(set) var starts: [UInt32] = []
    private var previousRefId: Range<Int> = 0..<0

    /// Takes one `base` line; false when its fields are not a base version's.
    mutating func take(_ f: SealedFile.Fields, line: Range<Int>) -> Bool {
        guard f.count == 5 else { return false }
        if count == 0 {
            range = line
        } else {
            if range.upperBound != line.lowerBound { inOneRun = false }
            range = range.lowerBound..<line.upperBound
            if inOrder && f.compare(previousRefId, f.ranges[1]) >= 0 { inOrder = false }
        }
        previousRefId = f.ranges[1]
        if inOrder { starts.append(UInt32(truncatingIfNeeded: line.lowerBound)) }
        count += 1
        return true
    }

    /// The lines as `BaseStorage` searches them (in place when in order and their
    /// offsets fit in 32 bits).
    func lines(of bytes: [UInt8]) -> BaseStorage.Lines {
        let searchable = inOneRun && inOrder && bytes.count <= Int(UInt32.max)
        return BaseStorage.Lines(bytes: bytes, range: range, count: count, starts: searchable ? starts : nil)
    }
}
