// A reference model of docsync's sync rules, written from SPEC.md and docs/SYNC.md only.
// It shares nothing with the engine (no `import DocSyncKit`): ModelDriver.swift drives the
// BUILT binary with random edits and syncs, and compares every replica, the remote and
// every conflict list with what this model says after every step.
//
// What the model is:
// - A document is a logical `doc` number with a path and a version. A version is the
//   content (flat fields "a", "b", "c" with unique string values) plus a `tick`: the
//   order in which it was saved (user edits, from the file's mtime) or made by docsync
//   (field merges, `resolve`). The driver sets each save's mtime from a clock that grows by
//   at least 2 ms per save, never runs ahead of the real time, and is always later than
//   the end of the previous docsync run, so "later changesetId" = "later tick" on every
//   replica (rule 1: the physical part of a new changesetId is the file's mtime).
// - Each replica has: the files it should hold (`local`), the last-synced state (`base`),
//   and which conflict records it knows and which it knows to be settled.
// - The remote holds the latest version of every live document; deleted ones are absent
//   (tombstone or purged by gc: the model does not tell them apart).
//
// One sync of a replica, per document (SYNC.md's table), against base B, local L, remote R:
// - a file that is not valid JSON here: skipped entirely (base, file and remote stay; the
//   remote version waits). The run exits 1. Once fixed, it is an ordinary local edit
//   merged three-way against the same base (rule 5).
// - neither changed: nothing; one side changed: take it (a deletion is a change).
// - both deleted: nothing. Deleted on one side, changed on the other: the change wins and
//   a conflict record names the deletion (rule 4).
// - both changed: field by field against B (absent B = no fields): one side changed a
//   field: take it; both the same way: take it; both differently: the value of the version
//   with the later tick (rule 2), and a record of the colliding fields whose stored copy
//   is the whole losing version. Removed on one side and changed on the other: the change
//   wins (an edit beats a removal); the stored version is the side that lost a value, the
//   local one when each side lost one (SYNC.md's field table). A nested object's keys are
//   fields of their own (`n.x`), as the merge goes key by key at any depth. The declared
//   counter `k` changed on both sides is base + both deltas, never a conflict (with no
//   base at all, first contact, it merges like any field).
// - Ticks are real times (ms, times `floorStep`, plus a counter): a save's tick is its
//   mtime; a save dated hours in the past sorts right after the version it was edited from
//   (rule 1: "always sorts after the version it was edited from"), one dated in the future
//   is dated when recorded (never later than now); what docsync makes is dated by the start
//   of the run that made it (`runStartMs`; the driver keeps other clocks' dates out of the
//   run's span, `ClockTimeline`, so where in it the engine dated a version cannot matter).
// - Clocks: a replica whose machine's clock is off (`skewMs`, 3 to 60 seconds or 15
//   minutes to a day, either way) dates its saves and what docsync makes there by that
//   clock: its ticks carry that offset (`offset`), so a version made there seconds before
//   a save elsewhere can sort after it. A save sorts after the version it was edited from
//   (`saveTick`: right after it when that one is dated later, from a clock ahead or on a
//   clock behind); what docsync makes (merges, resolve, override, restore) sorts after
//   every id the replica issued or saw (`madeTick`, `maxSeen`: rule 1's "later than every
//   id issued or seen"). Two clocks may be off at once, by offsets at least 5 seconds (15
//   minutes) apart.
// - Equal times: two versions with one tick (two saves in the same millisecond, or two
//   merges made right after the same id) are ordered by their makers' replica ids, the
//   greater later (SYNC.md; `later(_:than:)`, `replicaIdText`).
// - Both sides moved a document: the later tick's path wins and the other rename is a
//   recorded conflict (SPEC: rename against rename). A result equal to one side is that side's version; any
//   other result is a new version made at this sync. Path: the side that moved it, or the
//   later version's path if both did. Equal content on both sides: not a conflict, the
//   remote's version is kept.
// Exit code: 1 if any invalid file, else 3 if this sync recorded a conflict or learned one
// in which this replica's own version (or deletion) lost, else 0. A record learned by a
// third replica is listed but does not make its run exit 3. (The rules say "3 conflicts
// recorded"; that the replica whose edit lost is told by its exit code too is the reading
// the engine rework took, and the one a cron user needs.)
//
// Concurrent runs (issue 21): the model has no notion of time overlap. For a step in which
// 2–3 replicas sync at once, ModelDriver.syncTogether runs `sync` on copies of the model in
// every permutation of the runs (a run that exited 75 left out, a SIGKILLed run optional,
// followed by its recovery sync) and keeps the one the replicas and the remote agree with.
//
// Conflict records travel (rule 3): the replica that found one publishes it with its push;
// every replica learns it at its next sync. `resolve` settles it on that replica at once
// and everywhere else once the resolver synced and the others pulled.
//
// First contact (SYNC.md): a replica joining later (index 3 on) with plain files at the
// remote's paths is a sync with no base: the three-way merge against an empty base is the
// two-way merge (one side's fields taken, both sides' differing fields to the later save).
// A commit made with plain git is a new remote version by `Model.plainGit` (replica `git0`).
// A record's `keptBy` is the maker of the version the document kept (for a field merge, the
// merging replica); `resolve --take local` is the stored version only on its maker.
//
// Assumptions where the rules are not explicit (a careful user's reading):
// - A file written back after its deletion was synced (by any replica) with changed
//   content is a new life of the same document: pushed, no conflict record. Written back
//   before the deletion was synced, it is just an edit (the delete never happened).
// - `resolve DOC --take local|remote` is only issued on the replica that found the conflict
//   (where "local" and "remote" are unambiguous), only while the colliding fields still
//   hold the winner's values and the document has one open record there; it replaces
//   exactly the colliding fields. Elsewhere the driver runs `resolve DOC` (accept as is),
//   which settles every open record of the document this replica knows.
// - Two identical edits racing are rare here; the model keeps the remote's version.
// - The driver never makes ambiguous situations the rules leave open: no two documents at
//   one path (every new path is fresh), no concurrent renames of one document (but for a
//   send-only replica's `override` over a rename: the rename that lost is recorded), no rename
//   racing a delete, no `rm`/`mv` of a file whose unrecorded copy exists (the copy could
//   then legitimately inherit the identity), `cp` only of a file at its tracked path,
//   invalid saves only of a file tracked at its path (one moved, created or written back
//   since the last sync looks, unreadable, like a deletion plus an unknown file), and no invalid save or write-back of a document whose change a
//   `resolve` has already recorded (resolve records the whole tree; the journal pushes
//   that recorded version at the next sync even if the file broke since).

import Foundation

enum MC {}

extension MC {
    typealias Fields = [String: String]
    /// Top-level fields, and two keys of a nested object `n` (dotted, as the engine names
    /// a field of a conflict: `n.x`). The merge is key by key at any depth (SPEC), so the
    /// model merges the dotted keys as flat ones; `n` itself is never removed. And two
    /// elements of the array `i` of records with an identity (`{"id": "p", "v": …}`): SYNC.md's
    /// Arrays, rule 2, matches elements by `id` and merges each like an object, an element
    /// added, removed or changed on one side as a key would be, "an edit beats a removal"
    /// included; so the model merges each element's `v` as a field of its own (`i.p`).
    static let fieldNames = ["a", "b", "c", "n.x", "n.y", "i.p", "i.q"]
    /// The identity array's key, and the `id`s its elements may have (`r` only when added).
    static let arrayField = "i"
    static let elementIds = ["p", "q", "r"]
    /// Conflict field names up to the element of `i`: the engine names an element by its
    /// index (`i.0.v`, SYNC.md's field paths), the model by its `id`.
    static func conflictFields(_ fields: [String]) -> [String] {
        Set(fields.map { $0 == arrayField || $0.hasPrefix(arrayField + ".") ? arrayField + "[]" : $0 }).sorted()
    }
    /// The fields a step may remove or add back.
    static let topFields = ["a", "b", "c"]

