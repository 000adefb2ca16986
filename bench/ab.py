#!/usr/bin/env python3
"""A/B of two git-kams binaries on the same inputs, runs interleaved.

The machine this project is measured on is shared and its speed drifts
over the hours, so numbers taken at different times do not compare. This
runs binary A and binary B alternately (one warm-up each, then N timed
runs) on the inputs bench/run.sh and bench/history.sh build, and prints a
markdown table: median wall time, min and max, median CPU (user + sys, from
os.wait4) and the largest peak RSS. A benchmark, not a test.

Usage, from the repository root, after bench/all.sh has built the inputs:
    python3 bench/ab.py OLD_BINARY NEW_BINARY [RUNS]
With COLD=1 in the environment every command runs with
kams.indexCache=false: no index and no memo, the first scan of an input.
"""
import os
import statistics as st
import subprocess
import sys
import tempfile
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
A, B = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
N = int(sys.argv[3]) if len(sys.argv) > 3 else 7
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
R = os.path.join(ROOT, "target", "bench")
H = os.path.join(R, "history", "repo")
env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", TZ="UTC")
if os.environ.get("COLD") == "1":
    env["GIT_CONFIG_PARAMETERS"] = "'kams.indexCache'='false'"
rev = lambda r: subprocess.check_output(["git", "-C", H, "rev-parse", r], text=True, env=env).strip()
push = tempfile.NamedTemporaryFile("w", delete=False)
push.write(f"refs/heads/main {rev('HEAD')} refs/heads/main {rev('HEAD~20')}\n")
push.close()
inv = lambda s: ["--lock", f"kams_{s}.lock", "--inventory", f"inv_{s}_mut.json"]
cases = [
    ("scan 2000x50 --format json", R, None, inv("2000x50") + ["scan", "--format", "json"]),
    ("status 2000x50", R, None, inv("2000x50") + ["status"]),
    ("scan 200x50 --format json", R, None, inv("200x50") + ["scan", "--format", "json"]),
    ("status --at HEAD~500", H, None, ["status", "--at", "HEAD~500"]),
    ("hook pre-push, 20 commits", H, push.name, ["hook", "pre-push", "origin", "file:///dev/null"]),
]
print("| command | binary | median wall s | min–max wall s | median CPU s | peak RSS MiB |")
print("|---|---|---:|---:|---:|---:|")
for label, cwd, stdin, args in cases:
    res = {A: [], B: []}
    for i in range(N + 1):
        for exe in (A, B):
            t0 = time.perf_counter()
            with open(stdin or os.devnull) as inp:
                p = subprocess.Popen([exe] + args, cwd=cwd, env=env, stdin=inp,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                _, _, ru = os.wait4(p.pid, 0)
            if i > 0:  # run 0 warms the page cache
                res[exe].append((time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
    for exe, name in ((A, "A " + sys.argv[1]), (B, "B " + sys.argv[2])):
        w = [r[0] for r in res[exe]]
        c = [r[1] for r in res[exe]]
        m = [r[2] for r in res[exe]]
        print(f"| {label} | {name} | {st.median(w):.4f} | {min(w):.4f}–{max(w):.4f} | {st.median(c):.2f} | {max(m):.1f} |")
os.unlink(push.name)
