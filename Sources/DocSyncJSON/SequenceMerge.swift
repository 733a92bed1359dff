// Three-way merge of sequences, like diff3 (docs/SYNC.md#arrays, rule 3): each side is
// aligned with the base by a longest common subsequence (Myers' O(ND) algorithm, after
// trimming the common prefix and suffix); base elements both sides keep in place are
// fixed points, and each stretch between them is settled on its own. Elements are
// tokens (Ints): equal tokens are equal elements.
//
// Symmetric: swapping the sides and the later save gives the same sequence, because every
// tie goes to a save (earlier or later), never to a side.

enum SequenceMerge {
    /// A stretch between fixed points, and how it was settled.
    struct Stretch: Equatable {
        var base: Range<Int>
        var local: Range<Int>
        var remote: Range<Int>
    }

    struct Result: Equatable {
        /// Where each merged element comes from: (side, index) with side 0 base, 1 local, 2 remote.
        var elements: [(side: Int, index: Int)]
        /// Stretches changed differently on both sides, settled for the later save.
        var collisions: [Stretch]

        static func == (a: Result, b: Result) -> Bool {
            a.collisions == b.collisions
                && a.elements.elementsEqual(b.elements) { $0.side == $1.side && $0.index == $1.index }
        }
    }

    /// Beyond this many differences an alignment is not searched: the sides count as having
    /// nothing in common with the base (one stretch).
    static let maxDifferences = 3_000

    /// - Parameter laterIsLocal: whether the local side is the later save (wins collisions).
    static func merge(base: [Int], local: [Int], remote: [Int], laterIsLocal: Bool) -> Result {
        let localMatch = matches(base, local)
        let remoteMatch = matches(base, remote)
        var result = Result(elements: [], collisions: [])
        var (b, l, r) = (0, 0, 0)
        while true {
            // The next base element both sides kept.
            var k = b
            while k < base.count, localMatch[k] == nil || remoteMatch[k] == nil { k += 1 }
            if k < base.count, k == b, localMatch[k] == l, remoteMatch[k] == r {
                result.elements.append((0, k))
                (b, l, r) = (b + 1, l + 1, r + 1)
                continue
            }
            let end = k < base.count ? (k, localMatch[k]!, remoteMatch[k]!) : (base.count, local.count, remote.count)
            let stretch = Stretch(base: b..<end.0, local: l..<end.1, remote: r..<end.2)
            if !stretch.base.isEmpty || !stretch.local.isEmpty || !stretch.remote.isEmpty {
                settle(stretch, base, local, remote, laterIsLocal: laterIsLocal, into: &result)
            }
            if k >= base.count { return result }
            (b, l, r) = end
        }
    }

    private static func settle(
        _ s: Stretch, _ base: [Int], _ local: [Int], _ remote: [Int], laterIsLocal: Bool, into result: inout Result
    ) {
        let B = Array(base[s.base]), L = Array(local[s.local]), R = Array(remote[s.remote])
        func take(_ side: Int, _ indices: some Sequence<Int>) { result.elements += indices.map { (side, $0) } }
        if L == B { return take(2, s.remote) }
        if R == B || L == R { return take(1, s.local) }
        let (earlier, later) = laterIsLocal ? (2, 1) : (1, 2)
        let range = { (side: Int) in side == 1 ? s.local : s.remote }
        if B.isEmpty {
            take(earlier, range(earlier))
            return take(later, range(later))
        }
        let keptByLocal = subsequence(L, of: B), keptByRemote = subsequence(R, of: B)
        // Only removals on both sides: what neither removed.
        if let kl = keptByLocal, let kr = keptByRemote {
            return take(0, s.base.filter { kl.contains($0 - s.base.lowerBound) && kr.contains($0 - s.base.lowerBound) })
        }
        // Only removals on one side, only insertions on the other: the insertions, without
        // the removed elements.
        for (removing, kept, inserting) in [(1, keptByLocal, R), (2, keptByRemote, L)] {
            guard let kept, let placed = subsequencePositions(B, in: inserting) else { continue }
            let other = removing == 1 ? 2 : 1
            let removed = Set(B.indices.filter { !kept.contains($0) }.map { placed[$0] })
            return take(other, range(other).filter { !removed.contains($0 - range(other).lowerBound) })
        }
        result.collisions.append(s)
        take(later, range(later))
    }

    /// The indices of `whole` that `part` keeps, if `part` is a subsequence of it (leftmost).
    private static func subsequence(_ part: [Int], of whole: [Int]) -> Set<Int>? {
        subsequencePositions(part, in: whole).map(Set.init)
    }

    /// For each element of `part`, its position in `whole` (leftmost matching), if `part`
    /// is a subsequence of `whole`.
    private static func subsequencePositions(_ part: [Int], in whole: [Int]) -> [Int]? {
        var positions: [Int] = []
        var j = 0
        for token in part {
            while j < whole.count, whole[j] != token { j += 1 }
            guard j < whole.count else { return nil }
            positions.append(j)
            j += 1
        }
        return positions
    }

    /// For each element of `a`, the index of `b` it is matched to by a longest common
    /// subsequence (nil: not matched).
    static func matches(_ a: [Int], _ b: [Int]) -> [Int?] {
        var match = [Int?](repeating: nil, count: a.count)
        var start = 0
        while start < a.count, start < b.count, a[start] == b[start] {
            match[start] = start
            start += 1
        }
        var (endA, endB) = (a.count, b.count)
        while endA > start, endB > start, a[endA - 1] == b[endB - 1] {
            endA -= 1
            endB -= 1
            match[endA] = endB
        }
        for (i, j) in myers(Array(a[start..<endA]), Array(b[start..<endB])) ?? [] { match[start + i] = start + j }
        return match
    }

    /// Matched pairs of a longest common subsequence (Myers 1986), or nil beyond
    /// `maxDifferences`. Keeps only the frontier of each round (O(D²) memory).
    private static func myers(_ a: [Int], _ b: [Int]) -> [(Int, Int)]? {
        let (n, m) = (a.count, b.count)
        if n == 0 || m == 0 { return [] }
        let limit = min(n + m, maxDifferences)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        var trace: [[Int]] = []
        for d in 0...limit {
            trace.append(Array(v[(offset - d - 1)...(offset + d + 1)]))
            for k in stride(from: -d, through: d, by: 2) {
                var x =
                    k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])
                    ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                while x < n, y < m, a[x] == b[y] {
                    x += 1
                    y += 1
                }
                v[offset + k] = x
                if x >= n, y >= m { return backtrack(trace, n: n, m: m) }
            }
        }
        return nil
    }

    private static func backtrack(_ trace: [[Int]], n: Int, m: Int) -> [(Int, Int)] {
        var pairs: [(Int, Int)] = []
        var (x, y) = (n, m)
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let v = trace[d]
            func at(_ k: Int) -> Int { v[k + d + 1] }
            let k = x - y
            let previousK = k == -d || (k != d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
            let previousX = at(previousK)
            let previousY = previousX - previousK
            while x > previousX, y > previousY {
                x -= 1
                y -= 1
                pairs.append((x, y))
            }
            if d > 0 { (x, y) = (previousX, previousY) }
        }
        return pairs.reversed()
    }
}