    /// Field names as a record of whole versions names them (`lww`, `override`: every field
    /// the two versions differ in, SYNC.md): a nested object key by key (`n.x`), an array
    /// whole (`i`), as the engine's comparison does not go into arrays; `resolve --take`
    /// then takes the whole array (folder seed 29114).
    static func wholeArrays(_ keys: Set<String>) -> [String] {
        Set(keys.map { $0.hasPrefix(arrayField + ".") ? arrayField : $0 }).sorted()
    }

    /// The ids of the elements of `i` in `fields` (its fields are `i.<id>`).
    static func elements(_ fields: Fields) -> Set<String> {
        Set(fields.keys.filter { $0.hasPrefix(arrayField + ".") }.map { String($0.dropFirst(arrayField.count + 1)) })
    }
    /// A declared counter (`docsync config merge.counters k` on every replica): an integer,
    /// changed by adding to it; changed on both sides it merges to base + both deltas and is
    /// never a conflict (SYNC.md, "Counters"), identical additions too.
    static let counterField = "k"

    /// The counter's value after a merge, when both sides changed it; nil otherwise.
    static func counterSum(base: String?, local: String?, remote: String?) -> String? {
        guard let b = base.flatMap(Int.init), let l = local.flatMap(Int.init), let r = remote.flatMap(Int.init),
            l != b, r != b
        else { return nil }
        return String(l + r - b)
    }

    struct Version: Equatable, CustomStringConvertible {
        var id: Int
        var fields: Fields
        var tick: Int
        /// The mtime (ms) of the save that made it, for user saves (nil: made by docsync).
        var mtimeMs: Int64?
        var author: Int

        var description: String { "v\(id)@t\(tick)" + MC.show(fields) }
    }

    struct Placed: Equatable, CustomStringConvertible {
        var version: Version
        var path: String
        var description: String { "\(path) \(version)" }
    }

    /// A file the replica should hold for a document.
    struct LocalDoc: Equatable {
        var placed: Placed
        /// Set while the file holds bytes that are not a valid document: those bytes.
        var invalidBytes: [UInt8]?
        /// What the user meant to save when the file broke (written by the fix).
        var intended: Fields?
    }

    /// Rules a prediction depends on, to tell known engine defects from new failures.
    enum Rule: String, CaseIterable, Comparable {
        case saveTime = "rule1-later-save-wins"
        case fieldMerge = "rule2-field-merge"
        case conflictsTravel = "rule3-conflicts-travel"
        case deleteVsEdit = "rule4-delete-vs-edit-recorded"
        case invalidMerge = "rule5-invalid-fix-merged"
        case identity = "rule6-identity"
        case exitCodes = "rule7-exit-codes"
        /// A conflict record seen from each replica's point of view (`storedSide`, `keptBy`),
        /// and `resolve --take local|REPLICA` meaning what that replica has or made.
        case pointOfView = "rule8-point-of-view"
        /// First contact: a file without ids at a path where the remote has a document joins
        /// that document (same content: nothing pushed; else a two-way merge), never a copy.
        case firstContact = "rule9-first-contact"
        /// A version pulled from plain git carrying a known changesetId with other content
        /// gets a fresh changesetId (one changesetId names one content).
        case plainGitIdentity = "rule10-plain-git-new-changeset"
        /// A field removed on one side and changed on the other: the change wins, the
        /// removing version is stored (SYNC.md's field table).
        case fieldRemoval = "rule12-edit-beats-removal"
        /// A save whose mtime lies in the past sorts right after the version it was edited
        /// from; one in the future is dated when it is recorded (SPEC: "never later than now").
        case clockHazard = "rule13-save-time-from-mtime"
        /// Send-only replicas (issue 24): a remote change is held, never applied; a local
        /// change of such a document waits; `override` sends the local version over the
        /// remote's, which is recorded as lost (its maker told).
        case override = "rule11-send-only-override"
        /// A path with a whole-document policy (`merge.policyFor.notes/** lww`): content
        /// changed differently on both sides goes whole to the later changesetId, the
        /// other version stored, the record naming every field the two differ in (SYNC.md,
        /// "Policies"); the policy is the one of the path the document ends up at.
        case wholePolicy = "rule14-lww-policy"
        /// Elements of `i` inserted on both sides (or kept by an edit that beat a removal
        /// beside an insertion): SYNC.md places insertions into one gap by save time, the
        /// earlier save's first, so the array may leave `id` order; the model holds the
        /// elements, not their order, and checks the order of such a document no more.
        case arrayOrderBySaveTime = "rule15-array-insertions-by-save-time"
        /// Not a rule: an engine defect found by this check (issue 21), fixed since (see
        /// `PlainGitEditTests.replicasThatSawDifferentHistoryDeriveOneId`). A document edited with
        /// plain git keeping its changesetId got a fresh one only on a replica whose last
        /// sync saw that changesetId (the puller compared with the blob at its own cursor):
        /// a replica that last synced an older version of the document took the new
        /// content under the old changesetId, which then named two contents.
        case plainGitEditUnseenChangeset = "defect-plain-git-edit-keeps-unseen-changeset"
        /// Not a rule: an engine defect found by this check (issue 21). First contact with a
        /// plain file that lacks a field the remote's document has, and whose other differing
        /// fields all lose (saved earlier): the merge's values are exactly the remote's, but
        /// the engine lays them out in the joiner's key order (the missing field appended)
        /// and pushes that as a new version (new changesetId, `keptBy` the joiner) instead
        /// of keeping the remote's version; every replica then pulls a reordered copy.
        case firstContactReorderedCopy = "defect-first-contact-pushes-reordered-remote"
        /// Not a rule: an engine defect found by this check (issue 21). `resolve --take` killed
        /// after it wrote the taken values into the file but before it journaled the resolve
        /// (Workspace+Resolve: `io.write`, then `append(.resolve)`, then `markResolved`): the
        /// next sync pushes the values as an ordinary edit and the conflict stays open; a
        /// killed resolve should have done nothing or all of it.
        case killedResolveHalfDone = "defect-killed-resolve-half-done"
        /// Not a rule: an engine defect found by this check. A file copied (`cp`) and whose
        /// original then became invalid JSON before the next sync takes the original's
        /// identity (recorded as a rename), though the original is still at its path.
        case copyBesideInvalidOriginal = "defect-copy-beside-invalid-original"
        /// Not a rule: an engine defect found by this check. Two conflict records naming the
        /// same losing changesetId (a version that lost a field, then was deleted and the
        /// deletion lost to the merged edit) share one file in `.docsync/conflicts/`: the
        /// later record replaces the earlier, which is no longer listed.
        case conflictStoreKeyCollision = "defect-two-records-one-losing-version"
        /// Not a rule: an engine defect found by this check. The replica whose deletion lost
        /// to an edit lists the record but exits 0 unless it also made the deleted version
        /// (it exits 3 when it did): the exit code tells the deleter only sometimes.
        case deleterNotToldByExit = "defect-deleter-exit-code"
        /// Not a rule: an engine defect found by this check (issue 21), fixed since (the
        /// deleted version is read from the remote's history). An edit beats a
        /// deletion of a version the editing replica never saw (another replica changed the
        /// document, then deleted it): the record names the deleted changesetId, but the
        /// stored copy holds the finder's base version (an older content under the deleted
        /// version's name); the deleted version is not in the conflict store.
        case deletionCopyIsFinderBase = "defect-deletion-copy-holds-finder-base"
        /// Not a rule: an engine defect found by this check (issue 21), fixed since: a
        /// retry merges from the user's save, for every document any pull of the run met,
        /// held versions included, and takes back the records its earlier pull made
        /// (`PullPlanner.userVersions`, `ConcurrentPushTests.retryMerges…`/`retryTakesBack…`;
        /// daemon seed 288731368 and folder seed 777 agree now). Two replicas sync at
        /// the same moment, both merge their edit of a document with a third replica's
        /// change, one push loses the race: that replica merges again with its own first
        /// merge as "local", a version stamped with the current time, so it beats the other
        /// replica's later save of the same field. No serial order of the runs ends so.
        case retryMergeUsesMergeTime = "defect-retry-merges-its-merge"
        static func < (a: Rule, b: Rule) -> Bool { a.rawValue < b.rawValue }
    }

