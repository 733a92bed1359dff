import Foundation

extension MC {
    /// What the replicas' clocks dated, on the time line their ids are ordered by (ms as
    /// each clock reads it): every save's mtime, and each run that made versions, as the
    /// span its clock read from the run's start to its end.
    ///
    /// Why: with clocks off by seconds, a run on one machine and a save on another made
    /// seconds apart can be dated in either order, and the model orders them by those dates
    /// (real milliseconds, `Model.tick`). It knows a save's date to the millisecond (the
    /// driver sets its mtime) but a run's versions only as "somewhere in its span". So the
    /// driver keeps every date one clock gives out of the spans another clock's runs made
    /// versions in: a save waits until its date is past them, a run until its span fits in
    /// a gap (a clock behind dates its runs among what the others did seconds ago). Clocks
    /// that agree need none of this: the driver makes one thing at a time, so their dates
    /// follow the order of events (concurrent runs are the driver's permutations).
    struct ClockTimeline {
        struct Dated {
            var lo: Int64
            var hi: Int64
            /// The clock's offset (ms) of the replica that dated it: dates on one clock
            /// follow the order of events, so only other clocks' dates are kept apart.
            var skew: Int64
        }

        private(set) var dated: [Dated] = []
        /// Dates closer than this to another clock's span count as inside it: the engine
        /// reads its clock and the kernel its file times in whole milliseconds.
        static let margin: Int64 = 3

        mutating func record(_ lo: Int64, _ hi: Int64, skew: Int64) {
            dated.append(Dated(lo: lo, hi: hi, skew: skew))
        }

        /// Forgets what lies further back than any clock can reach now (`reach`: the
        /// largest offset between two clocks).
        mutating func forget(before ms: Int64) { dated.removeAll { $0.hi < ms } }

        /// How long (ms of real time) a span of `length` ms dated from `start` on a clock
        /// off by `skew` must wait to meet no date of another clock: 0 when it fits now.
        func wait(from start: Int64, length: Int64, skew: Int64) -> Int64 {
            var from = start
            for d in dated.filter({ $0.skew != skew }).sorted(by: { $0.lo < $1.lo }) {
                if d.hi + Self.margin < from { continue }
                if d.lo - Self.margin > from + length { break }
                from = d.hi + Self.margin + 1
            }
            return from - start
        }

        /// Whether a span dated `lo...hi` on a clock off by `skew` met another clock's date.
        func meets(_ lo: Int64, _ hi: Int64, skew: Int64) -> Bool {
            dated.contains { $0.skew != skew && $0.hi + Self.margin >= lo && $0.lo - Self.margin <= hi }
        }
    }
}
