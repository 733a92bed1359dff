/// Signs that a folder is inside one a sync service copies between machines: a git
/// repository there breaks (its refs and packs are rewritten by every pusher, and the
/// service keeps one version of a file changed on two machines), so docsync warns.
enum DriveFolderSigns {
    /// Files or folders a service keeps at the root of what it syncs.
    static let markers = [
        ".dropbox", ".dropbox.cache",  // Dropbox
        ".stfolder", ".stversions",  // Syncthing
        ".nextcloudsync.log", ".owncloudsync.log", ".sync_journal.db"  // Nextcloud, ownCloud
    ]
    /// Folder names the services give their root.
    static let rootNames = [
        "Dropbox", "Google Drive", "My Drive", "OneDrive", "iCloud Drive", "Mobile Documents", "Nextcloud", "ownCloud"
    ]

    /// Why `path` (a folder) looks like it is in a drive folder, or nil. `exists` and
    /// `list` are the file system (a dictionary in tests); only the repository's own
    /// `refs/heads` is listed, the folders above are only asked for a marker.
    static func reason(for path: String, exists: (String) -> Bool, list: (String) -> [String]) -> String? {
        var folder = path
        while !folder.isEmpty && folder != "/" {
            let name = folder.split(separator: "/").last.map(String.init) ?? ""
            if let marker = markers.first(where: { exists(folder + "/" + $0) }) { return "\(folder) holds \(marker)" }
            if rootNames.contains(name) || name.hasPrefix("Dropbox (") || name.hasPrefix("OneDrive - ") {
                return "\(folder) is named like a sync service's folder"
            }
            folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
        }
        // A service's conflict copy of a branch is the surest sign.
        for ref in list(path + "/refs/heads") where SyncServiceConflictName.original(of: ref) != nil {
            return "\(path)/refs/heads/\(ref) is a sync service's conflict copy of a branch"
        }
        return nil
    }
}
