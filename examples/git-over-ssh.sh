#!/usr/bin/env bash
# Two replicas ("laptop" and "desktop") of the sample data set in examples/data, synced
# through a bare git repository on a server reached over ssh.
#
#   ./examples/git-over-ssh.sh ssh://me@git.example.com/srv/records.git
#   (also me@git.example.com:/srv/records.git; DOCSYNC=/path/to/docsync to pick the binary,
#    WORK=DIR to work in, and keep, DIR instead of a temporary folder)
#
# Before running it:
# - on the server, an empty bare repository on branch main:
#     ssh me@git.example.com git init --bare -b main /srv/records.git
# - here, an ed25519 key the server accepts (ssh-agent, the IdentityFile of ~/.ssh/config,
#   or ~/.ssh/id_ed25519; `ssh-keygen -t ed25519` makes one), and the server's host key
#   in ~/.ssh/known_hosts (docsync never adds one: `ssh` to the server once and check the
#   fingerprint). docs/GIT-REMOTES.md has the details.
set -euo pipefail

url=${1:?usage: git-over-ssh.sh SSH-URL-OF-AN-EMPTY-BARE-REPOSITORY}
DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-ssh.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

run() { printf '$ %s\n' "$1"; eval "$1"; }
ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }

echo "== laptop: the sample data, pushed to the repository (one commit)"
cp -R "$data" laptop
ds init --name laptop --remote "$url" laptop
ds -C laptop sync

echo "== desktop: a clone; it edits a task with sed and syncs"
ds clone --name desktop "$url" desktop
run "sed -i 's/\"done\": false/\"done\": true/' desktop/tasks/buy-milk.json"
ds -C desktop sync

echo "== laptop gets the edit"
ds -C laptop sync
run "grep '\"done\"' laptop/tasks/buy-milk.json"

echo "== the repository is a normal git repository: plain git sees the records and commits"
run "git clone -q '$url' plain"
run "git -C plain log --format=%s"
run "ls plain/contacts plain/tasks"
