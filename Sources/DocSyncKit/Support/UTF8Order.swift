#if canImport(Glibc)
    import Glibc
#endif

/// Byte order of UTF-8 text, the order paths are kept in (the index, listings, the
/// remote's files). Why not `<` on String: that compares Unicode canonical forms, so
/// two different byte sequences can compare equal; and not `utf8.lexicographicallyPrecedes`:
/// that goes byte by byte through a generic iterator, a tenth of a no-op `status` on
/// 100,000 paths.
enum UTF8Order {
    static func precedes(_ a: String, _ b: String) -> Bool {
        // Native strings hand out their bytes without a copy; others take the slow path.
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                compare(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) < 0
            }
        }
        if let fast, let result = fast { return result }
        return a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The order of two byte strings: negative when `a` comes first, 0 when equal. Inlined:
    /// it is the inner loop of the walk's sort and the index's lookups.
    @inline(__always)
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32 {
        let common = min(a.count, b.count)
        let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        return order != 0 ? order : Int32(a.count < b.count ? -1 : a.count > b.count ? 1 : 0)
    }
}
