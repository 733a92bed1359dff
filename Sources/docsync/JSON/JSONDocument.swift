import ArgumentParser
import DocSyncKit
import Foundation

/// The version of the `--json` shapes documented in docs/JSON.md and docs/schemas/.
/// Adding a field keeps it; removing, renaming or retyping one raises it.
enum JSONSchemaVersion {
    static let current = 1
}

/// One `--json` output: a single object with `schemaVersion`, `command` and the command's
/// own fields next to them (never a bare array or a bare value).
struct JSONDocument<Body: Encodable>: Encodable {
    var command: String?
    var body: Body

    private enum Key: String, CodingKey { case schemaVersion, command }

    func encode(to encoder: Encoder) throws {
        // The body writes its fields into the same object; the envelope's keys go last, so
        // they win over a body that carries its own.
        try body.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(JSONSchemaVersion.current, forKey: .schemaVersion)
        try container.encodeIfPresent(command, forKey: .command)
    }
}

/// A failure as `--json` prints it: `{"schemaVersion": 1, "error": {code, message, exitCode}}`.
struct JSONError: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
        var exitCode: Int32
    }
    var error: Detail
}

/// Stable names for the failures a script may want to tell apart.
enum ErrorCode {
    static func of(_ error: Error, exitCode: Int32) -> String {
        if let failure = error as? CommandFailure, let code = failure.errorCode { return code }
        switch error {
        case RemoteError.unreachable, Workspace.Failure.unreachable: return "remote-unreachable"
        case RemoteError.locked, Workspace.Failure.busy, Workspace.Failure.contended: return "busy"
        case RemoteError.rejected: return "remote-rejected"
        case RemoteError.damaged: return "remote-damaged"
        case RemoteError.unsafe: return "remote-unsafe"
        case is RemoteAddress.Invalid: return "invalid-remote-url"
        case Workspace.Failure.notATree: return "not-a-tree"
        case Workspace.Failure.noRemote, Workspace.Failure.noRemoteAt: return "no-remote"
        case Workspace.Failure.differentRemote: return "different-remote"
        case Workspace.Failure.notTracked: return "unknown-document"
        case Workspace.Failure.offlineTooLong: return "offline-too-long"
        default:
            if exitCode == ExitStatus.usage.rawValue { return "usage" }
            return exitCode == ExitStatus.tempFail.rawValue ? "try-again-later" : "error"
        }
    }
}
