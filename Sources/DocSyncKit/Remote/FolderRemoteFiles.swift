import Foundation

/// What both folder layouts (format 1 and the drive layout) do alike with their files.
enum FolderRemoteFiles {
    /// The bytes of a version `history` returned, from the remote's objects/.
    static func content(of version: RemoteVersionInfo, refId: String, objects: ObjectStore, url: String) throws -> [UInt8] {
        guard let hash = version.hash, !version.deleted else { throw RemoteError.damaged(url: url, reason: "version \(version.changesetId) is a deletion") }
        guard let bytes = try? objects.get(hash) else {
            throw RemoteError.damaged(url: url, reason: "version \(version.changesetId) of \(refId) is no longer kept on the remote")
        }
        return bytes
    }

    /// A file in the remote folder that docsync did not write (edited there by hand) is
    /// kept under `.docsync/displaced/` before anything replaces it.
    static func keepDisplaced(_ bytes: [UInt8], refId: String, meta: String) throws {
        let aside = meta + "/displaced"
        try FileSystem.createDirectories(aside)
        try FileSystem.writeAtomically(aside + "/\(FileSystem.currentTimeNanos)-" + DocumentPath.fileName(forRefId: refId) + ".json", bytes)
    }
}
