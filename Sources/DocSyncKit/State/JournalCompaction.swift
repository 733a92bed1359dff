import Foundation

/// Rewrites `.docsync/journal` so that it holds only the local actions still pending
/// (not yet on the remote); every other entry is already folded into the sealed
/// `.docsync/state` and is history only.
///
/// Crash safety rests on one property of recovery: entries whose `seq` is at most the
/// state's `journalSeq` are never folded again. So a state whose checkpoint offset is 0
/// is a valid checkpoint of the old journal *and* of the new one (both hold only
/// entries up to `journalSeq`). The swap is therefore:
///
/// 1. state ← offset 0 (same `journalSeq`): valid for the old journal, which is still there;
/// 2. journal ← new bytes (one atomic rename): valid, the state reads it from 0;
/// 3. state ← offset = new length: the ordinary checkpoint.
///
/// A crash between any two steps leaves a state and a journal that agree; nothing is
/// folded twice and nothing pending is lost (it is in the state as well). The
/// "journal shorter than the checkpoint" repair is never involved.
struct JournalCompaction {
    let journalPath: String
    let statePath: String

    struct Plan {
        var newBytes: [UInt8]
        var entriesBefore: Int
        var entriesKept: Int
        var bytesBefore: Int
        /// The journal already holds exactly the pending actions.
        var isNoOp: Bool
    }

    struct Refused: Error, LocalizedError {
        var reason: String
        var errorDescription: String? { reason }
    }

    /// Works out the compacted journal. Reads the whole journal: one whose history is
    /// damaged is not rewritten (step 1 would make recovery read that history).
    func plan(for state: SyncState) throws -> Plan {
        let old = Journal(path: journalPath)
        let entries: [JournalEntry]
        do { entries = try old.read(from: 0, lastKnownSeq: 0, repair: false) } catch let damaged as Journal.Damaged {
            throw Refused(
                reason: damaged.localizedDescription.replacingOccurrences(
                    of: "Run `docsync verify`",
                    with: "gc leaves such a journal as it is (nothing was changed). Run `docsync verify`"))
        }
        if let unfolded = entries.first(where: { $0.seq > state.journalSeq }) {
            throw Refused(
                reason:
                    "\(journalPath): entry \(unfolded.seq) is not folded into the sync state yet; run any writing command (e.g. `docsync status` then `docsync sync`) and gc again"
            )
        }
        let bytesBefore = (try? FileSystem.linkStatus(journalPath).size).map(Int.init) ?? 0
        var text = ""
        for action in state.pending { text += ChecksummedLines.encode(try action.encodedLine()) }
        let newBytes = Array(text.utf8)
        let isNoOp = bytesBefore == newBytes.count && (try? FileSystem.readFile(journalPath)) == newBytes
        return Plan(
            newBytes: newBytes, entriesBefore: entries.count, entriesKept: state.pending.count,
            bytesBefore: bytesBefore, isNoOp: isNoOp)
    }

    /// Swaps the compacted journal in, in the order described above. `state` must be the
    /// loaded checkpoint; on return it points at the end of the new journal.
    func apply(_ plan: Plan, to state: inout SyncState) throws {
        guard !plan.isNoOp else { return }
        state.journalOffset = 0
        try state.save(to: statePath)
        try CrashPoint.hit("gc.after-state-reset")
        try FileSystem.writeAtomically(journalPath, plan.newBytes)
        try CrashPoint.hit("gc.after-journal")
        state.journalOffset = plan.newBytes.count
        try state.save(to: statePath)
        try CrashPoint.hit("gc.after-state")
    }
}
