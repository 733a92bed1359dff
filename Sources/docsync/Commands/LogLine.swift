import DocSyncKit

/// One journal entry as one line of `docsync log`: sequence number, time, kind, what it
/// is about, and for local actions whether they reached the remote. Deletions say
/// "deleted"; replicas go by name; a `done` entry finishing hundreds of actions is one
/// short line of ranges, not a list of every number.
enum LogLine {
    static func text(_ item: LogEntry, names: [String: String]) -> String {
        let e = item.entry
        var text = "\(String(e.seq).padding(5)) \(Output.time(e.time))  \(e.kind.rawValue.padding(8))"
        func who(_ id: String?) -> String { id.map { " (by \(ReplicaLabel.text($0, names: names)))" } ?? "" }
        switch e.event {
        case .local(_, let version, let from):
            text += " " + version.path
            if let from, from != version.path { text += " (from \(from))" }
            text += "  \(version.changesetId)" + (item.pending ? "  [pending]" : "  [done]")
        case .done(_, let seqs, let reason):
            let count = seqs.count == 1 ? "#\(seqs[0])" : "\(seqs.count) actions (\(ranges(seqs)))"
            text += " \(reason.rawValue) \(count)"
        case .apply(let op):
            // A pulled change written to the tree; no result means the pull removed the file.
            if let result = op.result {
                text +=
                    " \(result.path)" + (op.fromPath.map { $0 != result.path ? " (from \($0))" : "" } ?? "")
            } else {
                text += " deleted " + (op.fromPath ?? "")
            }
            text += "  \(op.changesetId)"
        case .seen(_, let state, let reason):
            text += describe(state) + (reason.map { "  (\($0.text))" } ?? "")
        case .held(_, let state, let replica):
            // Held while the file was not valid, or by a send-only replica (sync.mode).
            text += describe(state) + who(replica) + "  (held aside, not applied)"
        case .conflict(_, let changesetId, let path, let side, let deleted):
            text +=
                " \(path ?? "")  \(changesetId)  \(side.rawValue) "
                + (deleted ? "deletion lost to an edit" : "version stored")
        case .cursor(let cursor):
            text += " remote at " + RemoteCursorText.display(cursor) { ReplicaLabel.text($0, names: names) }
        case .resolve(_, let changesetId, let path, let take):
            text += " \(path ?? "")" + (changesetId.map { "  \($0)" } ?? "") + "  (took \(take.text))"
        }
        return text
    }

    private static func describe(_ state: JournalEntry.RemoteState) -> String {
        switch state {
        case .version(let v): return " \(v.path)  \(v.changesetId)"
        case .deleted(let changesetId, let path): return " deleted \(path ?? "")  \(changesetId)"
        }
    }

    /// "#1-#500", "#3, #7-#9"; past eight ranges, the first ones and how many more.
    static func ranges(_ seqs: [Int]) -> String {
        var runs: [ClosedRange<Int>] = []
        for seq in seqs.sorted() {
            if let last = runs.last, seq == last.upperBound + 1 {
                runs[runs.count - 1] = last.lowerBound...seq
            } else if runs.last?.contains(seq) != true {
                runs.append(seq...seq)
            }
        }
        let shown = runs.prefix(8).map {
            $0.count == 1 ? "#\($0.lowerBound)" : "#\($0.lowerBound)-#\($0.upperBound)"
        }
        return shown.joined(separator: ", ") + (runs.count > 8 ? ", … \(runs.count - 8) more" : "")
    }
}
