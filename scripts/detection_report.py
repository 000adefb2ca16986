#!/usr/bin/env python3
"""Recall and false positives of git-kams' detectors on the shared corpus.

Recall: of every `expectedFindings` entry of ../shared/corpus/attacks/*.json,
how many are matched by a finding of the same tool at or under the expected
JSON pointer (rug pulls: the first load is recorded, the second scanned).
False positives: benign tools of ../shared/corpus/real/*.json (and the
negative control) with any poison, hidden or squat finding, by severity.

  scripts/detection_report.py [--bin target/debug/git-kams] [--corpus ../shared/corpus]
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def scan(binary, inventories, lock):
    cmd = [binary, "--lock", lock, "--format", "json"]
    for i in inventories:
        cmd += ["--inventory", i]
    out = subprocess.run(cmd + ["scan"], capture_output=True, env=dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null"))
    if out.returncode not in (0, 1):
        sys.exit(f"{inventories}: exit {out.returncode}: {out.stderr.decode()}")
    return json.loads(out.stdout)["findings"]


def matches(f, tool, pointer):
    same = f["tool"] is None if tool is None else f["tool"] == tool
    field = f["field"] or ""
    return same and (field == pointer or field.startswith(pointer + "/"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/git-kams")
    ap.add_argument("--corpus", default="../shared/corpus")
    args = ap.parse_args()
    attacks = os.path.join(args.corpus, "attacks")
    total = found = 0
    print("## Recall on attacks/\n")
    print("| file | expected | matched | missed |")
    print("|---|---:|---:|---|")
    for name in sorted(os.listdir(attacks)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(attacks, name)
        expected = json.load(open(path)).get("expectedFindings", [])
        with tempfile.TemporaryDirectory() as d:
            lock = os.path.join(d, "k.lock")
            if "@2-" in name:
                first = path.replace("@2-second-load", "@1-first-load")
                subprocess.run([args.bin, "--lock", lock, "--inventory", first, "record"], check=True, capture_output=True)
            findings = scan(args.bin, [path], lock)
        missed = []
        for e in expected:
            tool = None if e["tool"] == "(server)" else e["tool"]
            if any(matches(f, tool, e["pointer"]) for f in findings):
                found += 1
            else:
                missed.append(f'{e["tool"]} {e["pointer"]}')
            total += 1
        print(f"| {name} | {len(expected)} | {len(expected) - len(missed)} | {'; '.join(missed)} |")
    print(f"\nRecall: {found} of {total} expected findings.\n")

    print("## False positives on real/ (benign) and the negative control\n")
    real = os.path.join(args.corpus, "real")
    files = sorted(os.path.join(real, n) for n in os.listdir(real) if n.endswith(".json"))
    files.append(os.path.join(attacks, "cyberark-atpa-clean-descriptors.json"))
    by_sev = collections.Counter()
    tools_by_sev = collections.defaultdict(set)
    tools = 0
    for path in files:
        tools += len(json.load(open(path))["tools"])
        with tempfile.TemporaryDirectory() as d:
            for f in scan(args.bin, [path], os.path.join(d, "k.lock")):
                if f["class"] in ("poison", "hidden", "squat"):
                    by_sev[f["severity"]] += 1
                    tools_by_sev[f["severity"]].add((os.path.basename(path), f["tool"]))
    print(f"{len(files)} files, {tools} tools.\n")
    print("| severity | findings | tools |")
    print("|---|---:|---:|")
    for sev in ("critical", "high", "medium", "low", "info"):
        print(f"| {sev} | {by_sev[sev]} | {len(tools_by_sev[sev])} |")
    for sev in ("critical", "high", "medium"):
        for file, tool in sorted(tools_by_sev[sev]):
            print(f"- {sev}: {file} {tool}")


if __name__ == "__main__":
    main()
