// Engine-level pieces of the reliability suites that cannot be reached from the command
// line (the CLI suites are in Tests/DocsyncCLITests/Reliability*.swift and friends).

import Foundation
import Testing

@testable import DocSyncKit

@Suite struct ReliabilityEngineTests {
    @Test("a remote lock naming this host and this very pid, which this process does not hold, is stale (pid reused)")
    func lockWithOurOwnPidIsStale() throws {
        let folder = TempFolder("remote")
        try DirectoryRemote.create(at: folder.sub("r"))
        let mine = #"{"host":"\#(ProcessInfo.processInfo.hostName)","pid":\#(getpid()),"replica":"bbbb","time":0}"#
        folder.write("r/.docsync/lock", mine + "\n")
        let remote = DirectoryRemote(url: folder.sub("r"), lockStaleSeconds: 600, lockWaitSeconds: 0.2)
        let cursor = try remote.changes(since: nil).cursor
        let bytes = Array("{}".utf8)
        let write = RemoteWrite(
            refId: "r1",
            new: DocVersion(
                refId: "r1", changesetId: "000000000001-0000-aaaa", hash: ContentHash.of(bytes), path: "a.json"),
            previous: nil, content: bytes)
        _ = try remote.commit([write], expecting: cursor, replica: ReplicaInfo(replicaId: "aaaa", name: "test"))
        #expect(!folder.exists("r/.docsync/lock"))
    }

    @Test("a remote lock held by this very process (another push in flight here) is not taken for a stale one")
    func lockHeldInThisProcessIsLive() throws {
        let folder = TempFolder("remote")
        try DirectoryRemote.create(at: folder.sub("r"))
        let holder = RemoteLock(folder: folder.sub("r/.docsync"), replica: "bbbb")
        #expect(try holder.acquire(waitSeconds: 0, staleSeconds: 600) == nil)
        defer { holder.release() }
        let remote = DirectoryRemote(url: folder.sub("r"), lockStaleSeconds: 600, lockWaitSeconds: 0.2)
        let cursor = try remote.changes(since: nil).cursor
        let bytes = Array("{}".utf8)
        let write = RemoteWrite(
            refId: "r1",
            new: DocVersion(
                refId: "r1", changesetId: "000000000001-0000-aaaa", hash: ContentHash.of(bytes), path: "a.json"),
            previous: nil, content: bytes)
        #expect(throws: RemoteError.self) {
            try remote.commit([write], expecting: cursor, replica: ReplicaInfo(replicaId: "aaaa", name: "test"))
        }
        #expect(holder.stillHeld)
    }

    @Test(
        "a folder without hard links (FAT, some SMB shares): the lock says so at once, not 'locked by another push'",
        arguments: [EPERM, ENOTSUP, ENOSYS])
    func lockWithoutHardLinks(_ code: Int32) throws {
        let folder = TempFolder("remote")
        try DirectoryRemote.create(at: folder.sub("r"))
        var tries = 0
        // The call link(2) makes on such a file system; everything else is the real folder.
        let lock = RemoteLock(
            folder: folder.sub("r/.docsync"), replica: "aaaa",
            link: { _, _ in
                tries += 1
                errno = code
                return -1
            })
        let started = Date()
        do {
            _ = try lock.acquire(waitSeconds: 5, staleSeconds: 600)
            Issue.record("the lock was taken without a link")
        } catch let error as RemoteError {
            guard case let .rejected(_, reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("does not support hard links"), "\(reason)")
        }
        #expect(tries == 1, "no waiting for a lock nobody holds")
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(!folder.exists("r/.docsync/lock"))
        #expect(
            (try FileManager.default.contentsOfDirectory(atPath: folder.sub("r/.docsync"))).allSatisfy {
                !$0.hasPrefix("lock.")
            },
            "its own lock file is removed")
        // A lock that is merely taken (EEXIST) is still waited for.
        var busy = 0
        let waiting = RemoteLock(
            folder: folder.sub("r/.docsync"), replica: "bbbb",
            link: { _, _ in
                busy += 1
                errno = EEXIST
                return -1
            })
        #expect(try waiting.acquire(waitSeconds: 0.3, staleSeconds: 600) != nil || busy > 1)
        #expect(busy > 1)
    }

    @Test(
        "a new version whose bytes cannot be had fails the push on both remote kinds: no empty file, no tombstone",
        arguments: ["folder", "git"])
    func aVersionWithoutBytesIsRefused(kind: String) throws {
        let folderSet = ReplicaSet()
        let gitSet = kind == "git" ? try GitReplicaSet() : nil
        let a = try gitSet?.make("a") ?? folderSet.make("a")
        if let gitSet { try gitSet.sync(a) } else { try folderSet.sync(a) }
        let ws = try Workspace.open(at: a, readOnly: false)
        defer { ws.close() }
        let remote = try ws.makeRemote()
        let cursor = try remote.changes(since: nil).cursor
        let write = RemoteWrite(
            refId: "r1",
            new: DocVersion(
                refId: "r1", changesetId: "000000000001-0000-aaaa", hash: ContentHash.of(Array("{}".utf8)),
                path: "a.json"), previous: nil, content: nil)
        #expect(throws: ObjectStore.Missing.self) {
            try remote.commit([write], expecting: cursor, replica: ReplicaInfo(replicaId: "aaaa", name: "test"))
        }
        #expect(try remote.changes(since: cursor).entries.isEmpty)
    }

    @Test("a lost clock is rebuilt from the state, so ids keep increasing past every version seen")
    func clockRebuiltFromState() throws {
        let set = ReplicaSet()
        let a = try set.make("a")
        let ahead = UInt64(Date().timeIntervalSince1970 * 1000) + 3_600_000
        let future = ChangesetID(wallMillis: ahead, counter: 7, replica: "0a0b0c0d0e0f").description
        set.write(a, "f.json", "{\"refId\": \"f\", \"changesetId\": \"\(future)\", \"v\": 1}")
        try set.sync(a)
        try FileManager.default.removeItem(atPath: a + "/.docsync/clock")
        let ws = try Workspace.open(at: a, readOnly: true)
        defer { ws.close() }
        #expect(ws.clock.next().description > future)
    }
}
