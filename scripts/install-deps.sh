#!/usr/bin/env bash
# Installs what building and testing docsync needs on a fresh Debian machine (as root).
# (The git transport tests' servers: scripts/install-test-servers.sh.)
# Swift itself is expected at /opt/swift or on PATH.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
dpkg -s pkg-config >/dev/null 2>&1 || need+=(pkg-config)
dpkg -s libgit2-dev >/dev/null 2>&1 || need+=(libgit2-dev)
# zlib compresses the git packs docsync writes (libgit2-dev pulls it in too).
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)
# For the tests of the docs and examples: the shells whose completion scripts are checked,
# jq (examples/edit-with-jq-and-sed.sh), groff (rendering man/docsync.1), less (the default
# pager, run under script and timeout), unshare (a user namespace with a small inotify
# limit) and systemd-analyze (verifying examples/systemd; nothing is started). The list is
# Tests/DocsyncCLITests/ProgramPrerequisites.swift's; most are on every Debian already.
# strace counts the files a first push creates (FileCreationTests); faketime runs docsync
# as a machine whose clock is off (ClockSkewTests).
for pkg in bash zsh fish jq groff-base less systemd util-linux bsdutils coreutils strace faketime; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# The --json tests validate output against docs/schemas/ with an independent validator.
python3 -c 'import jsonschema' >/dev/null 2>&1 || need+=(python3-jsonschema)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing ${need[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v swift >/dev/null; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    echo "install-deps: add /opt/swift/usr/bin to PATH" >&2
  else
    echo "install-deps: Swift 6 is required (https://www.swift.org/install/linux/)" >&2
    exit 1
  fi
fi
