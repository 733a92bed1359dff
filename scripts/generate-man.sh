#!/usr/bin/env bash
# Regenerates man/docsync.1 so that it never drifts from the code:
#   - NAME, SYNOPSIS, DESCRIPTION and every command and option come from the
#     argument-parser definitions, through swift-argument-parser's generate-manual plugin;
#   - CONFIGURATION is built from `docsync config --help`, which prints Config.keys;
#   - EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES and SEE ALSO are written below, in mdoc.
# Usage: scripts/generate-man.sh            (or `make man`)
#        MAN_DATE=2026-01-31 scripts/generate-man.sh   to pin the .Dd date
# Check the result with: man -l man/docsync.1
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"

out=man/docsync.1
date=${MAN_DATE:-$(git log -1 --format=%cs 2>/dev/null || date -u +%F)}

# The plugin builds docsync (debug, like `swift build`) and runs it with
# --experimental-dump-help.
swift package generate-manual --configuration debug --date "$date" --section 1 >&2
generated=.build/plugins/GenerateManual/outputs/docsync/docsync.1
docsync="$(swift build --show-bin-path)/docsync"
[[ -s $generated && -x $docsync ]] || { echo "generate-man: plugin output or binary missing" >&2; exit 1; }

# mdoc-safe text: backslashes escaped, no line starting with '.' or "'".
mdoc_text() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

config_keys() {
  # Lines of the form "  <key>  <help>[ (default <value>)]" under "Keys:".
  COLUMNS=1000 "$docsync" config --help | sed -n '/^Keys:$/,/^$/p' | sed -n 's/^  \([a-zA-Z][a-zA-Z0-9.<>]*\)  \(.*\)$/\1\t\2/p' |
    while IFS=$'\t' read -r key help; do
      default=""
      if [[ $help =~ ^(.*)\ \(default\ ([^\)]*)\)$ ]]; then
        help=${BASH_REMATCH[1]}
        default=${BASH_REMATCH[2]}
      fi
      printf '.It Cm %s\n' "$key"
      printf '%s\n' "${help^}." | mdoc_text
      if [[ -n $default ]]; then
        printf 'Default:\n.Ql %s .\n' "$default"
      fi
    done
}

keys=$(config_keys)
[[ -n $keys ]] || { echo "generate-man: found no configuration keys in 'docsync config --help'" >&2; exit 1; }

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  # Everything the plugin wrote, up to its generic EXIT STATUS section; the blank lines
  # it leaves between paragraphs become .Pp (mdoc warns about empty lines).
  sed -e '/^\.Sh "EXIT STATUS"/,$d' -e 's/^$/.Pp/' "$generated"

  cat <<'EOF'
