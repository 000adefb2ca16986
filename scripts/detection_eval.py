#!/usr/bin/env python3
"""Recall and false positives of git-kams' detectors on every data set, per
severity and per signal: the one source of the figures in docs/detection.md
("Measured").

Data sets:
  - ../shared/corpus/attacks/: each file scanned alone (a rug pull's second
    load against a lock that recorded its first); an `expectedFindings`
    entry is found when a finding of the same tool sits at or under its
    JSON pointer;
  - the poison evaluation sets of eval/poison/ (dev.jsonl to dev16.jsonl,
    heldout.jsonl):
    each case is one server, scanned alone; a poison case counts as found
    at a severity when any poison, hidden, squat or shadow finding of it is
    at that severity or above; a benign case is a false positive when one
    is at high or above (and is counted at medium too);
  - the real servers: ../shared/corpus/real/, ../shared/corpus/benign/ and
    corpus/benign-extra/, one file at a time: every tool with a poison,
    hidden or squat finding is counted by its worst severity.

Server names with `/` (a package name, as corpus/benign has them) are
scanned under the name with `/` replaced by `__`: scan refuses `/` in a
server name, which separates server and tool. Every scan runs in a
temporary folder outside any git repository, so that no findings memo of a
checkout's .git/kams answers for the binary.

  scripts/detection_eval.py [--bin target/debug/git-kams] [--corpus ../shared/corpus]
                            [--sets dev,dev2,...,dev15,heldout] [--misses dev,...,dev15] [--real-findings]
                            [--markdown] [--update docs/detection.md]

--markdown prints exactly the "Measured" section of docs/detection.md:
sorted, with no timestamp and no absolute path, so that a re-run after a
change is a plain diff; --update docs/detection.md writes it there. Never pass --misses heldout: heldout's texts are
not to be read or tuned to, only its totals.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ["info", "low", "medium", "high", "critical"]
COUNTED = ("poison", "hidden", "squat", "shadow")
REAL_COUNTED = ("poison", "hidden", "squat")
# What a scan against an empty lock reports of every entry; not a detector.
NOT_DETECTORS = ("added",)
# (folder, name in the tables, short name in the signal table's header)
REAL_SETS = (("real", "../shared/corpus/real/", "real/"), ("benign", "../shared/corpus/benign/", "benign/"))
EXTRA = ("corpus/benign-extra", "corpus/benign-extra/", "benign-extra/")
COMMAND = "scripts/detection_eval.py --markdown"


def rank(sev):
    return ORDER.index(sev) if sev else -1


def run(binary, args, cwd):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CEILING_DIRECTORIES=os.path.dirname(cwd))
    return subprocess.run([binary, "--lock", os.path.join(cwd, "k.lock")] + args,
                          capture_output=True, cwd=cwd, env=env)


def scan(binary, inventory, record_first=None):
    """Scans one inventory against an empty lock, or against one that
    recorded `record_first`. `inventory` is a path (passed as is, so that a
    file with a duplicate key reaches the binary byte for byte) or a dict."""
    with tempfile.TemporaryDirectory() as d:
        if isinstance(inventory, dict):
            path = os.path.join(d, "inventory.json")
            with open(path, "w") as f:
                json.dump(inventory, f)
            inventory = path
        if record_first:
            out = run(binary, ["--inventory", record_first, "record"], d)
            if out.returncode != 0:
                sys.exit(f"{record_first}: record: exit {out.returncode}: {out.stderr.decode()}")
        out = run(binary, ["--inventory", inventory, "--format", "json", "scan", "--fail-on", "never"], d)
    if out.returncode != 0:
        sys.exit(f"{inventory}: exit {out.returncode}: {out.stderr.decode()}")
    return json.loads(out.stdout)["findings"]


def pool_map(fn, items):
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return list(pool.map(fn, items))


def signals(finding):
    """A poison finding's signals (from its `name +weight` evidence); any
    other finding stands for its class."""
    if finding["class"] != "poison":
        return {finding["class"]}
    return {e.split(" +")[0] for e in finding["evidence"] if re.match(r"^[a-z-]+ \+\d", e)}


def pct(a, b):
    return f"{100 * a / b:.1f} %" if b else "n/a"


def table(header, rows, left=(0,)):
    """A Markdown table; the columns whose indexes are in `left` are text,
    the others numbers."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i in left else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


