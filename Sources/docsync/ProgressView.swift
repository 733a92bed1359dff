import DocSyncKit
import Foundation

/// Shows a long run as it happens: each pulled or pushed document's line on stdout the
/// moment it is done, and, on a terminal, one status line on stderr (phase, count, rate,
/// bar) redrawn in place at most ten times a second. Nothing of the status line is
/// written when stderr is not a terminal, or with --quiet or --json.
final class ProgressView {
    private let showsBar: Bool
    private let streamsLines: Bool
    private var phase: ProgressPhase?
    private var phaseStarted: UInt64 = 0
    private var lastDraw: UInt64 = 0
    private var barOnScreen = false
    /// Keys (`ProgressView.key`) of the lines already printed, so the summary at the end
    /// does not print them again.
    private(set) var streamed = Set<String>()

    /// Redraws at most this often (nanoseconds).
    private static let redrawInterval: UInt64 = 100_000_000

    init(global: GlobalOptions) {
        let silent = global.quiet || global.json
        showsBar = !silent && Output.isTerminal
        streamsLines = !silent
    }

    /// The handler to give the engine, or nil when there is nothing to show.
    var handler: ProgressHandler? {
        guard showsBar || streamsLines else { return nil }
        return { [self] event in handle(event) }
    }

    static func key(_ verb: String, _ summary: ChangeSummary) -> String {
        [verb, summary.kind.rawValue, summary.refId, summary.path].joined(separator: "\u{0}")
    }

    func handle(_ event: ProgressEvent) {
        switch event {
        case .step(let phase, let done, let total):
            let now = DispatchTime.now().uptimeNanoseconds
            if phase != self.phase {
                self.phase = phase
                phaseStarted = now
                lastDraw = 0
            }
            // The first step of a phase and its last are always drawn; the rest throttled.
            guard lastDraw == 0 || done == total || now - lastDraw >= Self.redrawInterval else { return }
            lastDraw = now
            draw(phase, done: done, total: total, elapsed: now - phaseStarted)
        case .document(let phase, let summary):
            guard streamsLines, phase == .pull || phase == .push else { return }
            let verb = phase.rawValue
            guard streamed.insert(Self.key(verb, summary)).inserted else { return }
            clear()
            Output.line(SyncPrinter.changeLine(verb: verb, summary))
            fflush(nil)
        case .finished:
            break
        }
    }

    /// Removes the status line (before other output, and when the command ends).
    func clear() {
        guard barOnScreen else { return }
        Output.writeStderr("\r\u{1B}[K")
        barOnScreen = false
    }

    private func draw(_ phase: ProgressPhase, done: Int, total: Int, elapsed: UInt64) {
        guard showsBar else { return }
        let width = 24
        let filled = total > 0 ? min(width, done * width / total) : width
        var bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        if Output.colour { bar = "\u{1B}[36m" + bar + "\u{1B}[0m" }
        let seconds = Double(elapsed) / 1e9
        let rate = seconds > 0.05 ? String(format: "  %.0f/s", Double(done) / seconds) : ""
        let label = phase.rawValue.padding(6)
        Output.writeStderr("\r\(label) \(done)/\(total) [\(bar)]\(rate)\u{1B}[K")
        barOnScreen = true
    }
}