    struct ConflictRecord: CustomStringConvertible {
        var id: Int
        var doc: Int
        /// Colliding fields; empty for a deletion that lost to an edit.
        var fields: [String]
        /// The losing version (nil: the loser was a deletion).
        var loser: Version?
        var winner: Version
        /// The version the document kept (for a field merge: the merged version, made by the
        /// replica that merged; else the winner). Its changesetId is the record's `winner`,
        /// and its maker the record's `keptBy`.
        var kept: Version?
        var keptBy: Int { keptRenamer ?? (kept ?? winner).author }
        /// Renamed on both sides and this record's name lost (SPEC: "the later recorded
        /// rename wins on every replica … the other name is a recorded conflict"): `loser` is
        /// the losing side's version (its content is stored), `renamer` made the rename that
        /// lost, `keptRenamer` the one that won (a rename keeps the changesetId, so the
        /// versions' makers are not the renames').
        var renameLost = false
        var renamer: Int?
        var keptRenamer: Int?
        /// Which side of the finder's sync lost.
        var loserWasLocal: Bool
        var finder: Int
        /// For a deletion that lost: the replica that deleted (when known).
        var deleter: Int?
        /// For a deletion that lost: the version that was deleted (when known), which the
        /// conflict store keeps.
        var deletedVersion: Version?
        /// The finder's base version of the document when it found the record.
        var finderBase: Version?
        var knownBy: Set<Int>
        var settledKnownBy: Set<Int> = []
        /// Where the document was for the record (the losing version's path; for a lost
        /// deletion the finder's base path): what a sparse replica's selection is asked.
        var path = ""
        /// Sparse replicas whose pull passed the record, or its settlement, over (the
        /// document not theirs, its path not selected): they never hear of it again.
        var passedBy: Set<Int> = []
        /// Of those, the replicas that held the document at the start of a pull since
        /// (`retakeableRecords`).
        var mayRetake: Set<Int> = []
        var settlePassedBy: Set<Int> = []
        var published = false
        var settlePublished = false

        var description: String {
            let what =
                renameLost
                ? "rename to \(path) lost"
                : fields.isEmpty
                    ? (loser == nil ? "deletion lost" : "whole document") : "fields " + fields.joined(separator: ",")
            return
                "conflict#\(id) doc\(doc) \(what), lost \(loser.map(\.description) ?? "deletion") (\(loserWasLocal ? "local" : "remote") side of r\(finder)), kept \(winner)"
        }
    }

    static func show(_ f: Fields) -> String {
        "{" + f.keys.sorted().map { "\($0):\(f[$0]!)" }.joined(separator: ",") + "}"
    }
}

extension MC {
    /// The whole model: remote, replicas, conflict records.
    struct Model {
        var replicaCount: Int
        var remote: [Int: Placed] = [:]
        var local: [[Int: LocalDoc]]
        var base: [[Int: Placed]]
        var records: [ConflictRecord] = []
        /// Records a replica settled with `resolve` and has not pushed yet.
        var pendingSettles: [Set<Int>]
        /// Replicas with `sync.mode receive-only`: their syncs pull and never push, so
        /// nothing they record or settle is published (SYNC.md, "A replica that only receives").
        var receiveOnly: Set<Int> = []
        /// Replicas with `sync.mode send-only`: a remote change is held, never applied (the
        /// base stays), and a local change of a document with a held change is not sent,
        /// until `override` (SYNC.md, "A replica that only sends").
        var sendOnly: Set<Int> = []
        /// Per replica, the remote as its last pull read it: what a send-only replica holds.
        var seenRemote: [[Int: Placed]]
        /// Replicas that keep only part of the remote (`docsync sparse`), all with the same
        /// selection (`Model.selected`).
        var sparse: Set<Int> = []
        /// Every replica has `merge.policyFor.notes/** lww` (`Model.lww`).
        var lwwNotes = false
        /// Replicas whose sync is a `clone` that pulls before the replica's config is set
        /// (the default policy settles its merges).
        var unconfigured: Set<Int> = []
        /// Per replica, each document as its last sync recorded it (nil inside: recorded as
        /// deleted; absent: not known): what the engine decides from while the file is
        /// invalid.
        var recorded: [[Int: Placed?]]
        /// Per replica, documents saved, moved or deleted during its last sync and not seen
        /// by it (`editDuringSync`, the order "the sync first"): unrecorded until the next.
        var unseenEdits: [Set<Int>]
        /// Per replica, documents a save or `resolve` brought back to the base's content, with
        /// that base's version id: the engine holds a version of its own there (pending on a
        /// receive-only replica) where the model holds the base version itself.
        var ownVersionOfBase: [[Int: Int]]
        /// Rules each document's current expectations depend on.
        var docRules: [Int: Set<Rule>] = [:]
        /// The replica whose deletion each remote tombstone records, and the deleted version.
        var remoteDeleter: [Int: Int] = [:]
        var remoteDeleted: [Int: Version] = [:]
        /// The replica whose push (or plain-git commit) put each document's remote version there.
        var remotePusher: [Int: Int] = [:]
        private var learnedDeletionOnly = true
        var nextVersion = 1
        var nextRecord = 1
        var tick = 0
        /// Replicas whose machine's clock is off (ms; see "Clocks" above), and that offset in
        /// ticks.
        var skewMs: [Int: Int64] = [:]
        func offset(_ r: Int) -> Int { Int(skewMs[r] ?? 0) * Model.floorStep }
        /// When the run the model follows now started, on a clock that keeps time (ms; set
        /// by the driver): what docsync makes in it is dated from then. The driver keeps
        /// every other clock's dates out of the run's span (`ClockTimeline`), so where in
        /// its span the engine dated a version does not change its order.
        var runStartMs: Int64 = 0
        /// Versions docsync made (merges, resolve, override, restore): the driver keeps the
        /// spans of the runs that made some (`ClockTimeline`).
        var madeVersions = 0
        /// Per replica, the highest tick it issued or saw (its clock's state, SPEC rule 1:
        /// what docsync makes now sorts after every id the replica issued or saw).
        var maxSeen: [Int] = []
        /// Below every tick: a replica that saw nothing yet dates what it makes by its clock
        /// alone (a clock behind: before first contact's files dated an hour back too).
        static let nothingSeen = Int.min / 2
        /// User saves: version id → the version it was edited from, whose id it sorts after.
        var savedFrom: [Int: Int] = [:]
        /// Saves dated right after the version they were edited from, not by their own time.
        var flooredSaves = 0
        /// Field collisions whose later version (by date) was the one made first.
        var collisionsAgainstMadeOrder = 0
        /// Documents whose elements of `i` may leave `id` order (`Rule.arrayOrderBySaveTime`),
        /// for good: the files keep that order after every record of the merge is settled.
        var orderNotFollowed: Set<Int> = []
        /// Versions made by a merge only because its elements left both sides' order.
        var reorderedVersions: Set<Int> = []

