/// A path as a dictionary key that is equal only to the same bytes. Why not `String`:
/// String equality is canonical equivalence, so `é` written as one code point and as `e`
/// plus an accent are one key, while on disk they are two files (and two index records).
struct PathKey: Hashable {
    let path: String

    init(_ path: String) { self.path = path }

    static func == (a: PathKey, b: PathKey) -> Bool {
        IndexFile.withBytes(a.path) { x in IndexFile.withBytes(b.path) { y in UTF8Order.compare(x, y) == 0 } }
    }

    func hash(into hasher: inout Hasher) {
        IndexFile.withBytes(path) { hasher.combine(bytes: $0) }
    }
}
