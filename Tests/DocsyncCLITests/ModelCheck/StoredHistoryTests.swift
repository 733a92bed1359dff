// The model check's reader of a folder remote's stored history (ModelStoredHistory.swift),
// against a real remote the built binary wrote: it must see every pushed document, packed
// objects included, a deletion as deleted, and refuse an object whose bytes were changed.
// Without this, a reader that saw nothing would let the history check pass for ever.

import Foundation
import Testing

@Suite struct StoredHistoryTests {
    @Test("the model's stored-history reader sees pushes (loose and packed), deletions, and refuses a changed object")
    func readsWhatWasPushed() throws {
        let box = Sandbox("stored-history")
        let a = box.replica("a")
        for i in 0..<20 { a.write("d\(i).json", "{\"n\": \(i)}\n") }
        #expect(CLI.run(["init", "--remote", box.remote, "--name", "a", "a"], in: box.root).exit == 0)
        a.sync()
        var history = MC.StoredHistory(folder: box.remote)
        #expect(history.problems.isEmpty, "\(history.problems)")
        #expect(history.documents.count == 20)
        let packs = (try? FileManager.default.contentsOfDirectory(atPath: box.remote + "/.docsync/objects/packs")) ?? []
        #expect(packs.contains { $0.hasSuffix(".idx") }, "a first push of 20 packs all but 16: \(packs)")
        var loose: String?
        for i in 0..<20 {
            let refId = a.refId("d\(i).json")
            guard let refId, let entry = history.documents[refId] else {
                Issue.record("d\(i).json (\(refId ?? "no refId")) is not in the history")
                continue
            }
            #expect(entry.path == "d\(i).json" && !entry.deleted)
            let object = history.bytes(entry.hash).flatMap(JSONHelp.object)
            #expect(object?["n"] as? Int == i && object?["changesetId"] as? String == entry.changesetId)
            let file = box.remote + "/.docsync/objects/" + entry.hash.prefix(2) + "/" + entry.hash.dropFirst(2)
            if FileManager.default.fileExists(atPath: file) { loose = entry.hash }
        }
        let gone = a.refId("d0.json")!
        try FileManager.default.removeItem(atPath: a.path("d0.json"))
        a.sync()
        history = MC.StoredHistory(folder: box.remote)
        #expect(history.documents[gone]?.deleted == true)
        #expect(history.documents.values.filter { !$0.deleted }.count == 19)
        // An object whose bytes no longer hash to its name is not read.
        let hash = try #require(loose)
        let file = box.remote + "/.docsync/objects/" + hash.prefix(2) + "/" + hash.dropFirst(2)
        chmod(file, 0o644)
        try Data("{\"n\": 99}\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(history.bytes(hash) == nil)
    }
}
