import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Compact the journal and remove objects nothing refers to.",
            discussion: "Journal entries already folded into .docsync/state are dropped; local actions not yet on the remote are always kept. Objects in .docsync/objects/ that neither the base, a pending action nor a conflict copy refers to are removed. Nothing runs by itself: gc only happens when you ask."
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show what would be freed; change nothing.")
        var dryRun = false

        func run() throws {
            Output.configure(global)
            let workspace = try Workspace.open(at: global.workingDirectory, readOnly: dryRun)
            defer { workspace.close() }
            let report = try workspace.collectGarbage(dryRun: dryRun)
            for warning in report.warnings { Output.warning(warning) }
            if global.json { return try Output.json(report) }
            let would = dryRun ? "would " : ""
            Output.line("\(would)gc  journal  \(report.journalEntriesDropped) entries dropped, \(report.pendingKept) pending kept (\(ByteCount.text(Int64(report.journalBytesBefore))) → \(ByteCount.text(Int64(report.journalBytesAfter))))")
            Output.line("\(would)gc  objects  \(report.objectsRemoved) unreferenced removed (\(ByteCount.text(report.objectBytesFreed)))"
                        + (report.temporaryFilesRemoved > 0 ? ", \(report.temporaryFilesRemoved) temporary file(s) left by killed runs" : ""))
            Output.line((dryRun ? "Dry run: would free " : "Freed ") + ByteCount.text(report.bytesFreed))
        }
    }
}

/// Sizes as people read them: 512 B, 4.1 KB, 2.3 MB.
enum ByteCount {
    static func text(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
        return String(format: "%.1f %@", value, units[unit])
    }
}