        init(replicas: Int) {
            replicaCount = replicas
            maxSeen = Array(repeating: Model.nothingSeen, count: replicas)
            local = Array(repeating: [:], count: replicas)
            base = Array(repeating: [:], count: replicas)
            pendingSettles = Array(repeating: [], count: replicas)
            ownVersionOfBase = Array(repeating: [:], count: replicas)
            seenRemote = Array(repeating: [:], count: replicas)
            recorded = Array(repeating: [:], count: replicas)
            unseenEdits = Array(repeating: [], count: replicas)
        }

        /// A tick is a time in real milliseconds times `floorStep`, plus a counter: a save's
        /// is its mtime's, a version docsync makes is dated by its run's start, one counter
        /// after the last tick when that is later (as a hybrid logical clock counts).
        mutating func nextTick() -> Int {
            tick = max(tick + 1, Int(runStartMs) * Model.floorStep)
            return tick
        }

        /// The tick of now, for what the driver asks before a save.
        static func nowTick() -> Int { Int(Date().timeIntervalSince1970 * 1000) * floorStep }

        /// A save's tick right after the version it was edited from (the engine: its time
        /// part one millisecond later); a version docsync makes at once after another's is
        /// one counter later (`madeTick`), which sorts before, however many came in that
        /// millisecond (five runs in a row on a clock behind, folder seed 29104).
        static let floorStep = 1000

        /// The tick of a save dated right after the version of tick `parent`: the next
        /// millisecond, its counter plain (the engine floors the time part, `wall + 1`, and
        /// drops the parent's counter: two saves floored after two versions of one
        /// millisecond tie, as on the first seed with two clocks off, folder 32101).
        static func floored(after parent: Int) -> Int {
            let ms = parent >= 0 ? parent / floorStep : -((-parent + floorStep - 1) / floorStep)
            return (ms + 1) * floorStep
        }

        /// The tick of a version docsync makes on `r` now (a merge, resolve, override,
        /// restore): now on `r`'s clock, and after every id `r` issued or saw.
        mutating func madeTick(_ r: Int) -> Int {
            let t = max(nextTick() + offset(r), maxSeen[r] + 1)
            maxSeen[r] = t
            madeVersions += 1
            return t
        }

        mutating func observe(_ r: Int, _ tick: Int) { maxSeen[r] = max(maxSeen[r], tick) }

        /// Each replica's id (by index; `plainGit`'s is `git0`): equal times are ordered by
        /// the ids' replica part (SYNC.md), as two versions made on two replicas right after
        /// the same id they both saw are (drive seed 50207).
        var replicaIdText: [Int: String] = [Model.plainGit: "git0"]

        /// Whether `a` sorts after `b` (rule 1): the later tick, and of equal ticks the
        /// greater replica id.
        func later(_ a: Version, than b: Version) -> Bool {
            if a.tick != b.tick { return a.tick > b.tick }
            return (replicaIdText[a.author] ?? "") > (replicaIdText[b.author] ?? "")
        }

        /// The version `r` tracks for `doc` (what a save there is edited from): what its
        /// last run recorded, else its base.
        func tracked(_ r: Int, _ doc: Int) -> Version? {
            if let recordedState = recorded[r][doc] { return recordedState?.version }
            return base[r][doc]?.version
        }

        /// The tick a user save of `doc` on `r` gets: when it was saved on `r`'s clock, but
        /// after the version it was edited from (SPEC rule 1).
        func saveTick(_ r: Int, _ doc: Int, at now: Int) -> Int {
            max(now + offset(r), tracked(r, doc).map { Model.floored(after: $0.tick) } ?? Model.nothingSeen)
        }

        /// Whether a save of `doc` on `r` now would get the tick of another version of it:
        /// both dated right after the version they were edited from (a clock behind, or a
        /// version from a clock ahead). The engine then orders them by counter and replica
        /// id, which the model does not follow; the driver edits another document.
        func saveWouldTie(_ r: Int, _ doc: Int) -> Bool {
            saveIsFloored(r, doc) && holdsTick(of: doc, saveTick(r, doc, at: Model.nowTick()))
        }

        /// Whether a save of `doc` on `r` now would be dated by the version it was edited
        /// from rather than by its own time (only where a clock is off).
        func saveIsFloored(_ r: Int, _ doc: Int) -> Bool {
            guard !skewMs.isEmpty else { return false }
            let now = Model.nowTick()
            return saveTick(r, doc, at: now) != now + offset(r)
        }

        /// A replica that joins later (first contact); returns its index.
        mutating func addReplica() -> Int {
            local.append([:])
            base.append([:])
            maxSeen.append(Model.nothingSeen)
            pendingSettles.append([])
            ownVersionOfBase.append([:])
            seenRemote.append([:])
            recorded.append([:])
            unseenEdits.append([])
            replicaCount += 1
            return replicaCount - 1
        }

        /// The author of versions committed with plain git (replica `git0`).
        static let plainGit = -1

        /// Who made the stored version (or deletion) of a record, where known.
        static func storedBy(_ rec: ConflictRecord) -> Int? {
            rec.renameLost ? rec.renamer : rec.loser.map(\.author) ?? rec.deleter
        }

        /// A commit made with plain git on the remote: `doc`'s fields set to `fields`, the
        /// changesetId left as it was. docsync derives a fresh changesetId for it, dated by
        /// the commit, with the replica part `git0` (GIT-REMOTES.md): its author is
        /// `Model.plainGit`, dated by the commit (`committedMs`, whole seconds).
        mutating func plainGitEdit(doc: Int, fields: Fields, committedMs: Int64) {
            guard let p = remote[doc] else { return }
            // Dated by the commit, and after the version it replaced (GIT-REMOTES.md).
            let dated = Int(committedMs) * Model.floorStep
            tick = max(tick, dated)
            let v = newVersion(
                fields, tick: max(dated, Model.floored(after: p.version.tick)), mtime: nil, author: Model.plainGit)
            remote[doc] = Placed(version: v, path: p.path)
            remotePusher[doc] = Model.plainGit
            taint(doc, .plainGitIdentity)
        }

        mutating func newVersion(_ fields: Fields, tick: Int, mtime: Int64?, author: Int) -> Version {
            defer { nextVersion += 1 }
            return Version(id: nextVersion, fields: fields, tick: tick, mtimeMs: mtime, author: author)
        }

        mutating func taint(_ doc: Int, _ rule: Rule) { docRules[doc, default: []].insert(rule) }

        /// Whether any version of `doc` the remote or a replica holds has `tick`.
        func holdsTick(of doc: Int, _ tick: Int) -> Bool {
            if remote[doc]?.version.tick == tick { return true }
            return local.indices.contains { r in
                local[r][doc]?.placed.version.tick == tick || base[r][doc]?.version.tick == tick
            }
        }