.Ss Global options
Every command accepts
.Fl C Ar DIR ,
.Fl q ,
.Fl v
and
.Fl -json ,
also before the command name, as in
.Ql docsync -C ~/records status .
With
.Fl -json
every command prints one JSON object on standard output with
.Ql \(dqschemaVersion\(dq: 1
and the command's fields; a failure prints
.Ql {\(dqschemaVersion\(dq: 1, \(dqerror\(dq: {\(dqcode\(dq: ..., \(dqmessage\(dq: ..., \(dqexitCode\(dq: ...}}
with the same exit code.
The fields and a JSON Schema per output are in
.Pa docs/JSON.md
and
.Pa docs/schemas/ .
Times are RFC 3339 in UTC, in JSON and in text.
Commands find the working tree by walking up from the current folder (or
.Ar DIR ) ,
like git.
.Pp
On a terminal,
.Cm push ,
.Cm pull ,
.Cm sync ,
.Cm clone
and
.Cm gc
show their progress on standard error (phase, count, rate and a bar, redrawn in place),
and print each pulled or pushed document as it is done.
Nothing of it is written when standard error is not a terminal, or with
.Fl q
or
.Fl -json .
With
.Fl q ,
a run that must be tried again later (exit 75: the remote unreachable, the tree or the
remote's lock held by another run) prints nothing at all; the reason is kept in
.Pa .docsync/last-attempt
and shown by
.Nm Cm status .
.Pp
.Nm
without a command, or with an unknown one (a near miss is suggested), prints the usage
on standard error and exits 2.
.Sh CONFIGURATION
Settings live in
.Pa .docsync/config
of each working tree and are read and written with
.Nm Cm config Ar KEY Op Ar VALUE ,
.Nm Cm config Fl -unset Ar KEY
and
.Nm Cm config Fl -list .
The keys are:
.Bl -tag -width Ds
EOF
  printf '%s\n' "$keys"
  cat <<'EOF'
.El
.Pp
A relative folder path in
.Cm remote.url
is resolved from the folder
.Nm
runs in; give an absolute path.
The URL is checked when it is given (to
.Cm init ,
.Cm clone
or
.Cm config ) :
an unknown scheme, a missing host or path, or a remote inside the working tree is an
error then (exit 2), never a
.Dq try again later
on every later run.
.Sh MERGING
A changesetId's time is when the edit was saved (the file's modification time, never
later than now, and always after the version it was edited from), so
.Dq later
means saved later: of two replicas that change one field, the one that saved last wins,
whichever syncs first.
A save dated in the past (a file brought back with
.Ql cp -p ,
a clock behind) sorts right after the version it was edited from, so every version made
since wins against it; one dated in the future is dated when it is recorded.
.Pp
When both sides changed a document, the policy for the path it ends up at decides
.Po
.Cm merge.policy ,
or the last matching
.Cm merge.policyFor. Ns Ar glob
.Pc :
.Bl -tag -width Ds
.It Cm merge
(the default) Merge field by field against the last synced version: a field changed on
one side only is taken; an object changed on both sides is merged key by key; a field
changed differently on both sides gets the value with the later changesetId; an edit
beats a removal.
The version that lost a value is stored (the local one when each side lost one).
Declared counters
.Pq Cm merge.counters
add both sides' changes.
.It Cm lww
The whole version with the later changesetId.
.It Cm local , Cm remote
That side's whole version.
.It Cm manual
The remote version stays in place, the local one is stored; settle it with
.Nm Cm resolve .
.El
Policies are local settings: give every replica the same ones.
A side whose document holds the base's values again (an edit undone) changed nothing:
the other side's edit is taken, under every policy.
.Pp
For example, with the base
.Ql "{\(dqname\(dq: \(dqAnn\(dq, \(dqcity\(dq: \(dqOslo\(dq}" :
local
.Ql "\(dqname\(dq: \(dqAnna\(dq"
and remote
.Ql "\(dqcity\(dq: \(dqBergen\(dq"
merge to
.Ql "{\(dqname\(dq: \(dqAnna\(dq, \(dqcity\(dq: \(dqBergen\(dq}"
with no conflict (exit 0); local
.Ql "\(dqcity\(dq: \(dqParis\(dq"
and a remote
.Ql "\(dqcity\(dq: \(dqRome\(dq"
saved later
give
.Ql "\(dqcity\(dq: \(dqRome\(dq" ,
report the field
.Ql city
as a conflict (exit 3) and store the local version.
Under
.Cm lww
the same two edits keep only the later document whole and store the other.
.Pp
Fields listed in
.Cm merge.counters
(dotted paths, such as
.Ql stats.plays )
add both sides' changes: base 1, local 11, remote 6 give 16.
.Pp
Every version that lost, whole or in one field, is kept in
.Pa .docsync/conflicts/ ,
counted by
.Nm Cm status ,
listed by
.Nm Cm conflicts
and settled with
.Nm Cm resolve Ar DOC Op Fl -take Ar local|remote|ID ,
which gives the colliding fields that side's values and keeps every later edit
.Po
.Fl -whole
brings the whole stored version back and says what that undoes
.Pc .
Conflict records travel through the remote: the replica whose version lost hears of it
on its next sync (exit 3), and a resolve on any replica settles it on all of them.
An edit beats a deletion, and that too is recorded as a conflict.
A file that is not a valid document when a remote version arrives keeps its bytes; the
remote version waits and is merged with the fix on the first sync after it.
The configuration is per replica; keep it the same on every replica (see
.Pa examples/team-settings.sh ) .
.Pp
A conflict record names its versions by replica and changesetId, and each replica shows
it from its own point of view:
.Fl -take Cm local
is what this replica has, and
.Fl -take
also accepts a replica's name.
Two renames of one document: the later rename (when the file was moved) wins on every
replica, and the other name is a recorded conflict.
The first sync of a folder that already holds the remote's files joins them: a file
without ids at a path where the remote has a document is that document (merged if it
differs), never a second copy.
.Sh CONCURRENT USE
Any number of machines may sync with one remote at the same moment.
Every push is a compare-and-swap: it lands only if the remote is still where its pull
left it, else it pulls, merges and retries (5 times, then exit 75).
A folder remote in the drive layout commits each push as a new file of its own replica
(written once, by rename), so pushes never write the same file; pushes on one machine
take
.Xr flock 2
first, which only saves them a fork.
A format-1 folder remote serialises pushes with a lock taken by
.Xr link 2
and commits with one atomic rename; on NFS it relies on NFSv3 or later (atomic
.Xr link 2
and
.Xr rename 2 ,
close-to-open consistency), on SMB on a share with hard links (a share without them is
refused with a clear error).
A git repository reached by path or file:// is updated by docsync itself, with a
compare-and-swap of the branch under git's own ref lock; over ssh, git:// and https the
server's receive-pack does it.
A replica whose pushed commit is gone from a git remote's history (a force-push) sends
its versions again and never reads that as deletions.
Files saved, renamed or deleted while a run works on the tree are never overwritten or
taken for deletions: the tree is walked again when it changed under the scan or under
a stamp, and a file saved while the pull meant to write it is recorded and merged in the
same run.
A folder remote in the drive layout (the default,
.Ql docsync-remote 2 )
is safe in a cloud-drive or Syncthing folder too: no file in it is written by two
replicas, files that arrive late or torn are waited for, and two pushes that did not
see each other are merged by the next sync.
A format-1 folder remote is upgraded to it by the first run that may write to it.
A git repository must not live in a drive folder; docsync warns when it sees one there.
See
.Pa docs/SYNC.md
(Several machines at once).
.Sh ENVIRONMENT
.Bl -tag -width Ds
.It Ev COLUMNS
Width used to wrap
.Fl -help
output.
.It Ev DOCSYNC_REMOTE_FORMAT
Set to
.Ql 1 ,
new folder remotes are made in format 1 (for a fleet that still runs docsync releases
before the drive layout), as with
.Fl -remote-format Ar 1 .
.It Ev DOCSYNC_GIT_TOKEN , Ev DOCSYNC_GIT_USER
Git remotes over https: the token (password) and user name to send.
Without a token,
.Ql git credential fill
is asked (git's credential helpers), never a terminal prompt.
.It Ev SSH_AUTH_SOCK
Git remotes over ssh: the ssh-agent to ask for a key first; then
.Cm remote.sshKey ,
the
.Cm IdentityFile
of
.Pa ~/.ssh/config ,
and
.Pa ~/.ssh/id_ed25519 .
.It Ev SSL_CERT_FILE
Git remotes over https: the system CA bundle to trust (default
.Pa /etc/ssl/certs/ca-certificates.crt ) ;
.Cm remote.caFile
adds to it.
.It Ev HOME
Where
.Pa ~/.ssh/config ,
.Pa ~/.ssh/known_hosts
and the default key are looked up.
.It Ev VISUAL , Ev EDITOR
The editor
.Nm Cm edit
runs (through
.Pa /bin/sh ,
so it may carry arguments): VISUAL if set, else EDITOR, else
.Xr vi 1 .
.It Ev NO_COLOR
Set and not empty: no colour, even on a terminal (https://no-color.org).
Colour is only ever used when standard error is a terminal.
.It Ev DOCSYNC_CRASH_AT
For tests only: the name of a point in push, pull, sync or gc where
.Nm
kills itself with SIGKILL, to prove that a crash there loses nothing.
.El
.Sh FILES
.Bl -tag -width Ds
.It Pa .docsyncignore
Paths to exclude, in gitignore syntax, at the root of the tree.
Excluding a document that is already synced never deletes it: it is reported as not
looked at and stays tracked until the rule goes or the document is removed with
.Nm Cm rm .
Symlinks in the tree are never followed, and a document copied to a second file
(here, or with plain git on a git remote) is two documents: the copy gets a new
.Li refId .
A file rewritten without ids at a tracked path is a new version of that document.
.It Pa .docsync/config
Settings (JSON).
.It Pa .docsync/state
The checkpoint: pending actions, the remote cursor and the name of the base file.
If it is missing or damaged every command stops; see
.Cm reset-base .
.It Pa .docsync/base- Ns Ar sha256
The base: the last-synced version of every document, named by its checksum.
It is read only by a run that needs it (a no-op
.Cm status
or
.Cm sync
does not;
.Cm verify
does); if it is missing or damaged such a run stops; see
.Cm reset-base .
.It Pa .docsync/journal
The append-only action journal, one checksummed line per entry.
Only
.Cm gc
rewrites it, keeping the actions not yet on the remote.
.It Pa .docsync/index
The stat cache; safe to delete.
.It Pa .docsync/objects/
Every recorded or fetched version, by SHA-256, loose or (for a batch of more than 16)
in a pack under
.Pa packs/ ;
.Cm gc
removes those nothing refers to.
.It Pa .docsync/conflicts/ Ns Ar refId Ns Pa / Ns Ar changesetId Ns Pa .version. Ns Ar winner Ns Pa .json
A version that lost a conflict, with a
.Pa .meta.json
next to it (older records are named after the losing
.Ar changesetId
alone).
.It Pa .docsync/clock
The last changesetId issued or seen, and the sequence of ids issued in the clock's past.
.It Pa .docsync/reached
When the tree was made: with
.Pa last-sync ,
where the
.Cm sync.maxOfflineDays
clock starts.
.It Pa .docsync/lock
Locked while a command writes to the tree.
.It Pa .docsync/last-sync
Time of the last successful push, pull or sync.
.It Pa .docsync/rejected/
Edits
.Nm Cm edit
refused without a terminal, as
.Ar name Ns Pa \&. Ns Ar time Ns Pa .json
.Po
.Ar time Ns Pa -2 ,
.Pa -3 No ...\& when refused in the same second; one never replaces another
.Pc .
.It Pa .docsync/last-attempt
The last run that exited 75 and why (JSON), shown by
.Nm Cm status
until a later sync succeeds.
.It Pa .docsync/git
Git remotes: a bare repository caching the fetched history.
.It Ar remote Ns Pa /.docsync/
A directory remote's metadata.
In the drive layout:
.Pa format ,
.Pa objects/ ,
.Pa replicas/ Ns Ar id Ns Pa /commits/ Ns Ar n Ns Pa .json
(each replica's pushes, written once),
.Pa replicas/ Ns Ar id Ns Pa /info.json
and
.Pa push.lock
(only ever locked with
.Xr flock 2 ) .
In format 1:
.Pa format ,
.Pa generation ,
.Pa feed
(after
.Cm gc :
.Pa feed- Ns Ar epoch ) ,
.Pa objects/ ,
.Pa tombstones/ ,
.Pa replicas/
and, during a push,
.Pa lock .
.El
.Pp
The formats are described in
.Pa docs/FORMATS.md
and
.Pa docs/REMOTE-LAYOUT.md
of the source distribution.
.Sh EXIT STATUS
.Bl -tag -width Ds
.It 0
Success.
.It 1
An error.
Includes files that are not valid JSON documents (each reported as
.Ql path:line:col: error: reason ;
everything else was processed), a file whose name no remote can hold, a push stopped by
.Cm push.maxDeleteShare ,
tracked documents the scan could not look at (each reported as
.Ql path: error: not looked at (reason) :
under a folder it cannot open or read, a symlink, which is never followed, a folder that
holds a
.Pa .docsync/
of its own, or a path
.Pa .docsyncignore
excludes after it was synced; they stay tracked and are never deleted, and everything else
was processed),
a remote document larger than
.Cm remote.maxDocumentBytes
(named and not pulled; the rest is), a push the server refuses (a hook, a protected branch: its words are printed),
a folder remote this user may not read (permission denied),
a damaged state or journal, and a remote not reached for more than
.Cm sync.maxOfflineDays
(the message says since when).
.It 2
Wrong usage: an unknown option, a missing argument, a remote URL that can never work.
.It 3
.Cm push ,
.Cm pull
or
.Cm sync
(a push reconciles first when the remote moved) completed and conflicts were recorded (a field merge with colliding fields, a whole
version that lost, an edit that beat a deletion), or a conflict record arrived saying
this replica's version lost: each losing version is kept in
.Pa .docsync/conflicts/ ;
see
.Nm Cm conflicts .
A merge without colliding fields is not a conflict.
No other command exits 3.
.It 75
Try again later
.Pq Dv EX_TEMPFAIL :
the remote is unreachable (folder missing, share not mounted) for less than
.Cm sync.maxOfflineDays ,
another
.Nm
run holds this tree, another machine holds the remote's lock, or other replicas kept
pushing during five attempts.
Local changes stay recorded and are sent by the next run.
.El
.Sh SHELL COMPLETION
.Nm
.Fl -generate-completion-script Ar bash|zsh|fish
prints a completion script for that shell (commands, options, file names).
Install it once, and again after an upgrade:
.Bd -literal -offset indent
# bash (with the bash-completion package)
mkdir -p ~/.local/share/bash-completion/completions
docsync --generate-completion-script bash \e
    > ~/.local/share/bash-completion/completions/docsync

# zsh; ~/.zshrc needs, before compinit: fpath=(~/.zfunc $fpath)
mkdir -p ~/.zfunc
docsync --generate-completion-script zsh > ~/.zfunc/_docsync

# fish
mkdir -p ~/.config/fish/completions
docsync --generate-completion-script fish \e
    > ~/.config/fish/completions/docsync.fish
.Ed
.Sh EXAMPLES
Start a tree whose remote is a shared folder, and clone it on another machine:
.Bd -literal -offset indent
docsync init --remote /mnt/share/records ~/records
docsync clone /mnt/share/records ~/records
.Ed
.Pp
Sync every ten minutes from cron, treating
.Dq try again later
as success:
.Bd -literal -offset indent
*/10 * * * * docsync -C ~/records sync --quiet || [ $? -eq 75 ]
.Ed
.Pp
.Pa examples/cron/
(a wrapper that logs every run and prints only conflicts and errors) and
.Pa examples/systemd/
(a user service and timer,
.Ql SuccessExitStatus=75 )
in the source distribution do the same with a log.
.Pp
Or sync as files change, from a login session or the systemd user unit
.Pa examples/systemd/docsync-watch.service :
.Bd -literal -offset indent
docsync -C ~/records watch
.Ed
.Pp
.Cm watch
holds the tree lock only while it syncs, so the cron line above may stay.
It needs one inotify watch per folder of the tree; when
.Pa /proc/sys/fs/inotify/max_user_watches
is too low it exits 1 and says so; raise it with
.Ql sysctl fs.inotify.max_user_watches=524288
(and a file in
.Pa /etc/sysctl.d/
to keep it).
.Pp
See who syncs with the remote, retire a machine that is gone, and let
.Cm gc
purge the deletions it held back:
.Bd -literal -offset indent
docsync replicas
docsync replicas forget old-pc
docsync gc
.Ed
.Sh SEE ALSO
.Xr cron 8 ,
.Xr git 1 ,
.Xr rsync 1 ,
.Xr unison 1
.Pp
.Pa README.md
and
.Pa docs/
in the source distribution: SYNC.md (how reconciliation decides), FORMATS.md,
REMOTE-LAYOUT.md, RECOVERY.md.
EOF
} > "$tmp"

mv "$tmp" "$out"
trap - EXIT
echo "generate-man: wrote $out" >&2
