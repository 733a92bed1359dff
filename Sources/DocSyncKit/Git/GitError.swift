import CLibGit2
import GitShim

/// A failed libgit2 call: which function, its error code and libgit2's message.
/// Like swift-system's `Errno`, the codes docsync acts on have names.
public struct GitError: Error, CustomStringConvertible, Sendable {
    public var code: Int32
    public var function: String
    public var message: String
    /// libgit2's error class (`GIT_ERROR_NET`, `GIT_ERROR_SSH`, …).
    public var errorClass: Int32 = 0

    /// The corresponding libgit2 code is `GIT_ENOTFOUND`.
    public static let notFound = GIT_ENOTFOUND.rawValue
    /// The corresponding libgit2 code is `GIT_ENONFASTFORWARD`: the remote branch moved.
    public static let nonFastForward = GIT_ENONFASTFORWARD.rawValue
    /// The corresponding libgit2 code is `GIT_EAUTH`: credentials were refused.
    public static let auth = GIT_EAUTH.rawValue
    /// The corresponding libgit2 code is `GIT_ECERTIFICATE`: host key or TLS certificate refused.
    public static let certificate = GIT_ECERTIFICATE.rawValue
    /// The corresponding libgit2 code is `GIT_EMODIFIED`: a reference changed under us.
    public static let modified = GIT_EMODIFIED.rawValue
    /// docsync's own code (no libgit2 one): the server refused a push for good (a hook,
    /// a protected branch, receive.denyCurrentBranch), not because the branch moved.
    public static let refused: Int32 = -10_001
    /// The corresponding libgit2 code is `GIT_EUSER`: a callback of ours said stop.
    public static let user = GIT_EUSER.rawValue

    public var description: String { "\(function): \(message) (libgit2 error \(code))" }

    /// Reads libgit2's thread-local last error; call right after the failing call.
    static func last(_ code: Int32, _ function: String) -> GitError {
        let last = git_error_last()
        let message = last.map { String(cString: $0.pointee.message) } ?? "unknown error"
        return GitError(code: code, function: function, message: message, errorClass: last?.pointee.klass ?? 0)
    }

    /// Throws if `result` is negative.
    @discardableResult
    static func check(_ result: Int32, _ function: String) throws -> Int32 {
        if result < 0 { throw last(result, function) }
        return result
    }

    /// Network-level failures (host down, connection refused, DNS): try again later.
    var isNetwork: Bool {
        if code == GitError.auth || code == GitError.certificate { return false }
        if errorClass == Int32(GIT_ERROR_NET.rawValue) || errorClass == Int32(GIT_ERROR_OS.rawValue) { return true }
        let lower = message.lowercased()
        return [
            "failed to connect", "connection refused", "could not resolve", "timed out", "unreachable",
            "failed to start ssh session", "connection reset", "network"
        ].contains { lower.contains($0) }
    }
}

/// libgit2 must be initialised once per process.
enum GitLibrary {
    static let initialised: Bool = {
        git_libgit2_init()
        // Pack files are mapped 4 MB at a time, 16 MB in all (libgit2's defaults: 1 GB and
        // 8 GB). Why: mapped pages count in a run's memory, and a push or clone maps its
        // whole pack. At 100,000 documents: first push 308 → 288 MB, clone 320 → 295 MB,
        // for a clone ~1 s (7%) slower from remapping.
        _ = docsync_git_set_mwindow_limits(4 << 20, 16 << 20)
        return true
    }()
}
