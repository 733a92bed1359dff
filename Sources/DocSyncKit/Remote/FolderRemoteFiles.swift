import Foundation

/// What both folder layouts (format 1 and the drive layout) do alike with their files.
enum FolderRemoteFiles {
    /// Every new version a push writes and every conflict copy it shares, into `objects`,
    /// the batch sealed (a pack's index in place): complete before anything names them.
    static func storeObjects(of writes: [RemoteWrite], conflicts: [SharedConflict], in objects: ObjectStore) throws {
        for write in writes {
            if let new = write.new, !objects.contains(new.hash), let content = try write.content() {
                try objects.put(content, hash: new.hash)
            }
        }
        for shared in conflicts {
            if let bytes = shared.bytes { try objects.put(bytes) }
        }
        try objects.seal()
    }

    /// The bytes of a version `history` returned, from the remote's objects/.
    static func content(
        of version: RemoteVersionInfo, refId: String, objects: ObjectStore, url: String,
        ceiling: RemoteDocumentCeiling
    ) throws -> [UInt8] {
        guard let hash = version.hash, !version.deleted else {
            throw RemoteError.damaged(url: url, reason: "version \(version.changesetId) is a deletion")
        }
        if let size = objects.size(of: hash), size > ceiling.maxBytes {
            throw RemoteError.damaged(
                url: url, reason: ceiling.tooLarge(version.path ?? refId, size: size, url: url))
        }
        guard let bytes = try? objects.get(hash) else {
            throw RemoteError.damaged(
                url: url, reason: "version \(version.changesetId) of \(refId) is no longer kept on the remote")
        }
        return bytes
    }

    /// The names in a document folder of the remote at `root` (`""` is the root), with
    /// its absolute path; nil if a folder on the way is not a real folder (a symbolic
    /// link: never followed out of the remote) or it cannot be listed.
    static func documentFolder(_ folder: String, root: String) -> (absolute: String, names: [String])? {
        guard
            (try? SafeTreeIO(root: root).resolve(folder.isEmpty ? "x.json" : folder + "/x.json", createFolders: false))
                != nil
        else { return nil }
        let absolute = folder.isEmpty ? root : root + "/" + folder
        guard let names = try? FileSystem.listDirectory(absolute) else { return nil }
        return (absolute, names)
    }

    /// A file in the remote folder that docsync did not write (edited there by hand) is
    /// kept under `.docsync/displaced/` before anything replaces it.
    static func keepDisplaced(_ bytes: [UInt8], refId: String, meta: String) throws {
        let aside = meta + "/displaced"
        try FileSystem.createDirectories(aside)
        try FileSystem.writeAtomically(
            aside + "/\(FileSystem.currentTimeNanos)-" + DocumentPath.fileName(forRefId: refId) + ".json", bytes)
    }
}