# --- attacks/ ---------------------------------------------------------------

def matches(f, tool, pointer):
    same = f["tool"] is None if tool is None else f["tool"] == tool
    field = f["field"] or ""
    return same and (field == pointer or field.startswith(pointer + "/"))


def eval_attacks(binary, corpus):
    folder = os.path.join(corpus, "attacks")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))

    def one(name):
        path = os.path.join(folder, name)
        first = None
        if "@2-" in name:
            first = path.replace("@2-second-load", "@1-first-load")
        return name, json.load(open(path)), scan(binary, path, first)

    rows = []
    for name, doc, findings in pool_map(one, names):
        findings = [f for f in findings if f["class"] not in NOT_DETECTORS]
        found, missed, sigs, best = [], [], set(), []
        for e in doc.get("expectedFindings", []):
            tool = None if e["tool"] == "(server)" else e["tool"]
            hits = [f for f in findings if matches(f, tool, e["pointer"])]
            if hits:
                found.append(e)
                best.append(max((f["severity"] for f in hits), key=rank))
                for f in hits:
                    sigs |= signals(f)
            else:
                missed.append(f'{e["tool"]} {e["pointer"]}')
        counted = [f for f in findings if f["class"] in REAL_COUNTED]
        rows.append({
            "file": name,
            "expected": len(found) + len(missed),
            "found": len(found),
            "high": sum(rank(s) >= rank("high") for s in best),
            "missed": missed,
            "signals": sigs,
            "worst": max((f["severity"] for f in counted), key=rank, default=None),
            "negative": "NEGATIVE CONTROL" in " ".join(doc.get("attack", {}).get("class", [])),
        })
    return rows


def report_attacks(rows):
    out = []
    expected = sum(r["expected"] for r in rows)
    found = sum(r["found"] for r in rows)
    high = sum(r["high"] for r in rows)
    out.append(f"Found {found} of {expected} expected findings ({pct(found, expected)}), "
               f"{high} of them at high or above.\n")
    out.append(table(
        ["file", "expected", "found", "found at high+", "missed", "signals of the findings that match"],
        [(f"`{r['file']}`", r["expected"], r["found"], r["high"], "; ".join(r["missed"]),
          ", ".join(f"`{s}`" for s in sorted(r["signals"]))) for r in rows], left=(0, 4, 5)))
    for r in rows:
        if r["negative"]:
            out.append(f"Negative control `{r['file']}` (clean descriptors): worst poison, hidden or "
                       f"squat finding {r['worst'] or 'none'}.\n")
    return "\n".join(out), {"expected": expected, "found": found, "found_high": high}


# --- eval/poison/ -----------------------------------------------------------

def case_doc(case):
    doc = {"server": case["server"], "tools": case["tools"]}
    if case.get("instructions"):
        doc["instructions"] = case["instructions"]
    return doc


def eval_set(binary, path):
    cases = [json.loads(line) for line in open(path) if line.strip()]
    rows = []
    for case, findings in zip(cases, pool_map(lambda c: scan(binary, case_doc(c)), cases)):
        counted = [f for f in findings if f["class"] in COUNTED]
        worst = max((f["severity"] for f in counted), key=rank, default=None)
        by_signal = {}
        for f in counted:
            for s in signals(f):
                if rank(f["severity"]) > rank(by_signal.get(s)):
                    by_signal[s] = f["severity"]
        rows.append({"case": case, "worst": worst, "signals": by_signal, "findings": counted})
    return rows


