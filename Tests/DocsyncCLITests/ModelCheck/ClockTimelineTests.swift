// The model check's keeper of clock dates (ModelClockTimeline.swift). The model orders
// versions of clocks off by seconds by their dates; a timeline that let a save or a run
// fall inside another clock's run span would make it guess an order the engine may not
// have taken, and one that never let anything through would stall the run.

import Testing

@Suite struct ClockTimelineTests {
    @Test("a save waits past another clock's run span, not past its own clock's")
    func aSaveWaitsPastAnotherClocksSpan() {
        var timeline = MC.ClockTimeline()
        timeline.record(10_000, 10_500, skew: 20_000)
        // Inside the span of a clock 20 s ahead: to its end and the margin after it.
        #expect(timeline.wait(from: 10_200, length: 0, skew: 0) == 500 - 200 + MC.ClockTimeline.margin + 1)
        // Just before it, clear of the margin: no wait.
        #expect(timeline.wait(from: 9_000, length: 0, skew: 0) == 0)
        // The same clock: its dates follow the order of events, nothing to keep apart.
        #expect(timeline.wait(from: 10_200, length: 0, skew: 20_000) == 0)
    }

    @Test("a run's span goes to the first gap long enough among the other clocks' dates")
    func aRunFindsAGap() {
        var timeline = MC.ClockTimeline()
        // A clock behind runs among what the others did: saves at 1,000 and 1,300, a run at 2,000…2,400.
        timeline.record(1_000, 1_000, skew: 0)
        timeline.record(1_300, 1_300, skew: 0)
        timeline.record(2_000, 2_400, skew: 0)
        let m = MC.ClockTimeline.margin
        // 400 ms from 900 meets the save at 1,000: past 1,300 there are 700 ms free before 2,000.
        #expect(timeline.wait(from: 900, length: 400, skew: -30_000) == 1_300 + m + 1 - 900)
        // 800 ms fit nowhere before the run: after it.
        #expect(timeline.wait(from: 900, length: 800, skew: -30_000) == 2_400 + m + 1 - 900)
        #expect(timeline.meets(1_200, 1_400, skew: -30_000))
        #expect(!timeline.meets(1_400, 1_900, skew: -30_000))
        timeline.forget(before: 2_000)
        #expect(!timeline.meets(900, 1_400, skew: -30_000))
        #expect(timeline.meets(2_390, 2_500, skew: -30_000))
    }
}
