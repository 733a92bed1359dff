import Testing

@testable import DocSyncKit

/// `docsync watch`'s decisions, with plain numbers for the clock: what the command does
/// between its poll() calls, tested without a process.
@Suite struct WatchSchedulerTests {
    typealias S = WatchScheduler

    static func fresh(at now: Double = 100) -> S {
        S(debounce: 0.5, pullInterval: 60, now: now)
    }

    @Test("the first decision is a sync right away (edits made while nothing watched)")
    func startsWithASync() {
        var s = Self.fresh()
        #expect(s.decide(now: 100) == .syncNow(.start))
    }

    @Test("after a sync, the next one is a pull one interval later")
    func pullsEveryInterval() {
        var s = Self.fresh()
        _ = s.decide(now: 100)
        s.finished(.start, retry: false, at: 101)
        #expect(s.decide(now: 120) == .wait(until: 161))
        #expect(s.decide(now: 161) == .syncNow(.pull))
    }

    @Test("a burst of edits is one sync, debounce after the last one")
    func burstOfEditsIsOneSync() {
        var s = Self.fresh()
        _ = s.decide(now: 100)
        s.finished(.start, retry: false, at: 100)
        s.treeChanged(relevant: true, overflowed: false, at: 110)
        s.treeChanged(relevant: true, overflowed: false, at: 110.3)
        #expect(s.decide(now: 110.5) == .wait(until: 110.8))
        #expect(s.decide(now: 110.8) == .syncNow(.edit))
        s.finished(.edit, retry: false, at: 111)
        #expect(s.decide(now: 111) == .wait(until: 171), "the edits are taken: next is the pull")
    }

    @Test("changes to ignored files alone do not sync; an overflow says so at the next edit sync")
    func irrelevantAndOverflow() {
        var s = Self.fresh()
        _ = s.decide(now: 100)
        s.finished(.start, retry: false, at: 100)
        s.treeChanged(relevant: false, overflowed: false, at: 105)
        #expect(s.decide(now: 106) == .wait(until: 160))
        s.treeChanged(relevant: true, overflowed: true, at: 107)
        #expect(s.decide(now: 107.5) == .syncNow(.overflow))
        s.finished(.overflow, retry: false, at: 108)
        s.treeChanged(relevant: true, overflowed: false, at: 109)
        #expect(s.decide(now: 109.5) == .syncNow(.edit), "the overflow was said once")
    }

    @Test("another replica's push is pulled once it settles, as trigger remote")
    func remotePushIsPulled() {
        var s = Self.fresh()
        _ = s.decide(now: 100)
        s.finished(.start, retry: false, at: 100)
        s.remotePushed(at: 120)
        #expect(s.decide(now: 120.2) == .wait(until: 120.5))
        #expect(s.decide(now: 120.5) == .syncNow(.remote))
    }

    @Test("a failed sync is retried after 5 s, doubling to at most 300 s, and a success starts over")
    func retriesBackOff() {
        var s = Self.fresh()
        _ = s.decide(now: 0)
        var now = 0.0
        var delays: [Double] = []
        for _ in 0..<9 {
            s.finished(.retry, retry: true, at: now)
            guard case .wait(let until) = s.decide(now: now) else {
                Issue.record("a retry right away")
                return
            }
            delays.append(until - now)
            now = until
            #expect(s.decide(now: now) == .syncNow(.retry))
        }
        #expect(delays == [5, 10, 20, 40, 80, 160, 300, 300, 300])
        s.finished(.retry, retry: false, at: now)
        #expect(s.nextRetryDelay == 5)
        #expect(s.decide(now: now) == .wait(until: now + 60))
    }

    @Test("an edit synced while retrying is synced at once and leaves the retry where it was")
    func editDuringRetry() {
        var s = Self.fresh()
        _ = s.decide(now: 0)
        s.finished(.start, retry: true, at: 0)  // retry at 5, next delay 10
        s.treeChanged(relevant: true, overflowed: false, at: 1)
        #expect(s.decide(now: 1.5) == .syncNow(.edit), "the edit is recorded without waiting for the remote")
        s.finished(.edit, retry: true, at: 2)  // still away
        #expect(s.decide(now: 2) == .wait(until: 5), "the retry stays at 5")
        #expect(s.decide(now: 5) == .syncNow(.retry))
        s.finished(.retry, retry: true, at: 5)
        #expect(s.decide(now: 5) == .wait(until: 15), "and then backs off as before")
    }

    @Test("an edit during a pull interval syncs as an edit, not a pull")
    func editBeforeTheTimer() {
        var s = Self.fresh()
        _ = s.decide(now: 0)
        s.finished(.start, retry: false, at: 0)
        s.treeChanged(relevant: true, overflowed: false, at: 59.6)
        #expect(s.decide(now: 60) == .syncNow(.pull), "the timer came first: it syncs the edit too")
        s.finished(.pull, retry: false, at: 60)
        #expect(s.decide(now: 60.1) == .wait(until: 120))
    }
}