def report_set(name, rows, misses):
    poison = [r for r in rows if r["case"]["label"] == "poison"]
    benign = [r for r in rows if r["case"]["label"] == "benign"]
    at = lambda rs, sev: sum(rank(r["worst"]) >= rank(sev) for r in rs)  # noqa: E731
    med, high = at(poison, "medium"), at(poison, "high")
    fp_high, fp_med = at(benign, "high"), at(benign, "medium")
    out = [f"#### `eval/poison/{name}.jsonl`: {len(poison)} poison, {len(benign)} benign cases\n"]
    out.append(table(["measure", "count", "share"], [
        ("poison found at medium or above", f"{med} of {len(poison)}", pct(med, len(poison))),
        ("poison found at high or above", f"{high} of {len(poison)}", pct(high, len(poison))),
        ("benign at high or above (false positive)", f"{fp_high} of {len(benign)}", pct(fp_high, len(benign))),
        ("benign at medium or above", f"{fp_med} of {len(benign)}", pct(fp_med, len(benign))),
    ]))
    sevs = ["critical", "high", "medium", "low", None]
    out.append(table(["cases by worst finding", "critical", "high", "medium", "low", "none"], [
        (label, *(sum(r["worst"] == s for r in rs) for s in sevs))
        for label, rs in (("poison", poison), ("benign", benign))]))
    by_shape = collections.defaultdict(lambda: [0, 0, 0])
    for r in poison:
        s = by_shape[r["case"]["shape"]]
        s[0] += 1
        s[1] += rank(r["worst"]) >= rank("medium")
        s[2] += rank(r["worst"]) >= rank("high")
    out.append(table(["poison shape", "cases", "medium+", "high+"],
                     [(shape, n, m, h) for shape, (n, m, h) in sorted(by_shape.items())]))
    names = sorted({s for r in rows for s in r["signals"]})
    has = lambda rs, s, sev: sum(rank(r["signals"].get(s)) >= rank(sev) for r in rs)  # noqa: E731
    out.append(table(
        ["signal", "poison cases", "of them in a high+ finding", "benign cases", "of them in a medium+ finding"],
        [(f"`{s}`", has(poison, s, "info"), has(poison, s, "high"), has(benign, s, "info"), has(benign, s, "medium"))
         for s in names]))
    if misses:
        for r in poison:
            if rank(r["worst"]) < rank(r["case"]["expect"]):
                c = r["case"]
                out.append(f"- MISS {c['id']} {c['shape']} expect {c['expect']} got {r['worst']}: {c['note'][:160]}")
                out.append(f"  signals: {sorted(r['signals'])}")
        for r in benign:
            if rank(r["worst"]) >= rank("medium"):
                c = r["case"]
                out.append(f"- FP {c['id']} {c['shape']} {r['worst']}: {sorted(r['signals'])}")
                for f in r["findings"]:
                    if rank(f["severity"]) >= rank("medium"):
                        out.append(f"    {f['severity']} {f['tool']} {f['field']}: {'; '.join(f['evidence'])[:300]}")
        out.append("")
    return "\n".join(out), {"poison": len(poison), "medium": med, "high": high,
                            "benign": len(benign), "fp_high": fp_high, "fp_medium": fp_med}


# --- real servers -----------------------------------------------------------

def real_sets(corpus):
    sets = [(os.path.join(corpus, sub), label, short) for sub, label, short in REAL_SETS]
    sets.append((os.path.join(ROOT, EXTRA[0]), EXTRA[1], EXTRA[2]))
    return [s for s in sets if os.path.isdir(s[0])]


