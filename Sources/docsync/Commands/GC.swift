import ArgumentParser
import DocSyncKit
import Foundation

extension DocSync {
    struct GC: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Compact the journal, remove unreferenced objects and purge old tombstones on the remote.",
            discussion: """
                Journal entries already folded into .docsync/state are dropped; local actions not yet on the \
                remote are always kept. Objects in .docsync/objects/ that neither the base, a pending action \
                nor a conflict copy refers to are removed. On the remote, a tombstone is purged once every \
                replica known to the remote has seen it, or once it is older than gc.tombstoneMaxAgeDays; a \
                folder remote's change feed is compacted under its lock, a git remote gets one commit \
                deleting the tombstone files. A git remote's cache repository (.docsync/git, where every \
                fetch and every push of more than 100 files adds a pack) is put into one pack of what its \
                branch's history reaches, with --local-only too. Nothing runs by itself: gc only happens \
                when you ask. Exits 75 if the remote is unreachable (the local part is still done).
                """
        )
        @OptionGroup var global: GlobalOptions

        @Flag(name: .long, help: "Show what would be freed and purged; change nothing, locally or on the remote.")
        var dryRun = false

        @Flag(name: .long, help: "Compact this tree only; leave the remote's tombstones alone.")
        var localOnly = false

        func run() throws {
            try global.withWorkspace(readOnly: dryRun) { workspace in
                let view = ProgressView(global: global)
                workspace.progress = view.handler
                defer { view.clear() }
                let report = try workspace.gc.collect(dryRun: dryRun, localOnly: localOnly)
                view.clear()
                for warning in report.warnings { Output.warning(warning) }
                try global.printResult(command: "gc", GCJSON(report: report)) { print(report) }
                if let unreachable = report.remoteUnreachable {
                    throw CommandFailure(message: unreachable, code: ExitStatus.tempFail)
                }
            }
        }

        private func print(_ report: GCReport) {
            let would = dryRun ? "would " : ""
            if let remote = report.remote {
                for p in remote.purged {
                    Output.detail("\(would)purge   tombstone  \(p.path ?? p.refId)  (\(p.reason))")
                }
                var line =
                    "\(would)gc  remote   \(remote.purged.count) tombstone\(remote.purged.count == 1 ? "" : "s") purged, \(remote.kept) kept (\(remote.replicas.count) known replica\(remote.replicas.count == 1 ? "" : "s"))"
                if let before = remote.feedBytesBefore, let after = remote.feedBytesAfter, before != after {
                    line += "; feed \(ByteCount.text(Int64(before))) → \(ByteCount.text(Int64(after)))"
                }
                if let commit = remote.commit { line += "; commit \(commit.prefix(12))" }
                Output.line(line)
            }
            Output.line(
                "\(would)gc  journal  \(report.journalEntriesDropped) entries dropped, \(report.pendingKept) pending kept (\(ByteCount.text(Int64(report.journalBytesBefore))) → \(ByteCount.text(Int64(report.journalBytesAfter))))"
            )
            Output.line(
                "\(would)gc  objects  \(report.objectsRemoved) unreferenced removed (\(ByteCount.text(report.objectBytesFreed)))"
                    + (report.temporaryFilesRemoved > 0
                        ? ", \(report.temporaryFilesRemoved) temporary file(s) left by killed runs" : ""))
            if let cache = report.gitCache, cache.hadWork {
                Output.line(
                    "\(would)gc  git cache  \(cache.packsBefore) pack\(cache.packsBefore == 1 ? "" : "s") and \(cache.looseObjectsBefore) loose object\(cache.looseObjectsBefore == 1 ? "" : "s")"
                        + (dryRun ? " into one pack" : " → one pack of \(cache.objectsPacked) objects"))
            }
            Output.line((dryRun ? "Dry run: would free " : "Freed ") + ByteCount.text(report.bytesFreed) + " locally")
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
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}
