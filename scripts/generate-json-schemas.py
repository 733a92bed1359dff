#!/usr/bin/env python3
"""Writes docs/schemas/*.schema.json, the JSON Schemas (draft 2020-12) of docsync's --json
outputs (docs/JSON.md). Edit the shapes here and run it; the CLI test JSONSchemaTests
validates real output against the files. Usage: scripts/generate-json-schemas.py"""
import json, os
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "schemas"))
BASE = "https://github.com/docsync/docsync/docs/schemas/"
S = lambda: {"type": "string"}
I = lambda: {"type": "integer", "minimum": 0}
B = lambda: {"type": "boolean"}
NS = lambda: {"type": ["string", "null"]}
A = lambda item: {"type": "array", "items": item}
TIME = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
        "description": "RFC 3339, UTC, whole seconds"}
def obj(props, required=None, desc=None):
    o = {"type": "object", "properties": props, "required": sorted(required if required is not None else props.keys()),
         "additionalProperties": False}
    if desc: o["description"] = desc
    return o
def ref(name): return {"$ref": "#/$defs/" + name}

DEFS = {
  "time": TIME,
  "change": obj({"kind": {"enum": ["create", "update", "rename", "delete", "restore", "resolve"]}, "path": S(), "refId": S(),
                 "changesetId": S(), "fromPath": S(), "note": S()}, ["kind", "path", "refId"],
                "One document change. fromPath: where a renamed document was; note (status only): why it is listed so."),
  "conflictSummary": obj({"refId": S(), "path": S(), "kept": S(), "keptChangesetId": S(), "stored": S(), "storedChangesetId": S(),
                          "file": S(), "fields": A(S()), "recordedBy": S()},
                         ["refId", "path", "kept", "keptChangesetId", "stored", "storedChangesetId"],
                         "A conflict this run recorded (or heard of: recordedBy names the replica)."),
  "conflictRecord": obj({"refId": S(), "changesetId": S(), "path": S(), "side": {"enum": ["local", "remote"]}, "winner": S(),
                         "time": ref("time"), "name": S(), "file": S(), "policy": {"enum": ["merge", "lww", "local", "remote", "manual"]},
                         "fields": A(S()), "resolved": ref("time"), "deleted": B(), "replica": S(), "lostBy": S(), "reason": S(),
                         "take": S(), "resolvedBy": S(), "shared": B(), "storedSide": {"enum": ["local", "remote"]}, "keptBy": S()},
                        ["refId", "changesetId", "path", "side", "winner", "time", "storedSide"],
                        "A stored losing version (or deletion) in .docsync/conflicts/. side is the recording replica's view; storedSide this replica's (local: the stored version or deletion was made here); lostBy made the stored version, keptBy the kept one; name: the record's name in the store (a lost version's: <losing changesetId>.version.<winner>; absent in older records, named after the losing changesetId)."),
  "logEntry": obj({"seq": I(), "kind": {"enum": ["create", "update", "rename", "delete", "done", "apply", "seen", "held", "conflict", "cursor", "resolve"]},
                   "time": ref("time"), "refId": S(), "changesetId": S(), "hash": S(), "path": S(), "fromPath": S(), "fromHash": S(),
                   "deleted": B(), "seqs": A(I()), "reason": S(), "cursor": S(), "replica": S(), "replicaName": S(), "pending": B(),
                   "mintedId": B(), "movedAt": I(), "deletedHash": S(), "madeFrom": A(S())},
                  ["seq", "kind", "time"], "One journal entry (docs/FORMATS.md); pending only on local actions. mintedId: a create whose refId docsync gave; movedAt: when a rename's file moved (ms); deletedHash: the version a held deletion deleted; madeFrom: published versions the content carries beyond its base."),
  "remoteVersion": obj({"id": S(), "changesetId": S(), "time": ref("time"), "author": S(), "authorName": S(), "path": S(), "hash": S(), "deleted": B()},
                       ["id", "changesetId", "time", "author", "deleted"]),
  "refusedPush": obj({"count": I(), "total": I(), "maxDeleteShare": {"type": "number"}, "deletions": A(ref("change")), "restoreCommand": S()},
                     desc="The max-delete guard stopped the push: nothing was sent (exit 1). restoreCommand brings every deletion back."),
  "restored": obj({"refId": S(), "path": S(), "version": S(), "source": {"enum": ["journal", "remote"]}, "changesetId": S()},
                  ["refId", "path", "version", "source"], "A document restore brought back: the version, where it was found, and the changesetId it carries now (absent in a dry run)."),
  "replica": obj({"id": S(), "name": S(), "lastSync": ref("time"), "seen": S(), "version": S(), "holdsBackTombstones": I(),
                   "holdsBackPurge": B(), "self": B()}, ["id", "name", "self"],
                  "A replica the remote knows; self: this tree. holdsBack…: absent in forget."),
  "purged": obj({"refId": S(), "path": S(), "changesetId": S(), "deletedBy": S(), "time": ref("time"), "reason": S()},
                ["refId", "changesetId", "deletedBy", "time", "reason"]),
}

