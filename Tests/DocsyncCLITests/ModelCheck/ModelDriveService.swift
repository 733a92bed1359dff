// The model check's drive kind: every replica syncs with its own copy of one folder remote
// (the drive layout), and a sync service copies files between the copies as Syncthing or
// Dropbox would: whole files under a temporary name, then a rename, the newest one where
// two copies differ, in no particular order, and every file a run left, a killed run's
// objects, view files and intents included (push.lock and docsync's temporary files are
// machine-local and never copied). Before any docsync command of a replica reads its copy,
// the service has brought everything the other copies hold into it; so the remote every
// run reads is the model's remote, and the extended model applies unchanged.
//
// What this kind does not do: start a run before the files of an earlier push arrived.
// Two such runs fork the history (REMOTE-LAYOUT.md, "How readers make one history"); the
// model has no notion of forks, and the drive's own model (DriveModelCheckTests: partial,
// out-of-order copies, forks, kills) checks them. So no step here runs two replicas at once.
// The remote is judged by its stored history (ModelStoredHistory.swift), read from a copy
// the service fills from all the others; the readable view is not compared, as a drive may
// bring it late and nothing reads it back.

import Foundation

extension MC.Run {
    var driveRoot: String { box.path("drive") }

    /// The folder replica `r` syncs with on the drive kind.
    func driveCopy(_ r: Int) -> String { driveRoot + "/copy-\(r)" }

    /// The copy the checks read the stored history from, filled from every copy first.
    var observerCopy: String { driveRoot + "/observer" }

    /// The remote URL replica `r` is made with (its own copy on the drive kind).
    func remoteURL(for r: Int) -> String { remoteKind == .drive ? driveCopy(r) : remoteURL }

    /// The drive's copies that exist now.
    private var driveCopies: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: driveRoot)) ?? []).filter { $0.hasPrefix("copy-") }
            .sorted().map { driveRoot + "/" + $0 }
    }

    /// Brings every file the other copies hold into `r`'s copy (drive kind only), before a
    /// run of `r` reads it.
    func driveCatchUp(_ r: Int) {
        guard remoteKind == .drive else { return }
        driveFill(driveCopy(r))
    }

    /// Fills `target` from every copy: a file it lacks, or holds older and different, is
    /// copied in (in random order, as a service's passes go).
    func driveFill(_ target: String) {
        try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        var sources = driveCopies.filter { $0 != target }
        for i in sources.indices.reversed() { sources.swapAt(i, rng.int(i + 1)) }
        for source in sources {
            var files = Files.list(source, skipMetadata: false).filter(Self.serviceCopies)
            for i in files.indices.reversed() { files.swapAt(i, rng.int(i + 1)) }
            for relative in files where Self.serviceCopy(source + "/" + relative, to: target + "/" + relative) {
                figures.serviceCopies += 1
            }
        }
    }

    /// What a sync service copies: not docsync's machine-local lock, not a file still
    /// being written under a temporary name.
    static func serviceCopies(_ relative: String) -> Bool {
        let name = (relative as NSString).lastPathComponent
        return name != "push.lock" && !name.hasPrefix(".docsync-tmp-") && !name.hasPrefix(".syncing-")
            && !name.hasSuffix(".tmp")
    }

    /// One file copied as a service does: skipped if the target holds the same bytes or
    /// newer ones; else written under a temporary name with the source's mtime, then renamed.
    /// True if it copied.
    @discardableResult
    static func serviceCopy(_ source: String, to target: String) -> Bool {
        let fm = FileManager.default
        guard let here = try? fm.attributesOfItem(atPath: source), here[.type] as? FileAttributeType == .typeRegular
        else { return false }
        if let there = try? fm.attributesOfItem(atPath: target) {
            let a = there[.modificationDate] as? Date, b = here[.modificationDate] as? Date
            // A service's quick check: the same size and mtime is the same file.
            if a == b, there[.size] as? Int == here[.size] as? Int { return false }
            if let a, let b, a > b { return false }
            if fm.contentsEqual(atPath: source, andPath: target) { return false }
        }
        let folder = (target as NSString).deletingLastPathComponent
        try? fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = folder + "/.syncing-\(UUID().uuidString)"
        guard (try? fm.copyItem(atPath: source, toPath: temporary)) != nil else { return false }
        if let date = here[.modificationDate] as? Date {
            try? fm.setAttributes([.modificationDate: date], ofItemAtPath: temporary)
        }
        return rename(temporary, target) == 0
    }

    /// The folder whose stored history the checks read: the remote itself, or on the drive
    /// kind the observer's copy, filled from every copy.
    func historyFolder() -> String {
        guard remoteKind == .drive else { return remoteURL }
        driveFill(observerCopy)
        return observerCopy
    }
}
