import Testing

@testable import DocSyncKit

/// The pure parts of selective sync: which paths a selection holds, how a change of it is
/// made and whether it widens, which remote changes a sparse replica takes, and which
/// documents leave it.
@Suite struct SparseSelectionTests {
    static func selection(_ given: String...) -> SparseSelection {
        SparseSelection(patterns: given.map { SparseSelection.canonical($0)! })
    }

    @Test func foldersFilesAndPatterns() {
        let s = Self.selection("contacts/", "tasks/2026/", "top.json", "*.note.json", "!contacts/old/")
        #expect(s.patterns == ["/contacts/", "/tasks/2026/", "/top.json", "*.note.json", "!/contacts/old/"])
        for path in ["contacts/ann.json", "contacts/deep/x.json", "tasks/2026/t.json", "top.json", "a/b/c.note.json"] {
            #expect(s.contains(path), "\(path)")
        }
        for path in [
            "archive/contacts/ann.json", "contacts.json", "tasks/2025/t.json", "tasks/2026.json", "sub/top.json",
            "contacts/old/x.json", "contacts/old/deeper/y.json"
        ] {
            #expect(!s.contains(path), "\(path)")
        }
    }

    @Test func aFolderGivenWithoutItsSlashStillHoldsWhatIsInIt() {
        let s = Self.selection("contacts")
        #expect(s.contains("contacts/ann.json") && s.contains("contacts") && !s.contains("archive/contacts/x.json"))
    }

    @Test func badPatternsAreRefused() {
        for bad in ["", ".", "/", "../x", "a/../../b", "#comment", "!", "a\nb"] {
            #expect(SparseSelection.canonical(bad) == nil, "\(bad)")
        }
        #expect(SparseSelection.canonical("./notes/") == "/notes/")
    }

    @Test func changesOfTheSelection() throws {
        let start = try #require(try SparseService.applying(.set(["contacts/", "tasks/"]), to: nil))
        #expect(start.patterns == ["/contacts/", "/tasks/"])
        let added = try #require(try SparseService.applying(.add(["archive", "contacts/"]), to: start))
        #expect(added.patterns == ["/contacts/", "/tasks/", "/archive"], "added once each")
        let removed = try #require(try SparseService.applying(.remove(["tasks"]), to: added))
        #expect(removed.patterns == ["/contacts/", "/archive"], "a folder removes with or without its slash")
        #expect(throws: Workspace.Failure.self) { try SparseService.applying(.remove(["nope/"]), to: removed) }
        #expect(throws: Workspace.Failure.self) { try SparseService.applying(.remove(["x"]), to: nil) }
        #expect(throws: Workspace.Failure.self) { try SparseService.applying(.disable, to: nil) }
        #expect(try SparseService.applying(.disable, to: removed) == nil)
        #expect(try SparseService.applying(.reapply, to: removed) == removed)
    }

    @Test func whatWidens() {
        let s = Self.selection("contacts/", "!contacts/old/")
        #expect(!SparseService.widens(from: nil, to: s), "a full replica made sparse only narrows")
        #expect(SparseService.widens(from: s, to: nil), "disable")
        #expect(SparseService.widens(from: s, to: Self.selection("contacts/", "!contacts/old/", "tasks/")))
        #expect(SparseService.widens(from: s, to: Self.selection("contacts/")), "a negation removed")
        #expect(!SparseService.widens(from: s, to: Self.selection("!contacts/old/")))
        #expect(!SparseService.widens(from: s, to: Self.selection("contacts/", "!contacts/old/", "!contacts/x/")))
    }

    static func entry(_ refId: String, _ path: String, deleted: Bool = false) -> RemoteEntry {
        RemoteEntry(
            refId: refId, changesetId: refId + "-2", hash: "h", path: path, deleted: deleted, replica: "r", time: 0)
    }

    @Test func aSparseReplicaTakesSelectedPathsAndTheDocumentsItHolds() {
        let changes = RemoteChanges(
            entries: [
                Self.entry("in", "contacts/a.json"), Self.entry("out", "archive/b.json"),
                Self.entry("held", "archive/moved.json"), Self.entry("gone", "archive/c.json", deleted: true),
                Self.entry("mine-gone", "archive/d.json", deleted: true)
            ], cursor: "c2")
        let kept = SelectedChanges.filter(changes, by: Self.selection("contacts/")) {
            ["held", "mine-gone"].contains($0)
        }
        #expect(kept.entries.map(\.refId) == ["in", "held", "mine-gone"])
        #expect(kept.cursor == "c2", "the cursor moves past what was passed over")
    }

    static func v(_ refId: String, _ id: String, _ path: String) -> DocVersion {
        DocVersion(refId: refId, changesetId: id, hash: "h-" + id, path: path)
    }

    @Test func whichDocumentsLeave() {
        let base = [
            "synced": Self.v("synced", "s1", "archive/s.json"), "edited": Self.v("edited", "e1", "archive/e.json"),
            "held": Self.v("held", "h1", "archive/h.json"), "bad": Self.v("bad", "b1", "archive/b.json"),
            "kept": Self.v("kept", "k1", "contacts/k.json"), "moved": Self.v("moved", "m1", "contacts/m.json")
        ]
        var pending = [
            JournalEntry(.local(.update, version: Self.v("edited", "e2", "archive/e.json"), fromPath: nil)),
            JournalEntry(.local(.rename, version: Self.v("moved", "m1", "archive/m.json"), fromPath: "contacts/m.json"))
        ]
        for i in pending.indices { pending[i].seq = i + 1 }
        let selection = Self.selection("contacts/")
        let plan = SparseEviction.plan(
            base: base, pending: pending, held: ["held"], invalidPaths: ["archive/b.json"], selection: selection,
            force: false)
        #expect(plan.leaving.map(\.refId) == ["synced"])
        #expect(plan.staying.map(\.path) == ["archive/b.json", "archive/e.json", "archive/h.json", "archive/m.json"])
        let forced = SparseEviction.plan(
            base: base, pending: pending, held: ["held"], invalidPaths: ["archive/b.json"], selection: selection,
            force: true)
        #expect(forced.leaving.map(\.refId) == ["bad", "edited", "held", "moved", "synced"])
        let edited = forced.leaving.first { $0.refId == "edited" }
        #expect(edited?.droppedSeqs == [1] && edited?.now?.changesetId == "e2" && edited?.base?.changesetId == "e1")
        #expect(forced.leaving.first { $0.refId == "bad" }?.invalid == true)
        #expect(
            SparseService.removal(forced.leaving.first { $0.refId == "bad" }!) == nil,
            "an invalid file is kept aside first")
    }
}