def envelope(command, props, required=None, defs=(), desc=""):
    p = {"schemaVersion": {"const": 1}}
    if command is not None:
        p["command"] = {"const": command} if isinstance(command, str) else {"enum": command}
    p.update(props)
    req = ["schemaVersion"] + (["command"] if command is not None else []) + (list(props.keys()) if required is None else required)
    s = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": desc.split(".")[0], "description": desc}
    s.update(obj(p, req))
    # Only the definitions this schema uses, and the ones they use.
    need, todo = {}, list(defs)
    while todo:
        d = todo.pop()
        if d in need: continue
        need[d] = DEFS[d]
        text = json.dumps(DEFS[d])
        todo += [k for k in DEFS if '"#/$defs/' + k + '"' in text]
    if need: s["$defs"] = {k: need[k] for k in sorted(need)}
    return s

syncProps = {"dryRun": B(), "recorded": A(ref("change")), "pulled": A(ref("change")), "pushed": A(ref("change")),
             "conflicts": A(ref("conflictSummary")), "notices": A(S()), "problems": A(S()), "invalidFiles": A(S()), "warnings": A(S()),
             "waiting": A(S()), "pendingAfter": I(), "remoteUnreachable": S(), "refusedPush": ref("refusedPush"), "restored": A(ref("restored")),
             "reverted": A(ref("change")), "overridden": A(ref("change")),
             "notApplied": dict(A(ref("change")), description="present on a send-only replica (sync.mode): every remote change held aside after the run, unapplied (what applying it would do to the tree)"),
             "syncMode": {"enum": ["receive-only", "send-only"], "description": "present on a receive-only replica (sync.mode: the run only pulled; pendingAfter counts documents whose changes stay here) and on a send-only one (remote changes are held aside, see notApplied)"},
             "leftSelection": dict(A(S()), description="present on a sparse replica when documents left its selection: their files, removed here (still on the remote)")}
syncReq = [k for k in syncProps if k not in ("remoteUnreachable", "refusedPush", "restored", "reverted", "overridden", "notApplied", "syncMode", "leftSelection")]
SELECTION = {"oneOf": [{"type": "null"}, A(S())], "description": "the selection patterns (null: the replica keeps everything)"}
remoteObj = obj({"url": S(), "kind": {"enum": ["dir", "git"]}, "branch": NS(), "created": B()}, ["url", "kind", "branch"])
treeProps = {"root": S(), "replicaId": S(), "replicaName": S()}