        /// Whether any version of `doc` the remote or a replica holds is dated in the
        /// millisecond of `tick` (whatever its counter).
        func holdsMillisecond(of doc: Int, _ tick: Int) -> Bool {
            func ms(_ t: Int) -> Int { t >= 0 ? t / Model.floorStep : -((-t + Model.floorStep - 1) / Model.floorStep) }
            let wanted = ms(tick)
            if let t = remote[doc]?.version.tick, ms(t) == wanted { return true }
            return local.indices.contains { r in
                [local[r][doc]?.placed.version.tick, base[r][doc]?.version.tick].contains { $0.map(ms) == wanted }
            }
        }

        /// Gives versions new ticks (by version id), wherever the model holds them.
        mutating func retick(_ ticks: [Int: Int]) {
            guard !ticks.isEmpty else { return }
            func fix(_ v: inout Version) { if let t = ticks[v.id] { v.tick = t } }
            func fix(_ v: inout Version?) {
                if var w = v {
                    fix(&w)
                    v = w
                }
            }
            func fix(_ p: inout Placed) { fix(&p.version) }
            for d in remote.keys { fix(&remote[d]!) }
            for r in local.indices {
                for d in local[r].keys { fix(&local[r][d]!.placed) }
                for d in base[r].keys { fix(&base[r][d]!) }
                for d in seenRemote[r].keys { fix(&seenRemote[r][d]!) }
                for d in recorded[r].keys {
                    if var p = recorded[r][d]!, ticks[p.version.id] != nil {
                        fix(&p)
                        recorded[r][d] = p
                    }
                }
            }
            for d in remoteDeleted.keys { fix(&remoteDeleted[d]!) }
            for i in records.indices {
                fix(&records[i].loser)
                fix(&records[i].winner)
                fix(&records[i].kept)
                fix(&records[i].deletedVersion)
                fix(&records[i].finderBase)
            }
        }

        /// A user save of `fields` for `doc` on replica `r` (file already written): the local
        /// version is the base's if the content is back to it, else a new version.
        /// `madeByDocsync`: a version docsync wrote (`restore --at`), dated as docsync dates
        /// what it makes; else a user's save at `mtime` on `r`'s clock (nil: not checked),
        /// a new document's (`newDocument`) after nothing.
        mutating func save(
            _ r: Int, doc: Int, path: String, fields: Fields, mtime: Int64?, tick fixed: Int? = nil,
            madeByDocsync: Bool = false, newDocument: Bool = false
        ) {
            let parent = newDocument ? nil : tracked(r, doc)
            // A save is dated by its mtime; the last tick moves there, so that what docsync
            // makes after it (in a run it was saved during) sorts after it.
            if let mtime, fixed == nil, !madeByDocsync { self.tick = max(self.tick, Int(mtime) * Model.floorStep) }
            let tick =
                fixed
                ?? (madeByDocsync
                    ? madeTick(r)
                    : newDocument
                        ? nextTick() + offset(r)
                        : saveTick(r, doc, at: mtime.map { Int($0) * Model.floorStep } ?? nextTick()))
            let version: Version
            if let b = base[r][doc], b.version.fields == fields {
                version = b.version
                ownVersionOfBase[r][doc] = b.version.id
            } else {
                version = newVersion(fields, tick: tick, mtime: mtime.map { $0 + (skewMs[r] ?? 0) }, author: r)
                if let parent, !madeByDocsync {
                    savedFrom[version.id] = parent.id
                    if fixed == nil, tick == Model.floored(after: parent.tick) { flooredSaves += 1 }
                }
                observe(r, tick)
            }
            local[r][doc] = LocalDoc(placed: Placed(version: version, path: path))
        }

        func hasInvalid(_ r: Int) -> Bool {
            local[r].contains { doc, l in l.invalidBytes != nil && !outsideSelection(r, doc) }
        }

        /// The selection of every sparse replica: `tasks/`, and any file whose name ends in
        /// an odd digit (`docsync sparse set tasks/ '*[13579].json'`).
        /// Paths under the `lww` policy when `lwwNotes` is set.
        static func lww(_ path: String) -> Bool { path.hasPrefix("notes/") }

        static func selected(_ path: String) -> Bool {
            if path.hasPrefix("tasks/") { return true }
            let name = path.split(separator: "/").last.map(String.init) ?? path
            guard name.hasSuffix(".json"), let digit = name.dropLast(5).last else { return false }
            return "13579".contains(digit)
        }

        /// A sparse replica's file of a document it has no base for, outside its selection:
        /// never recorded, reported or synced (a new file or a copy made there).
        func outsideSelection(_ r: Int, _ doc: Int) -> Bool {
            guard sparse.contains(r), base[r][doc] == nil, let l = local[r][doc] else { return false }
            return !Model.selected(l.placed.path)
        }

        /// Whether sparse `r` holds `doc`: a base, or a file it records (in its selection).
        func holds(_ r: Int, _ doc: Int) -> Bool {
            base[r][doc] != nil
                || (local[r][doc].map { $0.invalidBytes == nil && Model.selected($0.placed.path) } ?? false)
        }

        struct SyncOutcome {
            var exit: Int32
            var exitRules: Set<Rule> = []
            var newRecords: [Int] = []
            var notes: [String] = []
        }

