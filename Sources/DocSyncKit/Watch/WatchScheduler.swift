/// When `docsync watch` syncs: a value that turns what happened (edits settled, the
/// remote pushed, a sync finished or failed, time passing) into one decision, "sync now,
/// for this reason" or "wait until then". It reads no clock and touches nothing, so every
/// rule is tested with plain numbers; the command keeps the process, the descriptors and
/// the signals.
///
/// - Edits settle `debounce` seconds after the last one: a burst of saves is one sync.
/// - With nothing to do, a sync runs every `pullInterval` to bring in the remote's changes.
/// - A sync that must be tried again later (the remote away or busy, or a failure before
///   it got anywhere) is retried after `firstRetry`, doubling up to `lastRetry`; an edit
///   synced meanwhile (it is recorded at once) leaves the retry where it was.
public struct WatchScheduler: Sendable, Equatable {
    /// Why a sync runs.
    public enum Trigger: String, Sendable { case start, edit, pull, retry, overflow, remote }

    public enum Decision: Sendable, Equatable {
        case syncNow(Trigger)
        case wait(until: Double)
    }

    public let debounce: Double
    public let pullInterval: Double
    public static let firstRetry = 5.0
    public static let lastRetry = 300.0

    /// When the last edit not synced yet happened.
    private(set) var dirtyAt: Double?
    /// Another replica pushed (a watched folder remote).
    private(set) var remoteDirty = false
    /// The kernel dropped events: the next sync says it rescans everything.
    private(set) var overflowed = false
    /// When the timer's sync is due, and why it would run.
    private(set) var timer: Double
    private(set) var timerTrigger = Trigger.start
    /// The next retry's delay.
    private(set) var backoff = WatchScheduler.firstRetry

    /// Starts with a sync right away (edits made while nothing watched).
    public init(debounce: Double, pullInterval: Double, now: Double) {
        self.debounce = debounce
        self.pullInterval = pullInterval
        timer = now
    }

    /// Files of the tree changed (`relevant`: a document or a folder, not only ignored
    /// files), or the kernel's queue overflowed.
    public mutating func treeChanged(relevant: Bool, overflowed: Bool, at now: Double) {
        if relevant { dirtyAt = now }
        if overflowed { self.overflowed = true }
    }

    /// Another replica's push landed in a watched folder remote: pulled once it settles,
    /// like an edit here.
    public mutating func remotePushed(at now: Double) {
        dirtyAt = now
        remoteDirty = true
    }

    /// What to do at `now`. A sync decided clears what it will take care of.
    public mutating func decide(now: Double) -> Decision {
        let due = dirtyAt.map { min(timer, $0 + debounce) } ?? timer
        guard now >= due else { return .wait(until: due) }
        let trigger: Trigger =
            dirtyAt != nil && timer > now ? (overflowed ? .overflow : remoteDirty ? .remote : .edit) : timerTrigger
        dirtyAt = nil
        overflowed = false
        remoteDirty = false
        return .syncNow(trigger)
    }

    /// A sync for `trigger` finished at `now`; `retry`: it is to be tried again later.
    public mutating func finished(_ trigger: Trigger, retry: Bool, at now: Double) {
        guard retry else {
            backoff = Self.firstRetry
            timer = now + pullInterval
            timerTrigger = .pull
            return
        }
        // An edit synced while retrying keeps the retry where it was.
        if timerTrigger == .retry && trigger != .retry && timer > now { return }
        timer = now + backoff
        backoff = min(backoff * 2, Self.lastRetry)
        timerTrigger = .retry
    }

    /// The delay the next retry would wait (said in the line of a sync that will be retried).
    public var nextRetryDelay: Double { backoff }
}
