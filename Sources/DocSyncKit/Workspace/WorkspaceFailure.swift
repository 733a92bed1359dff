import Foundation

extension Workspace {
    public enum Failure: Error, LocalizedError {
        case notATree(String)
        case insideTree(String, outer: String)
        /// The remote has not been reached for longer than `sync.maxOfflineDays`.
        case offlineTooLong(url: String, since: Int64, days: Double, reason: String)
        case alreadyATree(String)
        case noRemote
        /// No remote at this URL, and none was asked for (`--create`).
        case noRemoteAt(String)
        /// The URL names another remote than the one this tree synced with.
        case differentRemote(url: String, reason: String)
        /// A new folder remote whose parent folder is missing (a typo, or a share not mounted).
        case remoteParentMissing(url: String, parent: String)
        case busy(String)
        case notTracked(String)
        case gaveUp(String)
        /// The remote could not be reached (the message says why): try again later.
        case unreachable(String)
        /// Other replicas kept pushing while this one tried: try again later (exit 75).
        case contended(String)

        public var errorDescription: String? {
            switch self {
            case let .notATree(dir):
                return
                    "not a docsync tree (or any parent up to /): \(dir). Run `docsync init` or `docsync clone URL DIR`"
            case let .alreadyATree(dir): return "\(dir) is already a docsync tree"
            case let .insideTree(dir, outer):
                return
                    "\(dir) is inside the docsync tree \(outer); a tree inside another tree would be synced twice. Pick a folder outside it"
            case let .offlineTooLong(url, since, days, reason):
                return
                    "remote \(url) has not been reached since \(Timestamp.rfc3339(since)) (more than \(Timestamp.days(days)), sync.maxOfflineDays): \(reason). "
                    + "Check the URL and the network (`docsync config remote.url`), or raise the limit with `docsync config sync.maxOfflineDays N`. Local changes stay recorded"
            case .noRemote: return "no remote configured; set one with `docsync config remote.url PATH`"
            case let .noRemoteAt(url):
                return "no docsync remote at \(url) (check the path; to make a new remote there, pass --create)"
            case let .differentRemote(url, reason):
                return
                    "\(url) is a different remote than the one this tree last synced with (\(reason)). To switch to it, pass "
                    + "--reset-base: the next sync then merges this tree with it and deletes nothing on either side"
            case let .remoteParentMissing(url, parent):
                return
                    "remote \(url): the folder \(parent) does not exist (a typo, or a share that is not mounted?); create it first if it is meant"
            case let .busy(holder):
                return
                    "another docsync run is working on this tree (\(holder.isEmpty ? "lock held" : holder)); try again later"
            case let .notTracked(path): return "\(path): not a tracked document"
            case let .gaveUp(reason): return reason
            case let .unreachable(message): return message
            case let .contended(message): return message
            }
        }
    }
}
