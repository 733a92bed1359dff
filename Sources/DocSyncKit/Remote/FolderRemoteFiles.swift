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

    /// The names in a document folder of the remote (`""` is the root), with its
    /// absolute path; nil if a folder on the way is not a real folder (a symbolic link:
    /// never followed out of the remote) or it cannot be listed.
    static func documentFolder(_ folder: String, files: RemotePerimeter) -> (absolute: String, names: [String])? {
        if !folder.isEmpty, DocumentPath.problem(folder + "/x.json") != nil { return nil }
        let absolute = folder.isEmpty ? files.root : files.root + "/" + folder
        guard let names = try? files.unrecorded.listDirectory(absolute) else { return nil }
        return (absolute, names)
    }

    /// Removes the docsync temporary files (`.docsync-tmp-…`) in a document folder of
    /// the remote. Only under the push lock: any there were left by a pusher that died.
    static func removeTemporaryFiles(inDocumentFolder folder: String, files: RemotePerimeter) {
        guard let (absolute, names) = documentFolder(folder, files: files) else { return }
        for name in names where name.hasPrefix(".docsync-tmp-") {
            try? files.unrecorded.removeFile(absolute + "/" + name)
        }
    }

    /// A file in the remote folder that docsync did not write (edited there by hand) is
    /// kept under `.docsync/displaced/` before anything replaces it.
    static func keepDisplaced(_ bytes: [UInt8], refId: String, meta: String, files: RemotePerimeter) throws {
        let aside = meta + "/displaced"
        try files.createDirectories(aside)
        try files.writeAtomically(
            aside + "/\(FileSystem.currentTimeNanos)-" + DocumentPath.fileName(forRefId: refId) + ".json", bytes)
    }
}
