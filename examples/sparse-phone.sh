#!/usr/bin/env bash
# A phone-sized replica that keeps only part of the remote: "laptop" syncs the sample data
# set in examples/data (contacts/ and tasks/) to a folder remote; "phone" is a clone that
# keeps only contacts/ (`clone --sparse contacts/`). The phone edits a contact and moves
# one out of its selection into archive/ (a rename on the remote: the laptop sees the move,
# the phone's file leaves); then it widens its selection to tasks/ (pulled) and narrows it
# back (the synced task files go, one it edited stays until it is synced). Nothing outside
# the phone's selection is ever changed on the remote. In a temporary folder.
#
#   ./examples/sparse-phone.sh            uses the docsync on PATH
#   DOCSYNC=.build/debug/docsync ./examples/sparse-phone.sh
#   WORK=/tmp/try ./examples/sparse-phone.sh   works in (and keeps) /tmp/try
set -euo pipefail

DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-sparse.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }

echo "== laptop starts from the sample data; phone is a clone that keeps only contacts/"
cp -R "$data" laptop
ds init --name laptop --remote "$work/remote" laptop
ds -C laptop sync
ds clone --name phone --sparse contacts/ "$work/remote" phone
ds -C phone sparse list
test ! -e phone/tasks

echo "== the phone edits a contact and archives another: an edit and a rename on the remote"
sed -i 's/"London"/"Marylebone, London"/' phone/contacts/ada-lovelace.json
mkdir -p phone/archive
mv phone/contacts/alan-turing.json phone/archive/alan-turing.json
ds -C phone sync
test ! -e phone/archive/alan-turing.json
ds -C laptop sync
grep -q 'Marylebone' laptop/contacts/ada-lovelace.json
test -e laptop/archive/alan-turing.json
test -e laptop/tasks/buy-milk.json

echo "== the phone takes tasks/ too, marks one done, and lets tasks/ go again"
ds -C phone sparse add tasks/
sed -i 's/"done": false/"done": true/' phone/tasks/buy-milk.json
ds -C phone sparse remove tasks/
test -e phone/tasks/buy-milk.json
ds -C phone sync
test ! -e phone/tasks
ds -C phone status
ds -C laptop sync
grep -q '"done": true' laptop/tasks/buy-milk.json

echo "== the laptop still holds every record; the phone only its contacts"
find laptop -name '*.json' -not -path '*/.docsync/*' | sed "s|^laptop/||" | sort
find phone -name '*.json' -not -path '*/.docsync/*' | sed "s|^phone/||" | sort
echo "the phone keeps its part; the remote keeps everything"
