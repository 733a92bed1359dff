/// The names file-sync services give the copy they keep when one file changed on two
/// machines, so that docsync can tell such a copy from a file of its own:
///
/// | service | copy of `notes.json` |
/// |---|---|
/// | Dropbox | `notes (conflicted copy).json`, `notes (Ada's conflicted copy 2026-11-26).json` |
/// | Google Drive | `notes (1).json` |
/// | OneDrive | `notes-laptop.json` (the machine's name; only recognised with `hosts`) |
/// | Nextcloud, ownCloud | `notes (conflicted copy 2026-11-26 101112).json`, `notes_conflict-20261126-101112.json` |
/// | Syncthing | `notes.sync-conflict-20261126-101112-ABCDEFG.json` |
/// | Unison (`copyonconflict`) | `notes (conflict on 2026-11-26).json`, `notes (conflict #1 on …).json` |
/// | Resilio Sync | `notes.Conflict.json`, `notes (Conflict).json` |
enum SyncServiceConflictName {
    /// The name of the file `name` is a conflict copy of (of a copy of a copy, too), or
    /// nil if it is not one.
    static func original(of name: String, hosts: [String] = []) -> String? {
        guard hosts.contains(where: { !$0.isEmpty }) || mayBeServiceCopy(name) else { return nil }
        guard var found = once(name, hosts: hosts) else { return nil }
        while let deeper = once(found, hosts: hosts) { found = deeper }
        return found
    }

    /// Whether `name` has what every name above without a machine's name has: a `(` or
    /// "onflict". Why a first look by bytes: a push asks this of every name in each folder
    /// it wrote to (a whole 100,000-document remote for a 1% push, 5% of its time).
    private static func mayBeServiceCopy(_ name: String) -> Bool {
        let marker = Array("onflict".utf8)
        var utf8 = name.utf8.makeIterator()
        var matched = 0
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "(") { return true }
            matched = byte == marker[matched] ? matched + 1 : (byte == marker[0] ? 1 : 0)
            if matched == marker.count { return true }
        }
        return false
    }

    private static func once(_ name: String, hosts: [String]) -> String? {
        let (stem, ext) = split(name)
        // Syncthing: `<stem>.sync-conflict-<date>-<time>-<device>`.
        if let range = stem.range(of: ".sync-conflict-") { return String(stem[..<range.lowerBound]) + ext }
        // Nextcloud's newer scheme.
        if let range = stem.range(of: "_conflict-"), stem[range.upperBound...].allSatisfy({ $0.isNumber || $0 == "-" })
        {
            return String(stem[..<range.lowerBound]) + ext
        }
        // A parenthesised suffix: Dropbox, Nextcloud, Unison, Resilio, Google Drive.
        if stem.hasSuffix(")"), let open = stem.lastIndex(of: "(") {
            let inside = stem[stem.index(after: open)..<stem.index(before: stem.endIndex)].lowercased()
            let base = stem[..<open].hasSuffix(" ") ? stem[..<stem.index(before: open)] : stem[..<open]
            let isCopy =
                inside.contains("conflicted copy") || inside.hasPrefix("conflict") || inside.contains("'s conflicted")
                || (!inside.isEmpty && inside.allSatisfy(\.isNumber))
            if isCopy, !base.isEmpty { return String(base) + ext }
        }
        if stem.hasSuffix(".Conflict") { return String(stem.dropLast(".Conflict".count)) + ext }
        for host in hosts where !host.isEmpty && stem.hasSuffix("-" + host) {
            return String(stem.dropLast(host.count + 1)) + ext
        }
        return nil
    }

    private static func split(_ name: String) -> (stem: Substring, ext: String) {
        for ext in [".json", ".pack", ".idx"] where name.hasSuffix(ext) {
            return (name.dropLast(ext.count), ext)
        }
        return (name[...], "")
    }
}
