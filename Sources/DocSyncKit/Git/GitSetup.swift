import CLibGit2
import Foundation

/// `docsync git-setup`: makes plain `git merge` (and rebase, cherry-pick) of a repository
/// merge its JSON records with `docsync merge-driver`: `merge.docsync.driver` in the
/// repository's config, and `*.json merge=docsync` in its `.gitattributes`.
public enum GitSetup {
    public struct Report: Codable, Sendable {
        public var repository: String
        public var attributesFile: String
        /// False when the line was already there.
        public var attributesAdded: Bool
        public var driver: String
    }

    public struct Failure: Error, LocalizedError {
        public var message: String
        public var errorDescription: String? { message }
    }

    public static let driver = "docsync merge-driver %O %A %B %P"
    static let attribute = "*.json merge=docsync"

    /// Sets up the repository that contains `directory`.
    public static func run(in directory: String) throws -> Report {
        _ = GitLibrary.initialised
        var repo: OpaquePointer?
        guard git_repository_open_ext(&repo, directory, 0, nil) == 0, let repo else {
            throw Failure(message: "\(directory) is not in a git repository")
        }
        defer { git_repository_free(repo) }
        guard let workdir = git_repository_workdir(repo).map({ String(cString: $0) }) else {
            throw Failure(message: "a bare repository has no working tree (and no .gitattributes) to set up")
        }
        var config: OpaquePointer?
        try GitError.check(git_repository_config(&config, repo), "git_repository_config")
        defer { git_config_free(config) }
        var local: OpaquePointer?
        try GitError.check(git_config_open_level(&local, config, GIT_CONFIG_LEVEL_LOCAL), "git_config_open_level")
        defer { git_config_free(local) }
        try GitError.check(
            git_config_set_string(local, "merge.docsync.name", "docsync: JSON records, field by field"),
            "git_config_set_string")
        try GitError.check(git_config_set_string(local, "merge.docsync.driver", driver), "git_config_set_string")

        let root = workdir.hasSuffix("/") ? String(workdir.dropLast()) : workdir
        let file = root + "/.gitattributes"
        let existing = (try? FileSystem.readFile(file)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let present = existing.split(whereSeparator: \.isNewline).contains {
            $0.trimmingCharacters(in: .whitespaces) == attribute
        }
        if !present {
            let text = existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + attribute + "\n"
            try FileSystem.writeAtomically(file, Array(text.utf8))
        }
        return Report(repository: root, attributesFile: file, attributesAdded: !present, driver: driver)
    }
}
