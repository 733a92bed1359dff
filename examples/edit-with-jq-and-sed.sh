#!/usr/bin/env bash
# Records edited with jq and sed, then synced: two replicas ("laptop" and "desktop") of the
# sample data set in examples/data, over a folder remote, in a temporary folder.
#
#   ./examples/edit-with-jq-and-sed.sh           uses the docsync on PATH
#   DOCSYNC=.build/debug/docsync ./examples/edit-with-jq-and-sed.sh
#   WORK=/tmp/try ./examples/edit-with-jq-and-sed.sh   works in (and keeps) /tmp/try
#
# Two rules for scripts that edit records:
# - keep "refId" (jq keeps every key you do not delete; sed only touches what it matches):
#   a record rewritten without it is taken as a new document;
# - write a new file and rename it over the old one (`jq … f > f.tmp && mv f.tmp f`, or
#   `sed -i`), never `jq … f > f`, which empties f before jq reads it.
set -euo pipefail

DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-jq-sed.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

run() { printf '$ %s\n' "$1"; eval "$1"; }
ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }
# jq FILTER FILE: rewrites FILE with jq's output, through a temp file and a rename.
jq_edit() { jq "$1" "$2" >"$2.tmp" && mv "$2.tmp" "$2"; }

echo "== laptop starts from the sample data; desktop clones it"
cp -R "$data" laptop
ds init --name laptop --remote "$work/remote" laptop
ds -C laptop sync
ds clone --name desktop "$work/remote" desktop

echo "== laptop edits with jq: a tag on every contact in GB, a task done, a new task"
# Only the files that change are rewritten: jq writes its own layout, so rewriting every
# file would make each one an edit.
for f in $(jq -r 'select(.address.country == "GB") | input_filename' laptop/contacts/*.json); do
  run "jq_edit '.tags += [\"uk\"]' $f"
done
run "jq_edit '.done = true' laptop/tasks/buy-milk.json"
run "jq -n '{title: \"Book the dentist\", done: false, due: \"2026-04-01\", priority: 2}' > laptop/tasks/book-dentist.json"

echo "== desktop edits with sed: Ada's phone number, a task's due date"
run "sed -i 's/+44 20 7946 0001/+44 20 7946 0999/' desktop/contacts/ada-lovelace.json"
run "sed -i 's/2026-03-15/2026-03-01/' desktop/tasks/renew-passport.json"

echo "== both sync; Ada was edited on both sides, in different fields: merged, no conflict"
ds -C laptop sync
ds -C desktop sync
ds -C laptop sync
run "cat laptop/contacts/ada-lovelace.json"

echo "== jq reads the records too: the open tasks, by priority"
run "jq -rs 'map(select(.done == false)) | sort_by(.priority) | .[] | \"\(.priority) \(.title)\"' desktop/tasks/*.json"

# Every record, path and bytes, outside .docsync/.
documents() { (cd "$1" && find . -path ./.docsync -prune -o -name '*.json' -print | LC_ALL=C sort | xargs -d '\n' sha256sum); }
if [[ "$(documents laptop)" == "$(documents desktop)" ]]; then
  echo "laptop and desktop hold the same records"
else
  echo "edit-with-jq-and-sed: laptop and desktop differ" >&2
  exit 1
fi