def eval_real(binary, corpus):
    jobs = [((label, short), os.path.join(folder, n))
            for folder, label, short in real_sets(corpus)
            for n in sorted(os.listdir(folder)) if n.endswith(".json")]

    def one(job):
        label, path = job
        doc = json.load(open(path))
        doc["server"] = doc["server"].lstrip("@").replace("/", "__")
        return label, os.path.basename(path), doc, scan(binary, doc)

    per_set = {}
    for label, file, doc, findings in pool_map(one, jobs):
        p = per_set.setdefault(label, {"files": 0, "tools": 0, "worst": {}, "signals": {}, "listed": []})
        p["files"] += 1
        p["tools"] += len(doc.get("tools", []))
        for f in findings:
            if f["class"] not in REAL_COUNTED:
                continue
            key = (file, f["tool"] or "(server)")
            if rank(f["severity"]) > rank(p["worst"].get(key)):
                p["worst"][key] = f["severity"]
            for s in signals(f):
                if rank(f["severity"]) > rank(p["signals"].get((s, key))):
                    p["signals"][(s, key)] = f["severity"]
            if rank(f["severity"]) >= rank("high"):
                p["listed"].append((f["severity"], file, key[1], f["field"], f["evidence"]))
    return per_set


def report_real(per_set, show):
    out = []
    sevs = ("critical", "high", "medium", "low")
    rows = []
    total_high = 0
    for (label, _), p in per_set.items():
        counts = collections.Counter(p["worst"].values())
        total_high += counts["high"] + counts["critical"]
        rows.append((f"`{label}`", p["files"], p["tools"], *(counts[s] for s in sevs)))
    out.append(table(["data set", "files", "tools", "critical", "high", "medium", "low"], rows))
    names = sorted({s for p in per_set.values() for s, _ in p["signals"]})
    header = ["signal"]
    for _, short in per_set:
        header += [f"`{short}` high+", "medium", "low"]
    sig_rows = []
    for s in names:
        row = [f"`{s}`"]
        for p in per_set.values():
            c = collections.Counter(sev for (sig, _), sev in p["signals"].items() if sig == s)
            row += [c["high"] + c["critical"], c["medium"], c["low"]]
        sig_rows.append(row)
    out.append("Tools by the worst finding that carries each signal (a tool counts once per signal):\n")
    out.append(table(header, sig_rows))
    if show:
        for p in per_set.values():
            for sev, file, tool, field, ev in sorted(p["listed"]):
                out.append(f"- {sev} {file} {tool} {field}: {'; '.join(ev)[:300]}")
        out.append("")
    return "\n".join(out), total_high


INTRO = f"""## Measured

Every figure in this section is printed by one command, run from the
checkout after `cargo build` (the script runs each scan in a temporary
folder outside any repository, so no findings memo answers for the binary):

```sh
{COMMAND}
```

It prints this section as it stands; after a change to the detectors,
`--update docs/detection.md` writes it over this one (or paste the
output of `--markdown`). Without `--markdown` it prints the same tables
and a JSON summary, with `--misses dev` the dev set's misses and false
positives, and with `--real-findings` every high finding on a real tool.
Severity is a finding's (low, medium, high, critical); a signal is named
by a poison finding's evidence (`concealment +4: ...`), and any other
finding stands for its class (`hidden`, `squat`, `shadow`, `drift`,
`ambiguous`).
"""

ATTACKS_INTRO = """### Attacks: `../shared/corpus/attacks/`

Each file scanned alone against an empty lock (a rug pull's second load
against a lock that recorded its first). An `expectedFindings` entry is
found when a finding of any class on the same tool sits at or under its
JSON pointer; "found at high+" counts those whose best matching finding is
high or critical.
"""

