#!/usr/bin/env bash
# An exporter that only sends: "laptop" syncs the sample data set in examples/data to a
# folder remote; "exporter" is a clone made send-only (sync.mode send-only), as a machine
# that writes records from a cron job would be. What the exporter writes reaches the
# laptop; what the laptop changes is listed on the exporter as not applied and never
# touches its files. A record both changed waits until `docsync override` sends the
# exporter's version over the laptop's (kept in the conflict store, the laptop told); then
# the mode goes back to both and the rest is merged in. In a temporary folder.
#
#   ./examples/send-only-exporter.sh            uses the docsync on PATH
#   DOCSYNC=.build/debug/docsync ./examples/send-only-exporter.sh
#   WORK=/tmp/try ./examples/send-only-exporter.sh   works in (and keeps) /tmp/try
set -euo pipefail

DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-exporter.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }

echo "== laptop starts from the sample data; exporter is a clone made send-only"
cp -R "$data" laptop
ds init --name laptop --remote "$work/remote" laptop
ds -C laptop sync
ds clone --name exporter "$work/remote" exporter
ds -C exporter config sync.mode send-only

echo "== the exporter writes a record; the laptop receives it"
mkdir -p exporter/reports
printf '{\n  "title": "Weekly report",\n  "tasksDone": 0\n}\n' > exporter/reports/weekly.json
ds -C exporter sync
ds -C laptop sync
grep -q '"Weekly report"' laptop/reports/weekly.json

echo "== the laptop marks a task done: the exporter lists it and leaves its file alone"
sed -i 's/"done": false/"done": true/' laptop/tasks/buy-milk.json
ds -C laptop sync
ds -C exporter sync
grep -q '"done": false' exporter/tasks/buy-milk.json
ds -C exporter status

echo "== both change the weekly report: the exporter's change waits; override sends it"
sed -i 's/"tasksDone": 0/"tasksDone": 1/' exporter/reports/weekly.json
sed -i 's/"Weekly report"/"Weekly report (draft)"/' laptop/reports/weekly.json
ds -C laptop sync
ds -C exporter sync
if grep -q '"tasksDone": 1' laptop/reports/weekly.json; then
  echo "the exporter's edit went over the laptop's without override" >&2
  exit 1
fi
ds -C exporter override reports/weekly.json
status=0
ds -C laptop sync || status=$?
[[ $status -eq 3 ]] || { echo "the laptop's sync exited $status, not 3 (its version lost)" >&2; exit 1; }
grep -q '"tasksDone": 1' laptop/reports/weekly.json
ds -C laptop conflicts

echo "== back to both: the task the laptop marked done is merged in"
ds -C exporter config sync.mode both
ds -C exporter sync
ds -C laptop sync
if diff -r -x .docsync laptop exporter >/dev/null; then
  echo "laptop and exporter hold the same records"
else
  echo "laptop and exporter differ" >&2
  exit 1
fi
