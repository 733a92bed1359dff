// Programs the docs and examples tests drive besides docsync: shells, jq, groff,
// systemd-analyze. scripts/install-deps.sh installs them; like the test servers, a missing
// one skips its tests loudly on a developer's machine and fails them under CI=true.

import Foundation

extension Prerequisite {
  /// The first of `paths` that is an executable file, as a prerequisite named `name`.
  static func program(_ name: String, at paths: [String]) -> Prerequisite {
    let found = paths.contains { FileManager.default.isExecutableFile(atPath: $0) }
    return Prerequisite(
      name: name,
      missing: found
        ? nil : "missing \(paths.joined(separator: " or ")) (scripts/install-deps.sh installs it)")
  }

  static let bash = program("bash", at: ["/usr/bin/bash", "/bin/bash"])
  static let zsh = program("zsh", at: ["/usr/bin/zsh", "/bin/zsh"])
  static let fish = program("fish", at: ["/usr/bin/fish"])
  static let jq = program("jq", at: ["/usr/bin/jq"])
  static let groff = program("groff", at: ["/usr/bin/groff"])
}

/// The absolute path of a program (the first of `paths` that exists).
func programPath(_ paths: String...) -> String {
  paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? paths[0]
}
