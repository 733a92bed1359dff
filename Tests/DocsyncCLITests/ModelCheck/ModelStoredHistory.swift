// A folder remote's stored history, read the way docs/REMOTE-LAYOUT.md ("The drive layout")
// describes it, with nothing of the engine (no `import DocSyncKit`): every replica's commit
// files, the tip (the greatest height, then the greatest commit id), its chain back to the
// first commit or the last checkpoint, the latest entry per document along it, and each
// version's bytes from `objects/` (loose, or in a pack found through its index), checked
// against their SHA-256. The model check compares this with the model's remote, so a folder
// remote is judged by what every replica reads, not only by its readable view, which a
// drive may bring late (issue 42: "compare the stored history, not only the readable view").

import Crypto
import Foundation

extension MC {
    struct StoredHistory {
        /// One document's latest entry on the chain.
        struct Entry {
            var path: String
            var changesetId: String
            var deleted: Bool
            var hash: String
        }

        /// refId → latest entry on the tip's chain (purged deletions left out).
        var documents: [String: Entry] = [:]
        /// What could not be read as the layout says (a commit's parent missing, an object
        /// missing or not hashing to its name): each one a mismatch.
        var problems: [String] = []
        var commits = 0
        var chainLength = 0
        let root: String

        init(folder: String) {
            root = folder + "/.docsync"
            read()
        }

        private struct Commit {
            var id: String
            var parent: String?
            var height: Int
            var checkpoint: Bool
            var entries: [[String: Any]]
        }

        /// A file in the checksummed-line format: a JSON payload, a tab, `#` and a checksum.
        private static func payloads(_ path: String) -> [[String: Any]]? {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            var out: [[String: Any]] = []
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                let json = line.split(separator: "\t", maxSplits: 1).first.map(String.init) ?? ""
                guard let object = JSONHelp.object(Array(json.utf8)) else { return nil }
                out.append(object)
            }
            return out
        }

        private mutating func read() {
            let fm = FileManager.default
            var byId: [String: Commit] = [:]
            let replicas = (try? fm.contentsOfDirectory(atPath: root + "/replicas")) ?? []
            for replica in replicas {
                let folder = root + "/replicas/\(replica)/commits"
                for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".json") {
                    // A file with fewer lines than its header says is not here yet (a copy under way).
                    guard let lines = Self.payloads(folder + "/" + name), let header = lines.first,
                        let id = header["commit"] as? String, let height = header["height"] as? Int,
                        let count = header["entries"] as? Int, lines.count == count + 1
                    else { continue }
                    byId[id] = Commit(
                        id: id, parent: header["parent"] as? String, height: height,
                        checkpoint: header["checkpoint"] as? Bool ?? false, entries: Array(lines.dropFirst()))
                }
            }
            commits = byId.count
            guard
                let tip = byId.values.max(by: { ($0.height, $0.id) < ($1.height, $1.id) })
            else { return }
            // The chain, tip first: the latest entry per document is the first one met.
            var at: Commit? = tip
            var seen: Set<String> = []
            while let commit = at {
                chainLength += 1
                for entry in commit.entries.reversed() {
                    guard let refId = entry["refId"] as? String, !refId.hasPrefix("conflict:") else { continue }
                    let document = refId.hasPrefix("purged:") ? String(refId.dropFirst("purged:".count)) : refId
                    guard seen.insert(document).inserted else { continue }
                    // A purged deletion: the document is gone from the state.
                    guard !refId.hasPrefix("purged:"), let path = entry["path"] as? String,
                        let cs = entry["changesetId"] as? String, let hash = entry["hash"] as? String
                    else { continue }
                    documents[refId] = Entry(
                        path: path, changesetId: cs, deleted: entry["deleted"] as? Bool ?? false, hash: hash)
                }
                if commit.checkpoint { break }
                guard let parent = commit.parent else { break }
                guard let next = byId[parent] else {
                    problems.append("commit \(commit.id) names parent \(parent), which no commit file holds")
                    break
                }
                at = next
            }
        }

        // MARK: Objects

        /// The bytes of the version `hash` names, from a loose object or a pack; nil if
        /// neither holds it or the bytes do not hash to the name.
        func bytes(_ hash: String) -> [UInt8]? {
            guard hash.count == 64 else { return nil }
            let loose = root + "/objects/" + hash.prefix(2) + "/" + hash.dropFirst(2)
            if let data = FileManager.default.contents(atPath: loose), Self.sha256(data) == hash {
                return Array(data)
            }
            let packs = root + "/objects/packs"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: packs)) ?? [] where name.hasSuffix(".idx")
            {
                let base = packs + "/" + name.dropLast(4)
                if let data = Self.packed(hash, index: base + ".idx", pack: base + ".pack"), Self.sha256(data) == hash {
                    return Array(data)
                }
            }
            return nil
        }

        static func sha256(_ data: Data) -> String {
            SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
        }

        /// FORMATS.md: the index is the line `docsync-pack-index 1`, the object count (8
        /// bytes, big-endian), then per object, sorted by hash, the hash (32), the offset
        /// of its bytes in the pack (8) and their length (4), then a SHA-256 of all before.
        static func packed(_ hash: String, index: String, pack: String) -> Data? {
            guard let idx = FileManager.default.contents(atPath: index).map(Array.init) else { return nil }
            let magic = Array("docsync-pack-index 1\n".utf8)
            guard idx.count >= magic.count + 8 + 32, Array(idx[0..<magic.count]) == magic else { return nil }
            func number(_ at: Int, _ width: Int) -> Int { idx[at..<at + width].reduce(0) { $0 << 8 | Int($1) } }
            let count = number(magic.count, 8)
            let table = magic.count + 8
            guard idx.count == table + 44 * count + 32 else { return nil }
            let want = Array(hash.utf8)
            for i in 0..<count {
                let at = table + 44 * i
                let name = idx[at..<at + 32].map { String(format: "%02x", $0) }.joined()
                guard Array(name.utf8) == want else { continue }
                let offset = number(at + 32, 8), length = number(at + 40, 4)
                guard let handle = FileHandle(forReadingAtPath: pack) else { return nil }
                defer { try? handle.close() }
                try? handle.seek(toOffset: UInt64(offset))
                return try? handle.read(upToCount: length)
            }
            return nil
        }
    }
}
