#!/usr/bin/env bash
# Two replicas ("laptop" and "desktop") of the sample data set in examples/data, synced
# through a repository on a git host (GitHub, GitLab, Gitea, …) over https, with a token.
#
#   DOCSYNC_GIT_TOKEN=… ./examples/git-over-https.sh https://github.com/me/records.git
#   (DOCSYNC=/path/to/docsync to pick the binary, WORK=DIR to work in, and keep, DIR)
#
# Before running it:
# - on the host, an empty repository (no README), and a token that may push to it
#   (GitHub: a fine-grained personal access token with "Contents: read and write");
# - the token in DOCSYNC_GIT_TOKEN (and the user name in DOCSYNC_GIT_USER if the host
#   wants one). docsync reads it from the environment on every run and never stores,
#   prints or logs it; without it, docsync asks `git credential fill` (your credential
#   helper). A private server's CA: `docsync config remote.caFile FILE`, or SSL_CERT_FILE.
set -euo pipefail

url=${1:?usage: DOCSYNC_GIT_TOKEN=TOKEN git-over-https.sh HTTPS-URL-OF-AN-EMPTY-REPOSITORY}
: "${DOCSYNC_GIT_TOKEN:?set DOCSYNC_GIT_TOKEN to a token that may push to $url}"
DOCSYNC=${DOCSYNC:-docsync}
data="$(cd "$(dirname "$0")" && pwd)/data"
if [[ -n ${WORK:-} ]]; then
  mkdir -p "$WORK"
  work=$(cd "$WORK" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/docsync-https.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

run() { printf '$ %s\n' "$1"; eval "$1"; }
ds() { printf '$ docsync %s\n' "$*"; "$DOCSYNC" "$@"; }

echo "== laptop: the sample data, pushed to the repository (one commit)"
cp -R "$data" laptop
ds init --name laptop --remote "$url" laptop
ds -C laptop sync

echo "== desktop: a clone; it edits a contact with sed and syncs"
ds clone --name desktop "$url" desktop
run "sed -i 's/grace@example.org/grace.hopper@example.org/' desktop/contacts/grace-hopper.json"
ds -C desktop sync

echo "== laptop gets the edit"
ds -C laptop sync
run "grep '\"email\"' laptop/contacts/grace-hopper.json"

echo "== the token never lands in the tree's files"
if grep -rqF -- "$DOCSYNC_GIT_TOKEN" laptop desktop; then
  echo "git-over-https: the token was written to a file" >&2
  exit 1
fi
echo "(not in laptop/ or desktop/, .docsync/ included)"