        /// One complete `docsync sync` of replica `r`; with `pushing` false only its pull (a
        /// run killed between its pull and its push: what it pulled and merged is in the
        /// tree and its base, nothing of it is on the remote, its records are not shared).
        mutating func sync(_ r: Int, pushing completes: Bool = true) -> SyncOutcome {
            let pushing = completes && !receiveOnly.contains(r)
            var out = SyncOutcome(exit: 0)
            // The pull reads every remote version (and deletion) new to it first; what the
            // run makes is dated after all of them.
            for p in remote.values { observe(r, p.version.tick) }
            for v in remoteDeleted.values { observe(r, v.tick) }
            let syncTick = madeTick(r)
            unseenEdits[r] = []
            // A record this sparse replica passed over, of a document it holds as the pull
            // starts: a read of the whole listing in this pull would take it, even if the
            // document then leaves (`retakeableRecords`).
            if sparse.contains(r) {
                for i in records.indices where records[i].passedBy.contains(r) && holds(r, records[i].doc) {
                    records[i].mayRetake.insert(r)
                }
            }
            // Pull: learn every published record and settlement.
            let learned = learnPublished(r)
            seenRemote[r] = remote
            let docs = Set(local[r].keys).union(base[r].keys).union(remote.keys).sorted()
            for doc in docs {
                // A sparse replica: a file outside its selection it has no base for is not
                // recorded, and a remote document it does not hold is taken only at a
                // selected path.
                if sparse.contains(r) {
                    if outsideSelection(r, doc) { continue }
                    if base[r][doc] == nil, local[r][doc] == nil,
                        !(remote[doc].map { Model.selected($0.path) } ?? false)
                    {
                        continue
                    }
                }
                if let l = local[r][doc], l.invalidBytes != nil {
                    _ = l
                    taint(doc, .invalidMerge)
                    // Recorded as deleted, and deleted on the remote too: deleted on both
                    // sides, whatever the file holds now (it is a new document once valid).
                    if case .some(nil) = recorded[r][doc], remote[doc] == nil, base[r][doc] != nil {
                        base[r][doc] = nil
                    }
                    continue
                }
                let b = base[r][doc], l = local[r][doc]?.placed, rm = remote[doc]
                let localChanged = b != l && !(b != nil && l != nil && same(b!, l!))
                // The remote changed when its version is another one, even with the base's
                // content (SYNC.md: "changed" means the changesetId, content hash or path
                // differs): a `resolve` taking a loser can make a new version equal to an
                // older one, and a deletion of that older one then loses to it.
                let remoteChanged = b?.version.id != rm?.version.id || b?.path != rm?.path
                if !localChanged && !remoteChanged { continue }
                // Send-only: every remote change waits, but a deletion both sides made.
                if sendOnly.contains(r) && remoteChanged && !(l == nil && rm == nil) { continue }
                if localChanged && !remoteChanged {
                    if !pushing { continue }
                    if l == nil {
                        remoteDeleter[doc] = r
                        remoteDeleted[doc] = b?.version
                    }
                    remote[doc] = l
                    remotePusher[doc] = r
                    seenRemote[r][doc] = l
                    base[r][doc] = l
                    continue
                }
                if !localChanged && remoteChanged {
                    setLocal(r, doc, rm)
                    base[r][doc] = rm
                    continue
                }
                // Both changed.
                switch (l, rm) {
                case (nil, nil):
                    base[r][doc] = nil
                case (nil, let rv?):
                    if let deleted = b?.version,
                        records.contains(where: { $0.doc == doc && !$0.renameLost && $0.loser?.id == deleted.id })
                    {
                        taint(doc, .conflictStoreKeyCollision)
                    }
                    setLocal(r, doc, rv)
                    base[r][doc] = rv
                    out.newRecords.append(
                        record(
                            doc, fields: [], loser: nil, winner: rv.version, loserWasLocal: true, finder: r,
                            deleter: r, deleted: b?.version, finderBase: b?.version, path: b?.path ?? rv.path))
                    // A record names who made the winning change (issue 42): for a rename that
                    // kept the version, the renamer, not the version's maker.
                    if let b, b.version.id == rv.version.id, b.path != rv.path {
                        records[records.count - 1].keptRenamer = remotePusher[doc]
                    }
                    out.notes.append("doc\(doc): deleted here, changed on the remote: kept the remote version")
                    taint(doc, .deleteVsEdit)
                    out.exitRules.insert(.deleteVsEdit)
                case (let lv?, nil):
                    if pushing { (remote[doc], remotePusher[doc]) = (lv, r) }
                    base[r][doc] = pushing ? lv : nil
                    out.newRecords.append(
                        record(
                            doc, fields: [], loser: nil, winner: lv.version, loserWasLocal: false, finder: r,
                            deleter: remoteDeleter[doc], deleted: remoteDeleted[doc], finderBase: b?.version,
                            path: b?.path ?? lv.path))
                    if let b, b.version.id == lv.version.id, b.path != lv.path {
                        records[records.count - 1].keptRenamer = r
                    }
                    out.notes.append("doc\(doc): deleted on the remote, changed here: kept the local version")
                    taint(doc, .deleteVsEdit)
                    out.exitRules.insert(.deleteVsEdit)
                case (let lv?, let rv?):
                    let merged = merge(r, doc: doc, base: b, local: lv, remote: rv, tick: syncTick, outcome: &out)
                    setLocal(r, doc, merged)
                    base[r][doc] = pushing ? merged : rv
                    if pushing { (remote[doc], remotePusher[doc]) = (merged, r) }
                }
            }
            // What the engine decides from while a file is invalid is the tree as this sync
            // left it (a document it pulled is recorded as pulled, not as absent).
            for doc in docs where local[r][doc]?.invalidBytes == nil {
                recorded[r][doc] = .some(local[r][doc]?.placed)
            }
            // Push: publish this replica's records and settlements.
            if !completes { return out }
            defer { if sparse.contains(r) { leaveSelection(r) } }
            if pushing {
                for i in records.indices where records[i].knownBy.contains(r) { records[i].published = true }
                for id in pendingSettles[r] {
                    if let i = records.firstIndex(where: { $0.id == id }) { records[i].settlePublished = true }
                }
                pendingSettles[r] = []
            }
            if hasInvalid(r) {
                out.exit = 1
                out.exitRules.insert(.invalidMerge)
            } else if !out.newRecords.isEmpty {
                out.exit = 3
                out.exitRules.insert(.exitCodes)
            } else if learned > 0 {
                out.exit = 3
                out.exitRules.formUnion([.exitCodes, .conflictsTravel])
                if learnedDeletionOnly { out.exitRules.insert(.deleterNotToldByExit) }
            }
            return out
        }

        /// After a sparse replica's sync: a document whose file is outside the selection and
        /// that the remote has as this tree holds it (no local change, a valid file) leaves
        /// the tree (its file removed, its base dropped; nothing changes on the remote).
        mutating func leaveSelection(_ r: Int) {
            for (doc, b) in base[r] where !Model.selected(b.path) {
                guard let l = local[r][doc], l.invalidBytes == nil, l.placed == b || same(b, l.placed) else { continue }
                local[r][doc] = nil
                base[r][doc] = nil
                recorded[r].removeValue(forKey: doc)
                ownVersionOfBase[r][doc] = nil
            }
        }

        /// The documents `r` changed since its base (valid files only): what a receive-only
        /// replica keeps pending after a sync.
        /// The documents whose last recorded state (the tree as `r`'s last sync recorded it)
        /// differs from the base: what `r` holds as pending. A save made during that sync
        /// and not seen by it is not among them, the version it saved over is.
        func recordedChanges(_ r: Int) -> Set<Int> {
            Set(
                Set(recorded[r].keys).union(base[r].keys).filter { doc in
                    guard let recordedState = recorded[r][doc] else { return locallyChanged(r).contains(doc) }
                    if local[r][doc]?.invalidBytes != nil { return false }
                    let b = base[r][doc]
                    return b != recordedState && !(b != nil && recordedState != nil && same(b!, recordedState!))
                })
        }

        func locallyChanged(_ r: Int) -> Set<Int> {
            Set(
                Set(local[r].keys).union(base[r].keys).filter { doc in
                    if local[r][doc]?.invalidBytes != nil { return false }
                    let b = base[r][doc], l = local[r][doc]?.placed
                    // A merge whose elements left both files' order is a version of its own
                    // with the fields of one side: its file differs (git seed 35227, a
                    // receive-only replica keeps it pending).
                    if let b, let l, b.version.id != l.version.id, reorderedVersions.contains(l.version.id) {
                        return true
                    }
                    return b != l && !(b != nil && l != nil && same(b!, l!))
                })
        }

        /// The documents whose remote change send-only `r` holds aside: the remote's version
        /// (or deletion) is not the base's, and the document is not deleted on both sides.
        func heldDocs(_ r: Int) -> Set<Int> {
            let remote = seenRemote[r]
            return Set(
                Set(remote.keys).union(base[r].keys).filter { doc in
                    let b = base[r][doc], rm = remote[doc]
                    guard b?.version.id != rm?.version.id || b?.path != rm?.path else { return false }
                    return !(rm == nil && local[r][doc] == nil)
                })
        }

