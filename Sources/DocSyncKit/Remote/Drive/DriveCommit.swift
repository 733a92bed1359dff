import Foundation

/// One push to a drive-layout folder remote (`docsync-remote 2`), as the file
/// `.docsync/replicas/<replica>/commits/<seq>.json` that only its replica ever writes,
/// once. Every reader builds the remote's history from these files alone: a commit names
/// the commit it was made on (`parent`), so the files of all replicas form a tree, and
/// the remote's state is the chain that ends at its tip (see `DriveHistory`).
///
/// The file is checksummed lines (FORMATS.md): a header naming the commit and how many
/// entries follow, then one line per entry, each a feed line of format 1. A file that
/// is short, torn or fails a checksum is not a commit yet: a sync service may still be
/// copying it, so a reader passes over it and looks again next time.
struct DriveCommit: Sendable, Equatable {
    struct Header: Codable, Sendable, Equatable {
        /// `<replica>.<seq>.<nonce>`: the nonce keeps two commits apart that one replica
        /// wrote under the same number (its copy of the folder went back in time).
        var commit: String
        var replica: String
        var seq: Int
        /// The commit this one was made on; nil for a first commit of a new remote.
        var parent: String?
        /// 1 + the parent's height: the fork choice prefers the longer chain.
        var height: Int
        var time: Int64
        var entries: Int
        /// Set on a commit that holds the whole state (an upgrade from format 1, or a
        /// `docsync gc` that purged tombstones): a reader whose cursor is below it reads
        /// it as a snapshot, as after a format-1 feed compaction.
        var checkpoint: Bool? = nil
        /// On the commit an upgrade made: the format-1 position it holds
        /// (`<generation>:<feed length>`), so a tree whose cursor was exactly there
        /// continues from it.
        var upgradedFrom: String? = nil
    }

    var header: Header
    var entries: [FeedLine]

    var id: String { header.commit }

    static func makeId(replica: String, seq: Int) -> String {
        "\(replica).\(seq).\(String(format: "%08x", UInt32.random(in: 0...UInt32.max)))"
    }

    /// The replica and number an id names, or nil if it is not one.
    static func parts(of id: String) -> (replica: String, seq: Int)? {
        let p = id.split(separator: ".")
        guard p.count == 3, let seq = Int(p[1]), seq > 0, RefID.isAcceptable(String(p[0])) else { return nil }
        return (String(p[0]), seq)
    }

    /// The entry lines of the file (the header line goes first, see `DriveFolderRemote.writeCommit`).
    func encodedEntries() throws -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries { out += ChecksummedLines.encode(try entry.encodedLine()).utf8 }
        return out
    }

    /// The commit a file holds, or nil while it is incomplete or damaged.
    static func decode(_ bytes: [UInt8]) -> DriveCommit? {
        let parsed = ChecksummedLines.parse(bytes[...])
        guard parsed.validLength == bytes.count, let first = parsed.lines.first,
            let header = try? JSONDecoder().decode(Header.self, from: Data(first.payload.utf8)),
            parsed.lines.count == header.entries + 1, parts(of: header.commit)?.replica == header.replica,
            parts(of: header.commit)?.seq == header.seq, header.height >= 1
        else { return nil }
        let decoder = JSONDecoder()
        var entries: [FeedLine] = []
        entries.reserveCapacity(header.entries)
        for line in parsed.lines.dropFirst() {
            guard let entry = try? decoder.decode(FeedLine.self, from: Data(line.payload.utf8)) else { return nil }
            entries.append(entry)
        }
        return DriveCommit(header: header, entries: entries)
    }

    /// Only the header, from the first line of a file (for walks through history that
    /// need no entries).
    static func decodeHeader(_ bytes: ArraySlice<UInt8>) -> Header? {
        guard let newline = bytes.firstIndex(of: 10) else { return nil }
        let parsed = ChecksummedLines.parse(bytes[bytes.startIndex...newline])
        guard let first = parsed.lines.first else { return nil }
        return try? JSONDecoder().decode(Header.self, from: Data(first.payload.utf8))
    }

    /// The content hashes a reader needs before the commit counts: every version and
    /// every shared conflict copy it names. A commit whose objects have not arrived yet
    /// is "not here yet", never a deletion.
    var neededObjects: [String] {
        entries.compactMap { entry in
            if entry.purgedDeletion == true || entry.deleted { return nil }
            return entry.hash
        }
    }
}
