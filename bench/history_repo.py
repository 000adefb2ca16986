#!/usr/bin/env python3
"""Builds the history benchmark repository of issue #3: 10,000 commits of
which 2,000 change one entry of a 2,000-entry kams.lock.

The first lock is written by git-kams itself (pin of a generated 40 x 50
inventory); each later version re-pins one tool with a new description,
editing that entry's lines and recomputing its digests here exactly as
git-kams does (RFC 8785 over ASCII strings is json.dumps with sorted keys
and no spaces). The commits are streamed into `git fast-import`.

With --merges, lock changes come in pairs through merges, as pull
requests do: from the tip of main, one change is committed on a side
branch and the other on main, and main then merges the side branch (the
merge holds both). Half the lock's versions are then on side branches,
and blame must choose between two parents at each merge.

  bench/history_repo.py --git-kams target/release/git-kams --out DIR [--merges]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys

EPOCH = 1767225600


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def jcs(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--git-kams", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commits", type=int, default=10000)
    ap.add_argument("--lock-commits", type=int, default=2000)
    ap.add_argument("--merges", action="store_true")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    inv = os.path.join(args.out, "inventory.json")
    servers = [
        {
            "name": f"srv-{s:02d}",
            "transport": "stdio",
            "tools": [{"name": f"tool_{t:02d}", "description": f"Does thing {t} of server {s}."} for t in range(50)],
        }
        for s in range(40)
    ]
    with open(inv, "w") as f:
        json.dump({"servers": servers}, f)
    lock_path = os.path.join(args.out, "first.lock")
    if os.path.exists(lock_path):
        os.remove(lock_path)
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH))
    subprocess.run(
        [args.git_kams, "--lock", lock_path, "--inventory", inv, "pin", "--no-commit", "-m", "first review",
         "--approver", "Ann Approver <ann@example.com>"],
        check=True, env=env, stdout=subprocess.DEVNULL,
    )
    lines = open(lock_path).read().split("\n")

    # Where each tool block starts: `        "tool_NN": {` under its server.
    blocks = []
    server = None
    for i, line in enumerate(lines):
        if line.startswith('    "srv-'):
            server = line.strip().split('"')[1]
        elif line.startswith('        "tool_') and line.endswith("{"):
            blocks.append((server, line.strip().split('"')[1], i))
    assert len(blocks) == 2000, len(blocks)

    def set_value(lines: list[str], i: int, key: str, value: str) -> None:
        line = lines[i]
        assert line.strip().startswith(f'"{key}": '), (i, key, line)
        indent = line[: len(line) - len(line.lstrip())]
        comma = "," if line.endswith(",") else ""
        lines[i] = f'{indent}"{key}": {json.dumps(value)}{comma}'

    def approve(lines: list[str], version: int) -> str:
        """Re-pins one tool in `lines` as lock version `version` does;
        returns the commit message."""
        server, tool, at = blocks[(version - 1) % len(blocks)]
        desc = f"Does thing {tool[5:]} of {server}, revision {version}."
        final[(server, tool)] = desc
        stamp = f"2026-01-{1 + (version // 100) % 28:02d}T00:00:00Z"
        set_value(lines, at + 1, "state", "pinned")
        set_value(lines, at + 2, "digest", sha('{"description":' + jcs(desc) + ',"name":' + jcs(tool) + "}"))
        set_value(lines, at + 4, "description", sha(jcs(desc)))
        who = ["Ann Approver <ann@example.com>", "Bob Builder <bob@example.com>"][version % 2]
        set_value(lines, at + 9, "approver", who)
        set_value(lines, at + 10, "at", stamp)
        set_value(lines, at + 11, "note", f"revision {version}")
        set_value(lines, at + 14, "description", desc)
        return f"kams: approve {server}/{tool}\n\nrevision {version}\n\nSigned-off-by: {who}\n"

    repo = os.path.join(args.out, "repo")
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    fi = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    out = fi.stdin
    every = args.commits // args.lock_commits
    final = {}
    lock_version = 0
    mark = 0

    def commit(ref: str, when: int, message: str, path: str, data: bytes, parents=()) -> int:
        """Writes one commit; returns its mark."""
        nonlocal mark
        mark += 1
        msg = message.encode()
        out.write(f"commit {ref}\nmark :{mark}\n".encode())
        out.write(f"committer Dev <dev@example.com> {when} +0000\n".encode())
        out.write(f"data {len(msg)}\n".encode() + msg)
        for i, parent in enumerate(parents):
            out.write(f"{'from' if i == 0 else 'merge'} :{parent}\n".encode())
        out.write(f"M 100644 inline {path}\n".encode())
        out.write(f"data {len(data)}\n".encode() + data + b"\n")
        return mark

    tip = None
    for k in range(1, args.commits + 1):
        when = EPOCH + 60 * k
        lock_step = k == 1 or k % every == 0
        if args.merges and lock_step and k != 1:
            if (k // every) % 2 == 0:
                # A pull request's change beside one made on main, then merged.
                base = lines[:]
                side_msg = approve(base, lock_version + 1)
                side = commit("refs/heads/side", when - 40, side_msg, "kams.lock", "\n".join(base).encode(), [tip])
                main_msg = approve(lines, lock_version + 2)
                main = commit("refs/heads/main", when - 20, main_msg, "kams.lock", "\n".join(lines).encode(), [tip])
                approve(lines, lock_version + 1)
                lock_version += 2
                tip = commit("refs/heads/main", when, f"Merge branch 'pr-{k}'\n", "kams.lock",
                             "\n".join(lines).encode(), [main, side])
                continue
            # The odd steps: their changes came with the merges.
            lock_step = False
        if lock_step:
            if k != 1:
                lock_version += 1
                subject = approve(lines, lock_version)
            else:
                subject = "kams: first review\n\nSigned-off-by: Ann Approver <ann@example.com>\n"
                # The committed inventory, so that the hooks check the tip too.
                inv_bytes = open(inv, "rb").read()
                tip = commit("refs/heads/main", when - 30, "inventory\n", ".kams/inventory/inventory.json", inv_bytes)
            data = "\n".join(lines).encode()
            path = "kams.lock"
        else:
            subject = f"work {k}\n"
            data = f"work item {k}\n".encode()
            path = "work.txt"
        tip = commit("refs/heads/main", when, subject, path, data, [tip])
    # Last, the inventory as the lock now approves it, so the tip is clean.
    for srv in servers:
        for t in srv["tools"]:
            t["description"] = final.get((srv["name"], t["name"]), t["description"])
    inv_bytes = json.dumps({"servers": servers}).encode()
    commit("refs/heads/main", EPOCH + 60 * (args.commits + 1), "inventory, final\n",
           ".kams/inventory/inventory.json", inv_bytes, [tip])
    out.close()
    if fi.wait() != 0:
        return 1
    subprocess.run(["git", "-C", repo, "checkout", "-q", "-f", "main"], check=True)
    subprocess.run(["git", "-C", repo, "gc", "-q"], check=True)
    subprocess.run(["git", "-C", repo, "commit-graph", "write", "--reachable"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
