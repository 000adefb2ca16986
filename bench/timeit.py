#!/usr/bin/env python3
"""Times one command: median wall time over RUNS runs (after one warm-up)
and the peak RSS of the largest run (wait4). Prints one tab-separated line:
label, median seconds, min, max, peak RSS MiB, exit status.

  bench/timeit.py LABEL [--runs N] [--stdin FILE] -- COMMAND...
"""

import os
import statistics
import subprocess
import sys
import time


def run_once(cmd, stdin_path):
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main():
    args = sys.argv[1:]
    label = args.pop(0)
    runs, stdin_path = 7, None
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--runs":
            runs = int(args.pop(0))
        elif flag == "--stdin":
            stdin_path = args.pop(0)
    cmd = args[1:]
    run_once(cmd, stdin_path)
    results = [run_once(cmd, stdin_path) for _ in range(runs)]
    walls = [r[0] for r in results]
    print(f"{label}\t{statistics.median(walls):.4f}\t{min(walls):.4f}\t{max(walls):.4f}\t{max(r[1] for r in results):.1f}\t{results[-1][2]}")


if __name__ == "__main__":
    main()
