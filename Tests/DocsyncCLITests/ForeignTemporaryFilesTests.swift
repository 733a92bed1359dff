// A folder remote on a shared mount (a NAS) is written by several machines at once: a
// push here must not remove a temporary file another machine's push is still writing,
// whose pid means nothing here; one left behind long enough goes.

import DocSyncKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Another machine's files under way on a shared folder remote")
struct ForeignTemporaryFilesTests {
    /// A temporary name of another machine's process (its pid unknown here).
    static func foreignName(_ base: String) -> String {
        let other = TemporaryName.thisMachine == "0badc0de" ? "0badf00d" : "0badc0de"
        return ".docsync-tmp-99999999@\(other)-1-\(base)"
    }

    static func age(_ path: String, days: Int) {
        let t = timespec(tv_sec: time(nil) - days * 86_400, tv_nsec: 0)
        var times = [t, t]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test("a push keeps another machine's pack, view copy and metadata under way; one three days old is removed")
    func keptWhileUnderWay() throws {
        let box = Sandbox()
        let remote = box.path("remote")
        let a = box.replica("A")
        a.write("notes/n.json", "{\"n\": 1}\n")
        #expect(CLI.run(["init", "--remote", remote, "--name", "A", "A"], in: box.root).exit == 0)
        a.sync()
        let packs = remote + "/.docsync/objects/packs"
        try FileManager.default.createDirectory(atPath: packs, withIntermediateDirectories: true)
        let planted = [
            packs + "/" + Self.foreignName("pack-1-2-3.pack"),
            remote + "/notes/" + Self.foreignName("m.json"),
            remote + "/.docsync/" + Self.foreignName("info.json")
        ]
        for path in planted { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        a.write("notes/n.json", "{\"n\": 2}\n")
        a.write("notes/m.json", "{\"m\": 1}\n")
        #expect(a.run("sync").exit == 0)
        for path in planted {
            #expect(
                FileManager.default.fileExists(atPath: path), "kept while another machine may be writing it: \(path)")
        }
        for path in planted { Self.age(path, days: 3) }
        a.write("notes/n.json", "{\"n\": 3}\n")
        #expect(a.run("sync").exit == 0)
        for path in planted {
            #expect(!FileManager.default.fileExists(atPath: path), "three days old: a leftover, removed: \(path)")
        }
        #expect(a.run("verify").exit == 0)
    }
}
