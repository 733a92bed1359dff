import DocSyncJSON

/// A file plain git added that carries a refId another file of the branch still carries
/// (`cp top1.json dup.json; git add; git commit`) is a copy, not a move: two files with
/// one refId are two documents (SPEC, "The working tree"). Read alone, the diff showed
/// only `dup.json` arriving with the refId, and every replica moved its `top1.json` there.
///
/// The rule is decided from the branch's head, not from a replica's cursor, so every
/// replica decides alike: the document keeps its refId at a path that holds it and that
/// plain git did not add in the commits read; a plain-git addition beside such a path is a
/// new document, with a refId and changesetId derived from its path and blob (as for a file
/// without ids). With only plain-git additions holding the refId, the earliest commit's,
/// then the first path in byte order, keeps it.
extension GitRemote {
    /// A document file added by a commit docsync did not make, carrying its own refId:
    /// a move, a new document, or a copy, decided once the whole diff is read.
    struct PlainGitAddition {
        var entry: RemoteEntry
        var blob: GitOID
        var order: Int
        var introduced: Int64
        /// What reading it registered (its blob, its stamped bytes).
        var registration: Registration
    }

    /// What `entry` registered for a refId (its blob, its stamped bytes), so a later
    /// addition with the same refId can be undone.
    struct Registration {
        var blob: GitOID?
        var derived: [UInt8]?
    }

    func registration(of refId: String) -> Registration {
        Registration(blob: blobOf[refId], derived: derivedContent[refId])
    }

    func restore(_ registration: Registration, of refId: String) {
        blobOf[refId] = registration.blob
        derivedContent[refId] = registration.derived
    }

    /// Settles the diff's plain-git additions: each is put as read (a move or a new
    /// document) or, when another file at `headTree` keeps its refId, as a new document.
    func settlePlainGitAdditions(in reading: inout DiffReading, headTree: GitOID) throws {
        guard !reading.additions.isEmpty else { return }
        let holders = try refIdHolders(
            of: Set(reading.additions.map(\.entry.refId)), in: headTree)
        let byRefId = Dictionary(grouping: reading.additions, by: \.entry.refId)
        for (refId, additions) in byRefId.sorted(by: { $0.key < $1.key }) {
            let added = Set(additions.map { $0.entry.path ?? "" })
            let originals = (holders[refId] ?? []).filter { !added.contains($0) }
            // The addition that keeps the refId, if no original does.
            let keeper: PlainGitAddition? =
                originals.isEmpty
                ? additions.min { a, b in
                    a.introduced != b.introduced
                        ? a.introduced < b.introduced : UTF8Order.precedes(a.entry.path ?? "", b.entry.path ?? "")
                } : nil
            // What reads the refId's content: the keeping addition's registration, else the
            // diff's own put of the document (none: the document did not change).
            restore(keeper?.registration ?? reading.registrations[refId] ?? Registration(), of: refId)
            for addition in additions {
                if let keeper, addition.entry.path == keeper.entry.path {
                    reading.puts[refId] = (addition.order, addition.entry)
                    continue
                }
                let copy = try copyEntry(addition)
                reading.puts[copy.refId] = (addition.order, copy)
                reading.warnings.append(
                    "\(displayURL): \(addition.entry.path ?? ""): a copy of another file's document (refId \(refId)); pulled as a new document"
                )
            }
        }
        reading.additions = []
    }

    /// A copy's entry: a fresh refId and changesetId, derived so every replica agrees,
    /// stamped into its bytes.
    private func copyEntry(_ addition: PlainGitAddition) throws -> RemoteEntry {
        let path = addition.entry.path ?? ""
        let bytes = try repo.blob(addition.blob)
        let scanned = try JSONScanner.scanDocument(bytes)
        let refId = Self.derivedRefId(path: path, blob: addition.blob)
        let changesetId = Self.derivedChangesetId(
            blob: addition.blob, commitTime: addition.introduced, replaced: addition.entry.changesetId)
        let content = IdentityStamper.stamp(bytes, scanned: scanned, refId: refId, changesetId: changesetId)
        derivedContent[refId] = content
        blobOf[refId] = addition.blob
        var entry = addition.entry
        entry.refId = refId
        entry.changesetId = changesetId
        entry.hash = ContentHash.of(content)
        entry.publishedHash = ContentHash.of(bytes)
        return entry
    }

    /// The paths at `tree` whose document carries one of `refIds`. Reads every document
    /// blob of the tree: only asked when plain git added a file with a refId, which is rare.
    private func refIdHolders(of refIds: Set<String>, in tree: GitOID) throws -> [String: [String]] {
        var holders: [String: [String]] = [:]
        for file in try repo.files(inTree: tree) where Self.isDocumentPath(file.path) {
            // One larger than remote.maxDocumentBytes is not read (see RemoteDocumentCeiling).
            guard let bytes = try? smallBlob(file.blob),
                let refId = (try? JSONScanner.scanDocument(bytes))?.member(named: "refId")?.stringValue,
                refIds.contains(refId)
            else { continue }
            holders[refId, default: []].append(file.path)
        }
        return holders
    }
}