EVAL_INTRO = """### Poison evaluation sets: `eval/poison/`

Each case is one server of a few tools, scanned alone (eval/poison/README.md
says how the sets were written). A poison case is found at a severity when
any `poison`, `hidden`, `squat` or `shadow` finding of it is at that
severity or above; a benign case with one at high or above is a false
positive. `dev2` to `dev16` were each written later by a writer who had
not read the detector, and eval/poison/README.md gives what each scored
before any rule saw it. The rules are tuned on `dev` to `dev10` and
`dev12` to `dev16` (the misses of `dev10`, `dev12`, `dev13`, `dev14`,
`dev15` and `dev16` were read on 2026-12-07 and 2026-12-08); the
word model is trained on `dev` to `dev9`. `dev11` is not tuned on: it
scored 69.2 % at medium or above and 67.5 % at high with the rules alone
and 89.2 % and 68.3 % with the model. `dev12`, whose harm is said as a
consequence, indirectly or in structured text, scored 67.5 % and 48.3 %
before the rules written from `dev10`'s misses and 68.3 % and 50.8 %
after them, before its own misses were read. `dev13`, written like the
popular servers with the poison injected as published attack sets do,
scored 85.0 % and 67.5 % with 6 of its 40 benign cases at high before
its misses were read. `dev14`, written like generated and SDK
documentation with the harm in Examples, Notes, changelogs and schema
values, scored 80.8 % and 65.8 % before its misses were read. `dev15`,
long-tail registry servers with the poison in the loud register of
honest workflow orders, scored 84.2 % and 60.8 % with 3 of its 40 benign
cases at high before its misses were read (after the rules written from
`dev14`'s: 60.0 % at high before them). `dev16`, enterprise and vendor
servers with the harm said as a fact, a consequence or a condition in
fifteen places of a descriptor, scored 80.8 % and 55.8 % with 7 of its
40 benign cases at high before its misses were read.
`heldout` is never read, only counted.
"""

REAL_INTRO = """### Real servers: every tool is benign

`../shared/corpus/real/`, `../shared/corpus/benign/` and
`corpus/benign-extra/`, one file at a time against an empty lock. Each tool
(or a server's instructions, as one more entry) is counted once, by its
worst `poison`, `hidden` or `squat` finding; any high or critical one is a
false positive, and `tests/it/attacks.rs` fails on it.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "git-kams"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    ap.add_argument("--sets", default="dev,dev2,dev3,dev4,dev5,dev6,dev7,dev8,dev9,dev10,dev11,dev12,dev13,dev14,dev15,dev16,heldout")
    ap.add_argument("--misses", default="", help="sets whose misses and false positives to list (never heldout)")
    ap.add_argument("--real-findings", action="store_true", help="list high findings on real tools")
    ap.add_argument("--markdown", action="store_true", help="print the Measured section of docs/detection.md")
    ap.add_argument("--update", metavar="FILE",
                    help="write the Measured section over the one in FILE (docs/detection.md) instead of printing it")
    args = ap.parse_args()
    args.markdown |= bool(args.update)
    if "heldout" in args.misses.split(","):
        ap.error("--misses heldout: the held-out set is measured, never read")
    binary, corpus = os.path.abspath(args.bin), os.path.abspath(args.corpus)
    summary = {}
    parts = [INTRO] if args.markdown else []

    text, summary["attacks"] = report_attacks(eval_attacks(binary, corpus))
    parts += [ATTACKS_INTRO, text]

    parts.append(EVAL_INTRO)
    for name in [s for s in args.sets.split(",") if s]:
        rows = eval_set(binary, os.path.join(ROOT, "eval", "poison", f"{name}.jsonl"))
        text, summary[name] = report_set(name, rows, not args.markdown and name in args.misses.split(","))
        parts.append(text)

    text, summary["real_high_tools"] = report_real(eval_real(binary, corpus),
                                                   not args.markdown and args.real_findings)
    parts += [REAL_INTRO, text]
    if not args.markdown:
        parts.append("```json\n" + json.dumps(summary, indent=1) + "\n```\n")
    text = "\n".join(parts)
    if args.update:
        update(args.update, text)
    else:
        sys.stdout.write(text)


def update(path, section):
    """Replaces the `## Measured` section of `path`, up to the next `## `
    heading, with `section`."""
    doc = open(path).read()
    start = doc.find("\n## Measured\n")
    if start < 0:
        sys.exit(f"{path}: no '## Measured' section")
    end = doc.find("\n## ", start + 1)
    end = len(doc) if end < 0 else end
    with open(path, "w") as f:
        f.write(doc[:start + 1] + section.rstrip("\n") + "\n" + doc[end:])


if __name__ == "__main__":
    main()
