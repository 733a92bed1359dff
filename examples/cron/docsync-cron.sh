#!/bin/sh
# `docsync sync` for cron: every run is logged with its time and exit status; cron mails
# (prints) only what needs a person: conflicts (exit 3) and errors (exit 1, 2).
# "Try again later" (exit 75: remote unreachable, share not mounted, another run busy) is
# logged and counts as success: the next run sends everything.
#
#   docsync-cron.sh TREE [LOG]     LOG defaults to ~/.local/state/docsync/sync.log
#   DOCSYNC=/path/to/docsync       when docsync is not on cron's PATH
tree=${1:?usage: docsync-cron.sh TREE [LOG]}
log=${2:-${XDG_STATE_HOME:-$HOME/.local/state}/docsync/sync.log}
docsync=${DOCSYNC:-docsync}

mkdir -p "$(dirname "$log")" || exit 1
out=$(mktemp "${TMPDIR:-/tmp}/docsync-cron.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT

"$docsync" -C "$tree" sync >"$out" 2>&1
status=$?
{
  printf '%s %s exit %d\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$tree" "$status"
  cat "$out"
} >>"$log"

case $status in
  0 | 75) exit 0 ;;
  3)
    echo "docsync: conflicts recorded in $tree; see \`docsync -C $tree conflicts\` (log: $log)"
    cat "$out"
    exit 3
    ;;
  *)
    echo "docsync: sync of $tree failed with exit status $status (log: $log)"
    cat "$out"
    exit "$status"
    ;;
esac
