#!/usr/bin/env bash
# A backup machine that only receives: "laptop" syncs the sample data set in examples/data
# to a folder remote; "backup" is a receive-only clone of it (sync.mode receive-only). The
# backup takes every change the laptop sends; an edit made on the backup by mistake is
# recorded, listed as not sent, never reaches the remote, and `docsync revert` puts the
# synced version back. In a temporary folder.
#
#   ./examples/receive-only-backup.sh            uses the docsync on PATH
#   DOCSYNC=.build/debug/docsync ./examples/receive-only-backup.sh
#   WORK=/tmp/try ./examples/receive-only-backup.sh   works in (and keeps) /tmp/try
set -euo pipefail

DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-backup.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }

echo "== laptop starts from the sample data; backup is a receive-only clone"
cp -R "$data" laptop
ds init --name laptop --remote "$work/remote" laptop
ds -C laptop sync
ds clone --receive-only --name backup "$work/remote" backup

echo "== laptop marks a task done; the backup receives it"
sed -i 's/"done": false/"done": true/' laptop/tasks/buy-milk.json
ds -C laptop sync
ds -C backup sync
grep -q '"done": true' backup/tasks/buy-milk.json

echo "== an edit on the backup is recorded and never sent"
sed -i 's/Grace Hopper/Grace M. Hopper/' backup/contacts/grace-hopper.json
status=0
ds -C backup push || status=$?
[[ $status -eq 1 ]] || { echo "push on a receive-only replica exited $status, not 1" >&2; exit 1; }
ds -C backup sync
ds -C backup status
ds -C laptop sync
if grep -q 'Grace M. Hopper' laptop/contacts/grace-hopper.json; then
  echo "the backup's edit reached the laptop" >&2
  exit 1
fi

echo "== revert puts the synced version back"
ds -C backup revert contacts/grace-hopper.json
ds -C backup status
if diff -r -x .docsync laptop backup >/dev/null; then
  echo "laptop and backup hold the same records"
else
  echo "laptop and backup differ" >&2
  exit 1
fi
