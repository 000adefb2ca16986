#!/usr/bin/env python3
"""Interleaved A/B of git-kams binaries on the 2000x50 scan (or SIZE's), in each state
a repository can be in when the scan runs. A benchmark, not a test.

SIZE (default 2000x50) picks the inputs: inv_SIZE.json, inv_SIZE_mut.json
and kams_SIZE.lock.

States (MODES, space-separated; default "recap warm first cold"):
  recap  the mutated inventory's first scan right after a scan of the clean
         one: .git/kams is restored to what that scan left before each run
         (the lock's index, the clean inventory's index and memo)
  warm   the mutated inventory's own index and memo are there (the state
         the recap run of the same binary left)
  first  no .git/kams at all: every index and the memo are written
  cold   kams.indexCache=false: nothing read or written

The machine's speed drifts, so the binaries run alternately, each state
in turn, and medians are compared within one run of this script only.
Peak RSS and CPU (user + sys) come from /usr/bin/time (GNU time); wall
time is taken here around it (GNU time rounds to 10 ms), so it includes
starting /usr/bin/time.

Usage, from the repository root, after bench/run.sh made the inputs in
target/bench (inv_2000x50.json, inv_2000x50_mut.json, kams_2000x50.lock, and
the same at 200x50):
    python3 bench/scan_modes.py RUNS BINARY [BINARY ...]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
RUNS = int(sys.argv[1])
BINS = [os.path.abspath(b) for b in sys.argv[2:]]
LABEL = dict(zip(BINS, sys.argv[2:]))
MODES = os.environ.get("MODES", "recap warm first cold").split()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = os.path.join(ROOT, "target", "bench")
SIZE = os.environ.get("SIZE", "2000x50")
CLEAN = os.path.join(INPUTS, f"inv_{SIZE}.json")
MUTATED = os.path.join(INPUTS, f"inv_{SIZE}_mut.json")
LOCK = os.path.join(INPUTS, f"kams_{SIZE}.lock")
ENV = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
for f in (CLEAN, MUTATED, LOCK):
    if not os.path.exists(f):
        sys.exit(f"missing {f}: run bench/run.sh first")


def scan(binary, repo, inventory, env):
    """One scan; (wall s, CPU s, peak RSS MiB). Exit 1: it has findings."""
    start = time.perf_counter()
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%e %U %S %M", binary, "--lock", LOCK,
         "--inventory", inventory, "scan", "--format", "json"],
        cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if p.returncode not in (0, 1):
        sys.exit(f"{binary}: exit {p.returncode}: {p.stderr}")
    _, user, sys_, rss = p.stderr.strip().splitlines()[-1].split()
    return wall, float(user) + float(sys_), int(rss) / 1024


work = tempfile.mkdtemp(prefix="kams-modes-")
try:
    # Per binary: its own repository, and the state a scan of the clean
    # inventory left in it.
    repos, clean_state = {}, {}
    for b in BINS:
        repo = os.path.join(work, f"repo{len(repos)}")
        subprocess.run(["git", "init", "-q", repo], check=True, env=ENV)
        scan(b, repo, CLEAN, ENV)
        clean_state[b] = os.path.join(work, f"kams{len(repos)}")
        shutil.copytree(os.path.join(repo, ".git", "kams"), clean_state[b])
        repos[b] = repo
    results = {}
    for _ in range(RUNS):
        for b in BINS:
            kams = os.path.join(repos[b], ".git", "kams")
            for mode in MODES:
                env = ENV
                if mode in ("recap", "warm") and not os.path.exists(kams):
                    shutil.copytree(clean_state[b], kams)
                if mode == "recap":
                    shutil.rmtree(kams)
                    shutil.copytree(clean_state[b], kams)
                if mode == "warm":
                    scan(b, repos[b], MUTATED, ENV)  # its own index and memo
                if mode == "first":
                    shutil.rmtree(kams, ignore_errors=True)
                if mode == "cold":
                    env = dict(ENV, GIT_CONFIG_PARAMETERS="'kams.indexCache'='false'")
                results.setdefault((mode, b), []).append(scan(b, repos[b], MUTATED, env))
    print("| state | binary | median wall s | median CPU s | median peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for mode in MODES:
        for b in BINS:
            r = results[(mode, b)]
            med = [statistics.median(x[i] for x in r) for i in range(3)]
            print(f"| {mode} | `{LABEL[b]}` | {med[0]:.4f} | {med[1]:.2f} | {med[2]:.1f} |")
finally:
    shutil.rmtree(work)
