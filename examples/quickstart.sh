#!/usr/bin/env bash
# docsync quick start: two replicas ("laptop" and "desktop") of a folder of JSON
# documents, synced through a plain directory remote, all inside a temporary folder.
#
#   ./examples/quickstart.sh              uses .build/debug/docsync (run `swift build` first)
#   DOCSYNC=docsync ./examples/quickstart.sh   uses the docsync on PATH
#   KEEP=1 ./examples/quickstart.sh       keeps the temporary folder to look around
set -euo pipefail

DOCSYNC=${DOCSYNC:-$(dirname "$0")/../.build/debug/docsync}
if [[ $DOCSYNC == */* ]]; then
  DOCSYNC="$(cd "$(dirname "$DOCSYNC")" && pwd)/$(basename "$DOCSYNC")"
fi
if ! command -v "$DOCSYNC" >/dev/null; then
  echo "quickstart: $DOCSYNC not found; run 'swift build' (or 'make demo') first" >&2
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-quickstart.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
  trap 'echo; echo "(kept $work)"' EXIT
else
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

if [[ -t 1 ]]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
# A shell command, shown as written and then run.
run() { printf '$ %s\n' "$1"; eval "$1"; }
# docsync itself, shown as `docsync ...` rather than by its full path.
ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }
show() { for f in "$@"; do printf -- '--- %s\n' "$f"; cat "$f"; done; }

step "1. laptop: make a working tree whose remote is the folder ./remote (created empty)"
ds init --name laptop --remote remote laptop

step "2. laptop: add two documents, without ids, the way an editor or a script would"
mkdir -p laptop/contacts laptop/tasks
cat > laptop/contacts/ada.json <<'EOF'
{
  "name": "Ada Lovelace",
  "email": "ada@example.org",
  "phone": "+44 20 7946 0000"
}
EOF
printf '{"title":"Buy milk","done":false}\n' > laptop/tasks/milk.json
show laptop/contacts/ada.json laptop/tasks/milk.json
ds -C laptop status

step "3. laptop: sync. Each file gets a refId and a changesetId, inserted without reformatting it"
ds -C laptop sync
show laptop/contacts/ada.json laptop/tasks/milk.json
echo "The remote is a plain folder: documents at their paths, metadata in .docsync/"
run "find remote -path remote/.docsync/objects -prune -o -type f -print | LC_ALL=C sort"

step "4. desktop: clone the remote (a second machine, here just a second folder)"
ds clone --name desktop remote desktop

step "5. desktop edits a contact with sed; laptop deletes the task with rm"
run "sed -i 's/ada@example.org/ada@analytical-engine.org/' desktop/contacts/ada.json"
run "rm laptop/tasks/milk.json"
ds -C desktop status

step "6. Both sync (whoever runs later gets the other's change)"
ds -C laptop sync
ds -C desktop sync
ds -C laptop sync
show laptop/contacts/ada.json
run "ls desktop/tasks" 2>/dev/null || echo "(desktop/tasks is gone: the deletion travelled as a tombstone)"
echo "Each replica's pushes are files of its own in the remote (no file is written by two machines):"
run "ls remote/.docsync/replicas/*/commits"

step "7. A conflict: both machines change the same field before syncing"
run "sed -i 's/7946 0000/7946 1111/' laptop/contacts/ada.json"
sleep 0.05   # the desktop saves a moment later
run "sed -i 's/7946 0000/7946 2222/' desktop/contacts/ada.json"
ds -C laptop sync
# desktop saved its edit later, so its changesetId is later and its version wins (even
# though laptop synced first); laptop's version is kept in desktop's conflict store,
# and sync exits 3 to say so.
rc=0
ds -C desktop sync || rc=$?
if [[ $rc -ne 3 ]]; then
  echo "quickstart: expected exit status 3 (conflict recorded), got $rc" >&2
  exit 1
fi
echo "(exit status $rc: a conflict was recorded; nothing was lost)"
ds -C desktop status
show desktop/contacts/ada.json
echo "The losing version, as it was:"
show $(find desktop/.docsync/conflicts -name '*.json' ! -name '*.meta.json')
echo "What happened, in the copy's .meta.json:"
show $(find desktop/.docsync/conflicts -name '*.meta.json')

step "8. laptop syncs again: it hears its edit lost (exit 3), and both machines hold the same documents"
rc=0
ds -C laptop sync || rc=$?
if [[ $rc -ne 3 ]]; then
  echo "quickstart: expected exit status 3 (laptop's version lost), got $rc" >&2
  exit 1
fi
ds -C laptop conflicts
show laptop/contacts/ada.json
# Every document, path and bytes, outside .docsync/.
documents() { (cd "$1" && find . -path ./.docsync -prune -o -name '*.json' -print | LC_ALL=C sort | xargs -d '\n' sha256sum); }
if [[ "$(documents laptop)" == "$(documents desktop)" ]]; then
  echo "laptop and desktop are identical (outside .docsync/)"
else
  echo "quickstart: laptop and desktop differ" >&2
  exit 1
fi

step "9. The journal of everything laptop did"
ds -C laptop log

step "Done"
echo "Try it yourself: KEEP=1 $0, then look inside the folder it prints."