schemas = {
  "init": envelope("init", dict(treeProps, remote={"oneOf": [{"type": "null"}, remoteObj]}), defs=[],
                   desc="docsync init --json. The tree made, and the remote it created (created: true) or joined."),
  "clone": envelope("clone", dict(syncProps, **treeProps, remote=remoteObj, documents=I()), syncReq + list(treeProps) + ["remote", "documents"],
                    defs=["change", "conflictSummary", "refusedPush", "restored"], desc="docsync clone --json. The sync report of the first pull, the tree made and the remote joined; documents: how many were pulled."),
  "sync-report": envelope(["push", "pull", "sync", "rm", "restore", "revert", "override", "resolve", "reset-base"], syncProps, syncReq, defs=["change", "conflictSummary", "refusedPush", "restored"],
                          desc="docsync push|pull|sync|rm|restore|revert|override|resolve|reset-base --json. What the run did (with --dry-run: would do); reverted (revert): the local changes it undid; overridden (override): what it sent over the remote changes held aside."),
  "status": envelope("status", {"root": S(), "replicaId": S(), "replicaName": S(), "remote": S(), "lastSync": {"oneOf": [{"type": "null"}, ref("time")]},
                                "pending": A(ref("change")), "unrecorded": A(ref("change")), "conflicts": A(ref("conflictRecord")),
                                "waiting": A(S()), "problems": A(S()), "invalidFiles": A(S()), "warnings": A(S()),
                                "lastAttempt": obj({"time": ref("time"), "command": S(), "reason": S()}, desc="The last run that gave up for now (exit 75), and why."),
                                "syncMode": {"enum": ["both", "receive-only", "send-only"], "description": "sync.mode; on a receive-only replica pending changes are never sent, on a send-only one the remote's changes are never applied (notApplied)"},
                                "notApplied": dict(A(ref("change")), description="on a send-only replica, the remote changes held aside, unapplied (what applying each would do to the tree); a pending change of one of these documents waits for docsync override"),
                                "selection": dict(A(S()), description="present on a sparse replica: its selection patterns (docsync sparse)"),
                                "outsideSelection": dict(A(S()), description="a sparse replica's files outside its selection that hold no document it keeps: never recorded or synced")},
                     ["root", "replicaId", "replicaName", "lastSync", "pending", "unrecorded", "conflicts", "waiting", "problems", "invalidFiles", "warnings", "syncMode", "notApplied", "outsideSelection"],
                     defs=["change", "conflictRecord"], desc="docsync status --json. Pending, unrecorded and conflicting changes, and the last sync."),
  "sparse": envelope("sparse", dict(syncProps, selection=SELECTION), syncReq + ["selection"], defs=["change", "conflictSummary", "refusedPush", "restored"],
                     desc="docsync sparse set|add|remove|reapply|disable --json. What recording, removing the documents that left the selection and (when it widened) the pull of the new part did; selection: the selection now."),
  "sparse-list": envelope("sparse list", {"selection": SELECTION}, defs=[], desc="docsync sparse list --json. The selection."),
  "log": envelope("log", {"entries": A(ref("logEntry"))}, defs=["logEntry"], desc="docsync log --json. Journal entries, oldest first."),
  "log-document": envelope("log", {"refId": S(), "path": NS(), "local": A(ref("logEntry")), "remote": A(ref("remoteVersion")), "remoteError": NS()},
                           defs=["logEntry", "remoteVersion"], desc="docsync log DOC --json. One document's journal entries and the remote's versions of it (newest first)."),
  "conflicts": envelope("conflicts", {"conflicts": A(ref("conflictRecord"))}, defs=["conflictRecord"], desc="docsync conflicts --json. Open conflicts (with --all, resolved ones too)."),
  "verify": envelope("verify", {"ok": B(), "remoteChecked": B(), "problems": A(S())}, desc="docsync verify --json. Every problem found; ok when there is none."),
  "gc": envelope("gc", {"dryRun": B(), "journalEntriesDropped": I(), "pendingKept": I(), "journalBytesBefore": I(), "journalBytesAfter": I(),
                        "objectsRemoved": I(), "objectBytesFreed": I(), "temporaryFilesRemoved": I(), "bytesFreed": {"type": "integer"}, "warnings": A(S()),
                        "remote": {"oneOf": [{"type": "null"}, obj({"purged": A(ref("purged")), "kept": I(), "replicas": A(S()), "feedBytesBefore": I(),
                                                                    "feedBytesAfter": I(), "commit": S(), "cursorBefore": S(), "cursorAfter": S(),
                                                                    "heldBack": {"type": "object", "additionalProperties": I(), "description": "replica id: tombstones kept because it has not seen them"}},
                                                                   ["purged", "kept", "replicas"])]},
                        "remoteUnreachable": S(),
                        "gitCache": {"description": "A git remote's cache repository (.docsync/git) put into one pack; null for a folder remote.",
                                     "oneOf": [{"type": "null"}, obj({"packsBefore": I(), "looseObjectsBefore": I(), "objectsPacked": I()},
                                                                    ["looseObjectsBefore", "objectsPacked", "packsBefore"])]}},
                 ["dryRun", "journalEntriesDropped", "pendingKept", "journalBytesBefore", "journalBytesAfter", "objectsRemoved", "objectBytesFreed",
                  "temporaryFilesRemoved", "bytesFreed", "warnings", "remote", "gitCache"], defs=["purged"], desc="docsync gc --json. What was freed locally and purged on the remote (with --dry-run: would be)."),
  "config": envelope("config", {"key": S(), "value": NS(), "default": NS(), "remoteChanged": B()}, ["key", "value", "default"],
                     desc="docsync config KEY [VALUE] --json. The key's value in this tree (null: not set) and its default; remoteChanged after setting a remote key: true when it named another remote (--reset-base) and the base was reset."),
  "config-list": envelope("config", {"values": {"type": "object", "additionalProperties": S()}}, desc="docsync config --list --json. Every key set in this tree."),
  "edit": envelope("edit", {"path": S(), "refId": S(), "changesetId": NS(), "outcome": {"enum": ["updated", "unchanged", "rejected"]},
                            "rejectedCopy": S(), "problem": S()}, ["path", "refId", "outcome"],
                   desc="docsync edit DOC --json. What the edit did; a rejected edit (exit 1) names where the refused text was kept and why."),
  "new": envelope("new", {"path": S(), "refId": S(), "changesetId": NS(), "outcome": {"const": "created"}, "rejectedCopy": S(), "problem": S()},
                  ["path", "refId", "changesetId", "outcome"], desc="docsync new PATH --json. The record created, with its ids."),
  "replicas": envelope("replicas", {"remote": S(), "replicas": A(ref("replica"))}, defs=["replica"],
                       desc="docsync replicas --json. Every replica the remote knows, with when it last synced and what it holds back."),
  "replicas-forget": envelope("replicas forget", {"forgotten": ref("replica"), "dryRun": B()}, defs=["replica"],
                              desc="docsync replicas forget NAME --json. The replica retired (with --dry-run: that would be)."),
  "watch": envelope("watch", {"event": {"enum": ["watching", "sync", "stopped"]}, "time": ref("time"),
                              "root": S(), "folders": I(), "debounceMs": I(), "pullSeconds": {"type": "number"}, "signal": {"enum": ["SIGINT", "SIGTERM"]},
                              "trigger": {"enum": ["start", "edit", "pull", "retry", "overflow", "remote"]}, "exitCode": {"type": "integer"}, "meaning": S(),
                              "recorded": I(), "pulled": I(), "pushed": I(), "conflicts": I(), "problems": A(S()), "pendingAfter": I(),
                              "message": S(), "retryInSeconds": I()},
                    ["event", "time"], defs=["time"],
                    desc="docsync watch --json. One object per line: event watching (root, folders, debounceMs, pullSeconds) first, "
                         "then sync (trigger, exitCode: what docsync sync would exit with, meaning, counts, message, retryInSeconds) per sync logged, "
                         "and stopped (signal) last."),
  "check": envelope("check", {"tree": NS(), "checked": I(), "withSchema": I(), "invalid": I(),
                              "problems": A(obj({"path": S(), "line": I(), "column": I(), "pointer": S(), "reason": S()}, ["path", "reason"],
                                                "One problem: line and column for invalid JSON, pointer (RFC 6901, \"\" for the record) for a schema error.")),
                              "notes": A(S())}, ["tree", "checked", "withSchema", "invalid", "problems", "notes"],
                    desc="docsync check --json. Every problem of the records checked (exit 1 if any); tree: the docsync tree they are in, null outside one."),
  "diff": envelope("diff", {"documents": A(obj({"path": S(), "refId": NS(), "against": S(), "againstChangesetId": S(), "note": S(),
                                                 "changes": A(obj({"pointer": S(), "kind": {"enum": ["added", "removed", "changed"]}, "old": S(), "new": S()},
                                                                  ["pointer", "kind"], "One change: its JSON pointer, and the old and new value as compact JSON (absent where there is none)."))},
                                                ["path", "against", "changes"]))},
                   desc="docsync diff --json. Per document: what it was compared with (base, remote, a changesetId, or a file) and every change by JSON pointer."),
  "blame": envelope("blame", {"path": S(), "refId": S(), "versions": I(), "remoteError": S(),
                             "fields": A(obj({"pointer": S(), "value": S(), "changesetId": S(), "replica": S(), "time": ref("time")},
                                             desc="One field: its JSON pointer, its value now (compact JSON), and the version that set it."))},
                    ["path", "refId", "versions", "fields"], defs=["time"],
                    desc="docsync blame DOC --json. Per field of the record, the changesetId, replica id and time of the version that last set it."),
  "merge-driver": envelope("merge-driver", {"path": S(), "merged": B(), "winner": {"enum": ["ours", "theirs"]}, "why": S(),
                                            "collisions": A(obj({"pointer": S(), "ours": S(), "theirs": S(), "kept": {"enum": ["ours", "theirs"]}}, ["pointer", "kept"],
                                                                "A field changed on both sides: its JSON pointer, each side's value (compact JSON; absent: removed) and which was kept."))},
                           desc="docsync merge-driver --json. Whether the file merged cleanly (exit 0) or git should mark it unmerged (exit 1), and every collision."),
  "git-setup": envelope("git-setup", {"repository": S(), "attributesFile": S(), "attributesAdded": B(), "driver": S()},
                        desc="docsync git-setup --json. The repository set up, its .gitattributes and whether the line was added, and the driver command configured."),
  "error": envelope(None, {"error": obj({"code": S(), "message": S(), "exitCode": {"type": "integer"}})},
                    desc="Any command with --json that fails before it has a report: the error, on stdout, with the same exit code."),
}
for name, s in schemas.items():
    s = {"$schema": s.pop("$schema"), "$id": BASE + name + ".schema.json", **s}
    with open(name + ".schema.json", "w") as f:
        json.dump(s, f, indent=2); f.write("\n")
print(sorted(schemas))
