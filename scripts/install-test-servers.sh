#!/usr/bin/env bash
# Installs what the git transport tests (Tests/DocSyncKitTests/GitTransportTests.swift)
# need to run their loopback servers: git (git daemon, git http-backend), Debian's
# openssh-server (sshd, ssh-keygen), openssl (the throwaway CA), python3 (the HTTPS
# front end), and the file-sync engines the drive-folder tests run (unison, syncthing).
# Installs only what is missing; safe to run again. Debian/Ubuntu, as root.
set -euo pipefail
need=()
for pkg in git openssh-server openssh-client openssl python3 unison syncthing; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-test-servers: missing ${need[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  # Never start the system's sshd on install: the tests run their own on 127.0.0.1.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && made_policy=1
  fi
  trap 'if [ "$made_policy" -eq 1 ]; then rm -f "$policy"; fi' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# sshd's privilege separation folder (normally made by its service unit).
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
  mkdir -p /run/sshd && chmod 0755 /run/sshd
fi