        /// `docsync override` on send-only `r` (of `only`, or every held document with a valid
        /// file here, or a base): the remote's version becomes the base and is recorded as
        /// lost to a new version of the local content (or to the local deletion); the push
        /// that follows is `sync(r)`. Returns the documents overridden.
        mutating func override(_ r: Int, only: Int?) -> [Int] {
            var done: [Int] = []
            for doc in heldDocs(r).sorted() where only == nil || only == doc {
                let l = local[r][doc], b = base[r][doc], rm = seenRemote[r][doc]
                if l?.invalidBytes != nil || (l == nil && b == nil) { continue }
                var winner = b?.version
                if let lp = l?.placed {
                    let v = newVersion(lp.version.fields, tick: madeTick(r), mtime: nil, author: r)
                    local[r][doc] = LocalDoc(placed: Placed(version: v, path: lp.path))
                    winner = v
                }
                if let rmv = rm?.version, let winner {
                    // The fields the remote's version differs in from what went over it.
                    let sent = l?.placed.version.fields ?? [:]
                    // Over a deletion the whole document lost: named by its top-level keys
                    // (`n`, not `n.x`), as a record of a whole document is; `i` among them
                    // even when it holds no element, as every file of the model has it
                    // (daemon seed 35313: a version whose elements were all removed).
                    let fields =
                        sent.isEmpty
                        ? Set(rmv.fields.keys.map { String($0.split(separator: ".")[0]) } + [MC.arrayField]).sorted()
                        : MC.wholeArrays(Set(rmv.fields.keys).union(sent.keys).filter { rmv.fields[$0] != sent[$0] })
                    // No value of it lost: nothing recorded.
                    if !fields.isEmpty {
                        _ = record(
                            doc, fields: fields, loser: rmv, winner: winner, loserWasLocal: false, finder: r,
                            path: rm?.path ?? "")
                    }
                }
                base[r][doc] = rm
                // The override's version has the held version's content at its path: still a
                // version of its own (SYNC.md: "sends the local version as a new version made
                // from the remote's"), pending until it lands (drive seed 20261121: the remote
                // moved on during the override, its push was held).
                if let rm, let lp = local[r][doc]?.placed, same(rm, lp) { ownVersionOfBase[r][doc] = rm.version.id }
                taint(doc, .override)
                done.append(doc)
            }
            return done
        }

        /// `docsync revert` on `r` (SYNC.md, "A replica that only receives"): every document
        /// whose valid file is not its base version gets the base back (one created here is
        /// removed), its open records settled; a document whose file is invalid keeps its
        /// changes. Returns the documents reverted.
        mutating func revert(_ r: Int) -> [Int] {
            var reverted: [Int] = []
            for doc in Set(local[r].keys).union(base[r].keys).sorted() {
                if local[r][doc]?.invalidBytes != nil { continue }
                guard local[r][doc]?.placed != base[r][doc] else { continue }
                setLocal(r, doc, base[r][doc])
                // Its open records are settled as a resolve taking the remote's would.
                for rec in openRecords(r) where rec.doc == doc {
                    let i = records.firstIndex { $0.id == rec.id }!
                    records[i].settledKnownBy.insert(r)
                    pendingSettles[r].insert(rec.id)
                }
                reverted.append(doc)
            }
            return reverted
        }

        /// Whether `r`'s document holds its base's content at its base's path in a version of
        /// its own (a save or `resolve` that went back to the base's values since the base
        /// last changed). Content that came back through a sync's merge is not one: the
        /// engine takes the remote's version there, so a pending entry for it means the
        /// replica saw another remote version than the model says.
        func holdsOwnVersionOfBase(_ r: Int, _ doc: Int) -> Bool {
            guard let b = base[r][doc], let l = local[r][doc]?.placed, same(b, l) else { return false }
            return ownVersionOfBase[r][doc] == b.version.id
        }

        private func same(_ a: Placed, _ b: Placed) -> Bool { a.path == b.path && a.version.fields == b.version.fields }

        private mutating func setLocal(_ r: Int, _ doc: Int, _ p: Placed?) {
            if let p { local[r][doc] = LocalDoc(placed: p) } else { local[r][doc] = nil }
        }

        /// How many open records `r` learns that say its own version or deletion lost.
        private mutating func learnPublished(_ r: Int) -> Int {
            var learned = 0
            learnedDeletionOnly = true
            for i in records.indices {
                // A sparse replica takes a shared record (or settlement) of a document it
                // holds or at a selected path; one it passes over it never meets again.
                let takes =
                    !sparse.contains(r) || holds(r, records[i].doc) || Model.selected(records[i].path)
                if records[i].settlePublished && !records[i].settlePassedBy.contains(r)
                    && !records[i].settledKnownBy.contains(r)
                {
                    if takes { records[i].settledKnownBy.insert(r) } else { records[i].settlePassedBy.insert(r) }
                }
                if records[i].published && !records[i].knownBy.contains(r) && !records[i].passedBy.contains(r)
                    && !takes
                {
                    records[i].passedBy.insert(r)
                    continue
                }
                if records[i].passedBy.contains(r) { continue }
                if records[i].published && records[i].knownBy.insert(r).inserted
                    && !records[i].settledKnownBy.contains(r),
                    Model.storedBy(records[i]) == r
                {
                    learned += 1
                    if records[i].loser != nil { learnedDeletionOnly = false }
                }
            }
            return learned
        }

        private mutating func record(
            _ doc: Int, fields: [String], loser: Version?, winner: Version, loserWasLocal: Bool, finder: Int,
            deleter: Int? = nil, deleted: Version? = nil, finderBase: Version? = nil, path: String
        ) -> Int {
            defer { nextRecord += 1 }
            records.append(
                ConflictRecord(
                    id: nextRecord, doc: doc, fields: fields, loser: loser, winner: winner,
                    loserWasLocal: loserWasLocal, finder: finder, deleter: deleter, deletedVersion: deleted,
                    finderBase: finderBase, knownBy: [finder], path: path))
            return nextRecord
        }

