#!/usr/bin/env python3
"""Recall and false positives of git-kams' detectors on every data set, per
severity and per poison signal.

Data sets:
  - the poison evaluation sets of eval/poison/ (dev.jsonl, heldout.jsonl):
    each case is one server, scanned alone; a poison case counts as found
    at a severity when any poison, hidden, squat or shadow finding of it is
    at that severity or above; a benign case is a false positive when one
    is at high or above (and is counted at medium too);
  - the real servers: ../shared/corpus/real/, ../shared/corpus/benign/ and
    corpus/benign-extra/, one file at a time: every tool with a poison,
    hidden or squat finding is counted by its worst severity.

Server names with `/` (a package name, as corpus/benign has them) are
scanned under the name with `/` replaced by `__`: scan refuses `/` in a
server name, which separates server and tool.

  scripts/detection_eval.py [--bin target/debug/git-kams] [--corpus ../shared/corpus]
                            [--sets dev,heldout] [--misses dev] [--json]
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

ORDER = ["info", "low", "medium", "high", "critical"]
COUNTED = ("poison", "hidden", "squat", "shadow")
REAL_COUNTED = ("poison", "hidden", "squat")


def rank(sev):
    return ORDER.index(sev) if sev else -1


def scan(binary, doc):
    """Scans one inventory document (a dict) against an empty lock."""
    with tempfile.TemporaryDirectory() as d:
        inv = os.path.join(d, "inventory.json")
        with open(inv, "w") as f:
            json.dump(doc, f)
        cmd = [binary, "--lock", os.path.join(d, "k.lock"), "--inventory", inv,
               "--format", "json", "scan", "--fail-on", "never"]
        out = subprocess.run(cmd, capture_output=True,
                             env=dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null"))
    if out.returncode != 0:
        sys.exit(f"{doc.get('server')}: exit {out.returncode}: {out.stderr.decode()}")
    return json.loads(out.stdout)["findings"]


def signals(finding):
    if finding["class"] != "poison":
        return {finding["class"]}
    return {e.split(" +")[0] for e in finding["evidence"] if re.match(r"^[a-z-]+ \+\d", e)}


def case_doc(case):
    doc = {"server": case["server"], "tools": case["tools"]}
    if case.get("instructions"):
        doc["instructions"] = case["instructions"]
    return doc


def eval_set(binary, path):
    cases = [json.loads(line) for line in open(path) if line.strip()]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda c: scan(binary, case_doc(c)), cases))
    rows = []
    for case, findings in zip(cases, results):
        counted = [f for f in findings if f["class"] in COUNTED]
        worst = max((f["severity"] for f in counted), key=rank, default=None)
        sigs = set().union(*(signals(f) for f in counted)) if counted else set()
        rows.append({"case": case, "worst": worst, "signals": sigs, "findings": counted})
    return rows


def pct(a, b):
    return f"{100 * a / b:.1f} %" if b else "n/a"


def report_set(name, rows, misses):
    poison = [r for r in rows if r["case"]["label"] == "poison"]
    benign = [r for r in rows if r["case"]["label"] == "benign"]
    med = sum(rank(r["worst"]) >= rank("medium") for r in poison)
    high = sum(rank(r["worst"]) >= rank("high") for r in poison)
    fp_high = sum(rank(r["worst"]) >= rank("high") for r in benign)
    fp_med = sum(rank(r["worst"]) >= rank("medium") for r in benign)
    print(f"### {name}: {len(poison)} poison, {len(benign)} benign cases\n")
    print("| measure | count | share |")
    print("|---|---:|---:|")
    print(f"| poison found at medium or above | {med} of {len(poison)} | {pct(med, len(poison))} |")
    print(f"| poison found at high or above | {high} of {len(poison)} | {pct(high, len(poison))} |")
    print(f"| benign at high or above (false positive) | {fp_high} of {len(benign)} | {pct(fp_high, len(benign))} |")
    print(f"| benign at medium or above | {fp_med} of {len(benign)} | {pct(fp_med, len(benign))} |")
    print()
    by_shape = collections.defaultdict(lambda: [0, 0, 0])
    for r in poison:
        s = by_shape[r["case"]["shape"]]
        s[0] += 1
        s[1] += rank(r["worst"]) >= rank("medium")
        s[2] += rank(r["worst"]) >= rank("high")
    print("| poison shape | cases | medium+ | high+ |")
    print("|---|---:|---:|---:|")
    for shape, (n, m, h) in sorted(by_shape.items()):
        print(f"| {shape} | {n} | {m} | {h} |")
    print()
    sig_p = collections.Counter(s for r in poison for s in r["signals"])
    sig_b = collections.Counter(s for r in benign for s in r["signals"])
    print("| signal | poison cases | benign cases |")
    print("|---|---:|---:|")
    for s in sorted(set(sig_p) | set(sig_b)):
        print(f"| `{s}` | {sig_p[s]} | {sig_b[s]} |")
    print()
    if misses:
        for r in poison:
            if rank(r["worst"]) < rank(r["case"]["expect"]):
                c = r["case"]
                print(f"- MISS {c['id']} {c['shape']} expect {c['expect']} got {r['worst']}: {c['note'][:160]}")
                print(f"  signals: {sorted(r['signals'])}")
        for r in benign:
            if rank(r["worst"]) >= rank("medium"):
                c = r["case"]
                print(f"- FP {c['id']} {c['shape']} {r['worst']}: {sorted(r['signals'])}")
                for f in r["findings"]:
                    if rank(f["severity"]) >= rank("medium"):
                        print(f"    {f['severity']} {f['tool']} {f['field']}: {'; '.join(f['evidence'])[:300]}")
        print()
    return {"poison": len(poison), "medium": med, "high": high,
            "benign": len(benign), "fp_high": fp_high, "fp_medium": fp_med}


def real_files(corpus):
    for folder in (os.path.join(corpus, "real"), os.path.join(corpus, "benign"), "corpus/benign-extra"):
        if not os.path.isdir(folder):
            continue
        for n in sorted(os.listdir(folder)):
            if n.endswith(".json"):
                yield folder, os.path.join(folder, n)


def report_real(binary, corpus, show):
    per_folder = collections.defaultdict(lambda: {"files": 0, "tools": 0, "by": collections.defaultdict(set)})
    sig = collections.Counter()
    listed = []
    jobs = list(real_files(corpus))

    def one(job):
        folder, path = job
        doc = json.load(open(path))
        doc["server"] = doc["server"].lstrip("@").replace("/", "__")
        return folder, path, doc, scan(binary, doc)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        done = list(pool.map(one, jobs))
    for folder, path, doc, findings in done:
        p = per_folder[folder]
        p["files"] += 1
        p["tools"] += len(doc.get("tools", []))
        worst = {}
        for f in findings:
            if f["class"] not in REAL_COUNTED:
                continue
            key = f["tool"] or "(server)"
            if rank(f["severity"]) > rank(worst.get(key)):
                worst[key] = f["severity"]
            if rank(f["severity"]) >= rank("high"):
                for s in signals(f):
                    sig[s] += 1
                listed.append((f["severity"], os.path.basename(path), key, f["field"], f["evidence"]))
        for tool, sev in worst.items():
            p["by"][sev].add((path, tool))
    print("| data set | files | tools | high+ tools | medium tools | low tools |")
    print("|---|---:|---:|---:|---:|---:|")
    total = 0
    for folder, p in per_folder.items():
        hi = len(p["by"]["high"]) + len(p["by"]["critical"])
        total += hi
        print(f"| {folder} | {p['files']} | {p['tools']} | {hi} | {len(p['by']['medium'])} | {len(p['by']['low'])} |")
    print()
    if sig:
        print("| signal in a high finding on a real tool | findings |")
        print("|---|---:|")
        for s, n in sig.most_common():
            print(f"| `{s}` | {n} |")
        print()
    if show:
        for sev, file, tool, field, ev in sorted(listed):
            print(f"- {sev} {file} {tool} {field}: {'; '.join(ev)[:300]}")
        print()
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/git-kams")
    ap.add_argument("--corpus", default="../shared/corpus")
    ap.add_argument("--sets", default="dev,heldout")
    ap.add_argument("--misses", default="", help="sets whose misses and false positives to list")
    ap.add_argument("--real-findings", action="store_true", help="list high findings on real tools")
    args = ap.parse_args()
    print("## Poison evaluation sets (eval/poison/)\n")
    summary = {}
    for name in [s for s in args.sets.split(",") if s]:
        rows = eval_set(args.bin, os.path.join("eval", "poison", f"{name}.jsonl"))
        summary[name] = report_set(name, rows, name in args.misses.split(","))
    print("## Real servers: tools by their worst poison, hidden or squat finding\n")
    summary["real_high_tools"] = report_real(args.bin, args.corpus, args.real_findings)
    print("```json\n" + json.dumps(summary, indent=1) + "\n```")


if __name__ == "__main__":
    main()
