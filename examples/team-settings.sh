#!/usr/bin/env bash
# The merge settings a team agrees on. .docsync/config is per replica (it is not synced),
# so everyone runs this once after `docsync clone`, and again when it changes:
#   examples/team-settings.sh ~/records      (DOCSYNC=/path/to/docsync to pick the binary)
set -euo pipefail
tree="${1:-.}"
docsync() { command "${DOCSYNC:-docsync}" "$@"; }   # `command`: the program, not this function
docsync -C "$tree" config merge.policy merge             # field-by-field merge (the default)
docsync -C "$tree" config merge.counters stats.plays      # counters add up both sides' deltas
docsync -C "$tree" config 'merge.policyFor.contacts/**' lww   # contacts: whole record, last writer wins
docsync -C "$tree" config --list