        private mutating func merge(
            _ r: Int, doc: Int, base b: Placed?, local l: Placed, remote rm: Placed, tick: Int,
            outcome: inout SyncOutcome
        ) -> Placed {
            let bf = b?.version.fields ?? [:], lf = l.version.fields, rf = rm.version.fields
            let localLater = later(l.version, than: rm.version)
            let (be, le, re) = (MC.elements(bf), MC.elements(lf), MC.elements(rf))
            let inserted = (local: le.subtracting(be), remote: re.subtracting(be))
            // Kept by an edit that beat its removal on the other side.
            let revived = be.filter { e in
                let k = MC.arrayField + "." + e
                return (le.contains(e) && !re.contains(e) && lf[k] != bf[k])
                    || (re.contains(e) && !le.contains(e) && rf[k] != bf[k])
            }
            let insertedBoth =
                !inserted.local.subtracting(inserted.remote).isEmpty
                && !inserted.remote.subtracting(inserted.local).isEmpty
            if insertedBoth || (!revived.isEmpty && !inserted.local.union(inserted.remote).isEmpty) {
                taint(doc, .arrayOrderBySaveTime)
                orderNotFollowed.insert(doc)
            }
            var content: Version
            let bp = b?.path
            let renamedOnBothSides = l.path != rm.path && l.path != bp && rm.path != bp
            let path =
                l.path == rm.path || l.path == bp ? rm.path : rm.path == bp ? l.path : localLater ? l.path : rm.path
            // A policy settles content changed on both sides (a rename on one side and an
            // edit on the other is no such thing); a clone's own pull ran before its config.
            let wholePolicy =
                lwwNotes && Model.lww(path) && !unconfigured.contains(r) && (b == nil || (lf != bf && rf != bf))
            let bothCounted =
                !wholePolicy
                && MC.counterSum(base: bf[MC.counterField], local: lf[MC.counterField], remote: rf[MC.counterField])
                    != nil
            if lf == rf && !bothCounted {
                content = rm.version
            } else if wholePolicy {
                // SYNC.md, "Policies": `lww` keeps the whole version with the later
                // changesetId and stores the other; the record names every field they differ in.
                taint(doc, .wholePolicy)
                taint(doc, .saveTime)
                content = localLater ? l.version : rm.version
                let differing = MC.wholeArrays(Set(lf.keys).union(rf.keys).filter { lf[$0] != rf[$0] })
                outcome.newRecords.append(
                    record(
                        doc, fields: differing, loser: localLater ? rm.version : l.version, winner: content,
                        loserWasLocal: !localLater, finder: r, path: localLater ? rm.path : l.path))
                records[records.count - 1].kept = content
                outcome.notes.append("doc\(doc): both changed, lww: \(localLater ? "local" : "remote") kept whole")
            } else {
                taint(doc, .fieldMerge)
                var merged: Fields = [:]
                var colliding: [String] = []
                var localLost = false
                for key in Set(bf.keys).union(lf.keys).union(rf.keys).sorted() {
                    let lv = lf[key], rv = rf[key], bv = bf[key]
                    let value: String?
                    if key == MC.counterField, let sum = MC.counterSum(base: bv, local: lv, remote: rv) {
                        value = sum
                    } else if lv == rv {
                        value = lv
                    } else if lv == bv {
                        value = rv
                    } else if rv == bv {
                        value = lv
                    } else {
                        // SYNC.md, the field table: removed on one side, changed on the
                        // other: the change wins (an edit beats a removal); else the later save.
                        colliding.append(key)
                        let takeLocal = rv == nil ? true : lv == nil ? false : localLater
                        value = takeLocal ? lv : rv
                        if !takeLocal { localLost = true }
                        if lv == nil || rv == nil { taint(doc, .fieldRemoval) }
                    }
                    merged[key] = value
                }
                // No element in the base: every element is an insertion into its one gap, so
                // the earlier save's go first and the later one's others after them (SYNC.md,
                // Arrays). Each side's file holds them in `id` order; when one the later side
                // adds sorts before one of the earlier side's, the result is in another order
                // than either file, so a version of its own (drive seed 50204: a document
                // written back after its deletion, merged with the edit that beat it).
                let earlier = localLater ? re : le, laterOnly = (localLater ? le : re).subtracting(earlier)
                let reordered =
                    be.isEmpty && !le.isEmpty && !re.isEmpty
                    && laterOnly.contains { e in earlier.contains { $0 > e } }
                if reordered {
                    taint(doc, .arrayOrderBySaveTime)
                    orderNotFollowed.insert(doc)
                }
                if merged == lf && !reordered {
                    content = l.version
                } else if merged == rf && !reordered {
                    content = rm.version
                } else {
                    content = newVersion(merged, tick: tick, mtime: nil, author: r)
                    if reordered { reorderedVersions.insert(content.id) }
                }
                if !colliding.isEmpty {
                    taint(doc, .saveTime)
                    // Versions are numbered in the order they were made: a clock off made
                    // this collision's later version the one made first.
                    if localLater != (l.version.id > rm.version.id) { collisionsAgainstMadeOrder += 1 }
                    // The stored version is the side that lost a value; when both lost one
                    // (a collision one way, a removal beaten the other), the local one
                    // (SYNC.md: the remote's stays in the remote's history).
                    let localStored = localLost
                    let loser = localStored ? l.version : rm.version
                    outcome.newRecords.append(
                        record(
                            doc, fields: colliding, loser: loser, winner: localStored ? rm.version : l.version,
                            loserWasLocal: localStored, finder: r, path: localStored ? l.path : rm.path))
                    records[records.count - 1].kept = content
                    outcome.notes.append(
                        "doc\(doc): both changed \(colliding.joined(separator: ",")): \(localLater ? "local" : "remote") saved later, \(localStored ? "local" : "remote") stored"
                    )
                }
            }
            if renamedOnBothSides {
                // Renamed on both sides: the later recorded rename wins, the other name is a
                // recorded conflict (SPEC, "Reconciliation and conflicts"). The driver moves a
                // document only where no other replica is moving it, so this is a send-only
                // replica's `override` (its version at its own path) sent over a rename not
                // synced yet: recorded at the override, later than that rename unless the
                // renaming replica saved the file since (its tick, when the file last changed).
                taint(doc, .saveTime)
                if b != nil {
                    outcome.newRecords.append(
                        record(
                            doc, fields: [], loser: localLater ? rm.version : l.version,
                            winner: localLater ? l.version : rm.version, loserWasLocal: !localLater, finder: r,
                            path: localLater ? rm.path : l.path))
                    let i = records.count - 1
                    records[i].kept = content
                    records[i].renameLost = true
                    records[i].renamer = localLater ? remotePusher[doc] : r
                    records[i].keptRenamer = localLater ? r : remotePusher[doc]
                    outcome.notes.append("doc\(doc): renamed on both sides: \(path) kept")
                }
            }
            return Placed(version: content, path: path)
        }

        /// Open records replica `r` should list.
        func openRecords(_ r: Int) -> [ConflictRecord] {
            records.filter { $0.knownBy.contains(r) && !$0.settledKnownBy.contains(r) }
        }

        /// Open records sparse `r` passed over (the document then neither held nor at a
        /// selected path) of a document it held at the start of a pull since. The remote's
        /// changes do not offer them again, but a read of its whole listing (after a gc
        /// rewrote it, a `remote.url` change) offers every shared record, and a sparse
        /// replica takes those of the documents it holds (SYNC.md, sparse: a pull takes
        /// "changes to documents this tree holds"), and keeps them if the document then
        /// leaves. When such a read comes is the engine's to know, so `r` may list these
        /// (folder seed 35106, step 262: a gc, then two records of a document moved in;
        /// folder seed 37106, step 90: the same in the pull that let the document go).
        func retakeableRecords(_ r: Int) -> [ConflictRecord] {
            guard sparse.contains(r) else { return [] }
            return records.filter {
                $0.published && $0.passedBy.contains(r) && !$0.knownBy.contains(r) && !$0.settlePublished
                    && ($0.mayRetake.contains(r) || holds(r, $0.doc))
            }
        }

        /// `r` listed a record it had passed over (`retakeableRecords`): from now on it knows it.
        mutating func retake(_ r: Int, record id: Int) {
            guard let i = records.firstIndex(where: { $0.id == id }) else { return }
            records[i].passedBy.remove(r)
            records[i].knownBy.insert(r)
        }

        /// `docsync resolve` of `doc` on `r`: settles the open records `r` knows; `take`
        /// (finder only) replaces the colliding fields with that side's values.
        mutating func resolve(
            _ r: Int, doc: Int, takeLoser: ConflictRecord?, takeDeletion: Bool = false, settle: Bool = true
        ) {
            let open = settle ? openRecords(r).filter { $0.doc == doc } : []
            for rec in open {
                let i = records.firstIndex { $0.id == rec.id }!
                records[i].settledKnownBy.insert(r)
                pendingSettles[r].insert(rec.id)
            }
            taint(doc, .conflictsTravel)
            if takeDeletion {
                local[r][doc] = nil
                return
            }
            guard let rec = takeLoser, let loser = rec.loser, var current = local[r][doc] else { return }
            var fields = current.placed.version.fields
            // A record's field may be a whole object or array (`n`, `i`: an override's record
            // names top-level members): every field below it is taken (git seed 24209).
            for f in rec.fields {
                for key in Set(fields.keys).union(loser.fields.keys) where key == f || key.hasPrefix(f + ".") {
                    fields[key] = loser.fields[key]
                }
            }
            let t = madeTick(r)
            if let bv = base[r][doc]?.version, bv.fields == fields {
                current.placed.version = bv
                ownVersionOfBase[r][doc] = bv.id
            } else {
                current.placed.version = newVersion(fields, tick: t, mtime: nil, author: r)
            }
            local[r][doc] = current
        }
    }
}
