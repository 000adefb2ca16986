#!/usr/bin/env python3
"""`git kams status --at REV` against `git show REV:kams.lock`, runs interleaved.

Both take a few milliseconds, where this machine's drift and a thread's
wake-up are of the same size as the difference, so five runs
(bench/history.sh) cannot tell 0.95x from 1.05x. This runs `git show`
and each git-kams binary given, one after the other, N times (default
100, after one warm-up each, which also writes git-kams's index), in the
10,000-commit repository bench/history.sh builds, and prints p10, median
and p90 wall times and each binary's median against `git show`'s. A
benchmark, not a test.

Usage, from the repository root, after bench/history.sh (or bench/all.sh):
    python3 bench/at_vs_show.py BINARY [BINARY ...] [--runs N] [--rev REV]
"""
import os
import statistics as st
import subprocess
import sys
import time

args = sys.argv[1:]
runs, rev = 100, "HEAD~500"
for flag in ("--runs", "--rev"):
    if flag in args:
        i = args.index(flag)
        value = args[i + 1]
        del args[i:i + 2]
        if flag == "--runs":
            runs = int(value)
        else:
            rev = value
if not args:
    sys.exit(__doc__)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = os.path.join(ROOT, "target", "bench", "history", "repo")
if not os.path.isdir(H):
    sys.exit(f"no {H}: run bench/history.sh first")
env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C", TZ="UTC")
commands = [("git show", ["git", "show", f"{rev}:kams.lock"])]
commands += [(b, [os.path.abspath(b), "status", "--at", rev]) for b in args]
times = {label: [] for label, _ in commands}
for i in range(runs + 1):
    for label, cmd in commands:
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=H, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if i > 0:  # run 0 warms the page cache and writes the index
            times[label].append((time.perf_counter() - t0) * 1000)
base = st.median(times["git show"])
print(f"{runs} interleaved runs each, `{rev}`; wall ms")
print("| command | p10 | median | p90 | median vs git show |")
print("|---|---:|---:|---:|---:|")
for label, _ in commands:
    t = sorted(times[label])
    p = lambda q: t[min(len(t) - 1, int(q * len(t)))]
    print(f"| {label} | {p(0.1):.2f} | {st.median(t):.2f} | {p(0.9):.2f} | {st.median(t) / base:.2f}x |")
