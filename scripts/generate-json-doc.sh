#!/usr/bin/env bash
# Writes docs/JSON.md: the rules of docsync's --json output and an example per command,
# each the real output of the built binary in a scratch session (paths shown as
# /home/ada/notes). Build first (`swift build`); run after changing any --json shape.
# Usage: scripts/generate-json-doc.sh [path/to/docsync]
set -euo pipefail
cd "$(dirname "$0")/.."
docsync=$(realpath "${1:-.build/debug/docsync}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/out.txt"
ex() { local name=$1; shift; echo "### $name \$ docsync $*"; set +e; "$docsync" "$@" 2>/dev/null; echo "### exit $?"; set -e; }
(
  cd "$work"
  mkdir A
  printf '{"name": "Ada", "city": "London"}\n' > A/ada.json
  printf '{"title": "buy milk"}\n' > A/task.json
  printf '{"title": "call Bob"}\n' > A/call.json
  ex init init --json --remote "$work/remote" --name laptop A
  ex sync -C A sync --json
  ex clone clone --json --name desk "$work/remote" B
  sed -i 's/London/Paris/' A/ada.json
  sed -i 's/London/Rome/' B/ada.json
  "$docsync" -C A sync -q
  ex sync-conflict -C B sync --json
  ex conflicts -C B conflicts --json
  ex resolve -C B resolve --json --take local ada.json
  ex rm -C B rm --json task.json
  ex restore -C B restore --json task.json
  printf '{"title": "draft"}\n' > B/draft.json
  ex revert -C B revert --json draft.json
  printf '{"x": 1,,}' > B/bad.json
  mv B/call.json B/phone-bob.json
  ex status -C B status --json
  rm B/bad.json
  "$docsync" -C B sync -q
  rm A/task.json A/call.json
  ex refused -C A push --json
  ex restore-deleted -C A restore --json --deleted
  ex log -C B log --json -n 4
  ex logdoc -C B log --json ada.json
  ex verify -C B verify --json
  ex gc -C B gc --json
  ex config -C B config --json remote.url
  ex configset -C B config --json core.replicaName desk2
  ex configlist -C B config --json --list
  ex new -C B new --json notes/idea.json
  VISUAL="sed -i s/{/[/" ex edit-rejected -C B edit --json notes/idea.json
  ex replicas -C B replicas --json
  ex forget -C B replicas forget --json --dry-run laptop
  ex sparse-clone clone --json --name phone --sparse notes/ "$work/remote" C
  ex sparse-add -C C sparse add --json ada.json
  ex sparse-list -C C sparse list --json
  sed -i 's/"Ada"/"Ada L."/' B/ada.json
  ex diff -C B diff --json
  ex blame -C B blame --json ada.json
  # watch: started, one edit synced, stopped with SIGTERM.
  (
    echo "### watch \$ docsync -C B watch --json"
    "$docsync" -C B watch --json 2>/dev/null & pid=$!
    sleep 2
    printf '{"title": "water plants"}\n' > B/plants.json
    sleep 3
    kill -TERM $pid
    wait $pid
    echo "### exit $?"
  )
  ex resetbase -C B reset-base --json
  ex error -C / status --json
  ex usage -C B log --json --bogus
  ex pull -C A pull --json
  printf '{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}\n' > contact.schema.json
  mkdir -p B/people
  printf '{"name": 7}\n' > B/people/bo.json
  printf '{"name": "Al"\n' > B/people/al.json
  ex check -C B check --json --schema ../contact.schema.json people
  git init -q -b main G
  ex gitsetup -C G git-setup --json
  printf '{"tags": ["a"], "v": 1}\n' > G/base.json
  printf '{"tags": ["a", "b"], "v": 2}\n' > G/ours.json
  printf '{"tags": ["c", "a"], "v": 3}\n' > G/theirs.json
  ex mergedriver -C G merge-driver --json base.json ours.json theirs.json tags.json
) > "$out"
sed -i "s#$work#/home/ada/notes#g" "$out"
python3 - "$out" docs/JSON.md <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = {m.group(1): (m.group(2), m.group(3).rstrip(), m.group(4))
          for m in re.finditer(r'### (\S+) \$ (.*?)\n(.*?)### exit (\d+)\n', text, re.S)}
head = open(sys.argv[2]).read().split("\n## Examples\n")[0]
sections = [
    ("init", "`init` says what it made: the tree, its replica id and name, and the remote with its kind, branch (git only, else `null`) and whether this run created it (`false`: an existing remote was joined).", ["init"]),
    ("clone", "`clone` is the report of its first pull plus the tree and the remote, like `init`; `documents` is how many documents were pulled.", ["clone"]),
    ("push, pull, sync", "What the run recorded, pulled and pushed (`kind`: create, update, rename, delete, restore, resolve; `fromPath` on a rename), the conflicts it recorded or heard of, notices, problems (invalid files, `path:line:col: reason`), warnings, and how many documents are still pending. `remoteUnreachable` is there only when the remote could not be reached (exit 75). With `--dry-run`, `dryRun` is true and the lists say what would happen.", ["sync", "sync-conflict", "pull"]),
    ("A push refused by the max-delete guard", "`refusedPush` lists what the push would have deleted and the command that brings it all back; what the run pulled is still reported (exit 1).", ["refused", "restore-deleted"]),
    ("rm, restore, revert, resolve, reset-base", "The same report as a sync. `restore` adds `restored`: per document the version brought back, where it was found (`journal` or `remote`) and the `changesetId` it carries now. `revert` adds `reverted`: the local changes it undid, as `status` listed them (here a file created and recorded by the same run, then removed).", ["rm", "restore", "revert", "resolve", "resetbase"]),
    ("status", "`lastSync` is `null` before the first sync; `pending` are recorded actions not yet on the remote, `unrecorded` changes on disk, each with a `note` where `status` explains it (a rename, a refId removed or changed, a tombstone); `conflicts` the open conflict records; `problems` the files that are not valid documents (exit 1).", ["status"]),
    ("conflicts", "Open conflict records (with `--all`, resolved ones too, with `resolved`, `take` and `resolvedBy`).", ["conflicts"]),
    ("log", "The journal, oldest first (`-n`, `--since` apply): one object per entry with its `seq`, `kind`, `time` and the fields of that kind (docs/FORMATS.md); local actions carry `pending`.", ["log"]),
    ("log DOC", "One document: this replica's journal entries about it and the remote's versions, newest first (`id`: a commit on a git remote, a feed position on a folder remote; `authorName`: the replica's name when the author is a replica id).", ["logdoc"]),
    ("verify", "`ok` is false (and the exit code 1) when a problem was found.", ["verify"]),
    ("gc", "What was dropped and freed locally, the remote's tombstone purge (`null` with `--local-only`), and for a git remote how its cache repository was repacked (`gitCache`: packs and loose objects before, objects in the one pack written; `null` for a folder remote).", ["gc"]),
    ("config", "`config KEY` prints the key's value (its default when not set; `null` and exit 1 when it has none) and the default; setting a key prints the new value and, for a remote key, whether the base was reset (`remoteChanged`: true only for another remote taken with `--reset-base`; the same remote by a new URL resets nothing).", ["config", "configset", "configlist"]),
    ("new, edit", "`new` names the record it made and its ids; `edit` says what the edit did (`outcome`: updated, unchanged, rejected; a rejected edit exits 1 and names where the refused text was kept).", ["new", "edit-rejected"]),
    ("replicas", "Every replica the remote knows (`self`: this tree); `replicas forget` names the one retired.", ["replicas", "forget"]),
    ("sparse", "`clone --sparse` is a clone's report; `sparse set|add|remove|reapply|disable` report like a pull (what widening pulled; `leftSelection`: the files of documents that left the selection, removed here and still on the remote) with `selection`, the patterns now (`null`: the replica keeps everything); `sparse list` prints only `selection`.", ["sparse-clone", "sparse-add", "sparse-list"]),
    ("check", "Every problem of the records checked: `line` and `column` for invalid JSON, `pointer` (RFC 6901; `\"\"` is the record itself) for a schema error; `invalid` counts records, `withSchema` those that had a schema; `tree` is `null` outside a docsync tree; exit 1 when `invalid` is not 0.", ["check"]),
    ("diff", "Per document, what it was compared with (`against`: base, remote, the changesetId asked for, or a file) and its version (`againstChangesetId`), and each change: `pointer` (RFC 6901), `kind` (added, removed, changed), `old` and `new` as compact JSON; `note` says `new`, `deleted`, or that a side is not valid JSON.", ["diff"]),
    ("watch", "One compact object per line: `watching` first (the tree, how many folders, the settings), one `sync` per sync logged (`trigger`: start, edit, pull, remote, retry, overflow; `exitCode` and `meaning`: what `docsync sync` would have exited with; the counts; `message` and `retryInSeconds` when it failed), and `stopped` with the signal.", ["watch"]),
    ("blame", "Per field of the record (`pointer`, its `value` now as compact JSON), the version that last set it: `changesetId`, the `replica` id in it, and `time` (the save time in the changesetId); `(not recorded)` for an edit not recorded yet; `versions` counts the versions read; `remoteError` says why only the journal was read.", ["blame"]),
    ("git-setup, merge-driver", "`git-setup` names the repository and whether it added the `.gitattributes` line; `merge-driver` says whether the file merged (`merged`: false and exit 1 when fields collided or the policy does not merge), which side won collisions and why, and each collision as a JSON pointer with both values.", ["gitsetup", "mergedriver"]),
    ("Errors", "", ["error", "usage"]),
]
out = [head.rstrip() + "\n\n## Examples\n\nReal output of one session (written by `scripts/generate-json-doc.sh`): replica `laptop`\n(tree `A`) makes a folder remote, replica `desk` (tree `B`) clones it, both edit `ada.json`'s\n`city`.\n"]
for title, prose, names in sections:
    out.append(f"\n### {title}\n")
    if prose: out.append("\n" + prose + "\n")
    for n in names:
        cmd, body, code = blocks[n]
        out.append(f"\n```console\n$ {cmd}\n{body}\n```\n" + (f"(exit {code})\n" if code != "0" else ""))
open(sys.argv[2], "w").write("".join(out))
PY
echo "generate-json-doc: wrote docs/JSON.md"
