#!/usr/bin/env python3
"""Trains the word model behind the `resembles-poison` signal and writes
rules/poison-model.tsv (docs/detection.md, "The word model").

The rules of rules/poison.toml read roles and structures; written from the
shapes of one data set, about one case in five or six of what they gain
carries over to text nobody here read. A linear model over the words and
word pairs of every string carries over better: trained on the strings
the development sets mark as poisoned, against every other string of
those sets and every string of every real tool in the corpus, it finds
most of what the rules miss in sets it never saw. It only ever lifts a
string to medium (never to high), so a real tool it misreads costs a
reviewer a look, not a blocked push.

The model, as the detector computes it (src/detect/poison/model.rs):

    words   every run of ASCII letters and apostrophes that starts with a
            letter, lower-cased (ASCII only)
    grams   the distinct words and distinct pairs of neighbouring words
    z       bias + sum of the weights of the grams in the model / sqrt(n),
            n the number of distinct grams of the string (in the model or not)
    fires   when 1 / (1 + exp(-z)) exceeds the threshold: the string is
            lifted to medium (`resembles-poison`, not added to the sum);
            over the confident threshold it counts as a signal of weight 2
            (`strongly-resembles-poison`), so with a rule that asks it
            makes high

The file has one `gram<TAB>weight` line per gram, after `=threshold` and
`=bias` lines (a gram never holds `=`, so neither can be a word's).

The threshold is chosen for precision on real entries, not for recall: the
smallest probability, on a grid, at which at most `--real-budget` of the
real entries get a string over it, each scored by a model trained without
its file's half of the real entries (two folds over files).

The confident threshold is a choice, not fitted here: `--measure-confident
BIN` prints, for each candidate, how many real entries (scored by a model
without their file) and how many cases of each training set (scored by a
model without that set) a rule that asks and the model together would
make high (BIN's findings read as the rules alone would give them, so
any build will do); the lowest candidate with none on a real entry and none on a
benign case is the one written (0.98, on 2026-12-07).

`--measure-sets BIN` prints how much the model adds on text it was not
trained on: each training set left out of the model in turn, its poison
cases at medium or above with BIN's rules alone and with the model too.

Needs scikit-learn (pip install scikit-learn); the detector does not.
Deterministic: the same inputs give the same file byte for byte.

  python3 scripts/train_poison_model.py            # writes the model
  python3 scripts/train_poison_model.py --check    # exits 1 if it differs
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import random
import re
import sys

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.linear_model import LogisticRegression

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "rules", "poison-model.tsv")
# Sets written after the model was trained stay out of it: they measure
# it (dev10 was written before the model and kept unseen for this).
TRAIN_SETS = ["dev", "dev2", "dev3", "dev4", "dev5", "dev6", "dev7", "dev8", "dev9"]
REAL_DIRS = ["../shared/corpus/real", "../shared/corpus/benign", "corpus/benign-extra"]
# Keys whose string values are vocabulary, not prose (the detector does
# not ask the model about them either: src/detect/poison/mod.rs, `VOCABULARY`).
SKIP = {"type", "format", "required", "$schema", "pattern", "$ref", "name"}
GRID = [round(0.5 + 0.005 * i, 3) for i in range(100)]
# Weights smaller than this are left out of the file (and out of every
# figure the script prints, which are the pruned model's).
PRUNE = 0.2

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
WORD = re.compile(r"[a-z][a-z']*")


def grams(text: str) -> list[str]:
    words = WORD.findall(text.translate(ASCII_LOWER))
    return sorted(set(words) | {a + " " + b for a, b in zip(words, words[1:])})


def strings(node, ptr: str, out: list) -> None:
    if isinstance(node, str):
        out.append((ptr, node))
    elif isinstance(node, dict):
        for k, v in node.items():
            if k in SKIP and isinstance(v, (str, list)):
                continue
            strings(v, f"{ptr}/{k}", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            strings(v, f"{ptr}/{i}", out)


def prose(pairs):
    # At least three words: MIN_WORDS of src/detect/poison/model.rs.
    return [(p, s) for p, s in pairs if len(WORD.findall(s.translate(ASCII_LOWER))) >= 3]


def case_strings(case) -> list:
    out = []
    for i, tool in enumerate(case["tools"]):
        strings({k: v for k, v in tool.items() if k != "name"}, f"/tools/{i}", out)
    if case.get("instructions"):
        out.append(("/instructions", case["instructions"]))
    return prose(out)


def poisoned_at(case) -> set:
    """The pointers a poison case's note names."""
    return set(re.findall(r"(/(?:tools|instructions)[^\s,:]*)", case.get("note", "")))


def labelled(case):
    marked = poisoned_at(case) if case["label"] == "poison" else set()
    for p, s in case_strings(case):
        hit = any(p == q or p.startswith(q + "/") or q.startswith(p + "/") for q in marked)
        yield s, int(hit)


def real_tools():
    """(file, strings) per real tool, prompt, resource and resource
    template, and per server's instructions and serverInfo: every entry
    the detector reads."""
    out = []
    for d in REAL_DIRS:
        for f in sorted(glob.glob(os.path.join(ROOT, d, "*.json"))):
            doc = json.load(open(f))
            rel = os.path.relpath(f, ROOT)
            for key in ("tools", "prompts", "resources", "resourceTemplates", "serverInfo"):
                entries = doc.get(key) or []
                for entry in entries if isinstance(entries, list) else [entries]:
                    pairs = []
                    strings(entry, "", pairs)
                    out.append((rel, [s for _, s in prose(pairs)]))
            if doc.get("instructions"):
                out.append((rel, [s for _, s in prose([("", doc["instructions"])])]))
    return out


class Model:
    def __init__(self, texts, labels, c):
        self.vocab = {}
        rows, cols = [], []
        for r, t in enumerate(texts):
            for g in grams(t):
                rows.append(r)
                cols.append(self.vocab.setdefault(g, len(self.vocab)))
        # Features of one string alone are not learnt from: at least two.
        seen = np.bincount(cols, minlength=len(self.vocab))
        keep = seen >= 2
        x = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), len(self.vocab)))
        x = sp.diags(1 / np.sqrt([max(1, len(grams(t))) for t in texts])) @ x
        x = x[:, np.flatnonzero(keep)]
        names = [None] * len(self.vocab)
        for g, i in self.vocab.items():
            names[i] = g
        names = [names[i] for i in np.flatnonzero(keep)]
        lr = LogisticRegression(C=c, class_weight="balanced", max_iter=5000, tol=1e-8)
        lr.fit(x, labels)
        self.bias = float(lr.intercept_[0])
        self.weights = {g: float(w) for g, w in zip(names, lr.coef_[0]) if abs(w) >= PRUNE}

    def probability(self, text: str) -> float:
        gs = grams(text)
        if not gs:
            return 0.0
        z = self.bias + sum(self.weights.get(g, 0.0) for g in gs) / math.sqrt(len(gs))
        return 1 / (1 + math.exp(-z))

    def worst(self, texts) -> float:
        return max((self.probability(t) for t in texts), default=0.0)


def load(name):
    path = os.path.join(ROOT, "eval", "poison", f"{name}.jsonl")
    return [json.loads(line) for line in open(path) if line.strip()]


def training(names):
    """The strings of these sets and their labels (1: poisoned)."""
    texts, labels = [], []
    for name in names:
        for case in load(name):
            for s, y in labelled(case):
                texts.append(s)
                labels.append(y)
    return texts, labels


def without(out, extra, c):
    """A model trained on every training set but `out`, and on `extra`."""
    texts, labels = training([n for n in TRAIN_SETS if n != out])
    return Model(texts + extra, labels + [0] * len(extra), c)


def evaluator():
    """scripts/detection_eval.py, which scans with a git-kams binary."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import detection_eval

    return detection_eval


CONFIDENT = [0.95, 0.96, 0.97, 0.98, 0.99, 0.995]


def resolve(doc, pointer):
    node = doc
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


MODEL_SIGNALS = ("resembles-poison", "strongly-resembles-poison")


def rules_sum(finding) -> int:
    """The sum of a poison finding's signals other than the model's."""
    weights = re.findall(r"([a-z-]+) \+(\d+)", finding["message"].split(" (sum")[0])
    return sum(int(w) for name, w in weights if name not in MODEL_SIGNALS)


def asks(finding) -> bool:
    """Whether a poison finding has a signal that asks for harm."""
    return "none here" not in finding["message"]


def rules_severity(finding) -> int:
    """A finding's severity (0 none to 3 high) with the rules alone: what
    the binary's findings would be without the word model."""
    if finding["class"] != "poison":
        return {"info": 0, "low": 1, "medium": 2}.get(finding["severity"], 3)
    n = rules_sum(finding)
    return 3 if n >= 4 and asks(finding) else 2 if n >= 2 else n


def lifted_strings(doc, findings):
    """The strings of poison findings whose rules ask for harm and sum to
    2 or 3: those the model, counted, makes high."""
    names = [t.get("name") for t in doc.get("tools", [])]
    for f in findings:
        if f["class"] != "poison" or not f["field"] or not asks(f) or rules_sum(f) not in (2, 3):
            continue
        try:
            base = f"/tools/{names.index(f['tool'])}" if f["tool"] else ""
            text = resolve(doc, base + f["field"])
        except (ValueError, KeyError, IndexError, TypeError):
            continue
        if isinstance(text, str):
            yield text


def measure_confident(binary, halves, fold, c):
    de = evaluator()

    def real_scan(path):
        doc = json.load(open(path))
        scanned = dict(doc, server=doc["server"].lstrip("@").replace("/", "__"))
        return path, doc, de.scan(binary, scanned)

    paths = [p for d in REAL_DIRS for p in sorted(glob.glob(os.path.join(ROOT, d, "*.json")))]
    real = {t: 0 for t in CONFIDENT}
    for path, doc, findings in de.pool_map(real_scan, paths):
        model = halves[fold[os.path.relpath(path, ROOT)]]
        best = max((model.probability(s) for s in lifted_strings(doc, findings)), default=0.0)
        for t in CONFIDENT:
            real[t] += best > t
    print("confident | real files made high | per set left out: poison, benign made high")
    sets = {}
    extra = [s for _, ss in real_tools() for s in ss]
    for out in TRAIN_SETS:
        model = without(out, extra, c)
        for row in de.eval_set(binary, os.path.join(ROOT, "eval", "poison", f"{out}.jsonl")):
            if max(map(rules_severity, row["findings"]), default=0) == 3:
                continue
            case = row["case"]
            best = max((model.probability(s) for s in lifted_strings(case, row["findings"])), default=0.0)
            for t in CONFIDENT:
                key = (t, out, case["label"])
                sets[key] = sets.get(key, 0) + (best > t)
    for t in CONFIDENT:
        per = ", ".join(f"{n} {sets.get((t, n, 'poison'), 0)}/{sets.get((t, n, 'benign'), 0)}" for n in TRAIN_SETS)
        print(f"{t} | {real[t]} | {per}")


def measure_sets(binary, threshold, c):
    de = evaluator()
    extra = [s for _, ss in real_tools() for s in ss]
    totals = [0, 0, 0]
    for out in TRAIN_SETS:
        model = without(out, extra, c)
        rows = de.eval_set(binary, os.path.join(ROOT, "eval", "poison", f"{out}.jsonl"))
        poison = [r for r in rows if r["case"]["label"] == "poison"]
        medium = [max(map(rules_severity, r["findings"]), default=0) >= 2 for r in poison]
        rules = sum(medium)
        both = sum(m or model.worst([s for _, s in case_strings(r["case"])]) > threshold
                   for m, r in zip(medium, poison))
        print(f"{out}: rules alone {rules}, with a model trained without it {both}, of {len(poison)}")
        totals = [totals[0] + rules, totals[1] + both, totals[2] + len(poison)]
    print(f"all: {totals[0]} -> {totals[1]} of {totals[2]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--c", type=float, default=10.0, help="inverse regularisation (default 10)")
    ap.add_argument("--real-budget", type=float, default=0.006,
                    help="share of real entries (tools, prompts, resources, instructions) the model alone may lift to medium (default 0.006)")
    ap.add_argument("--confident", type=float, default=0.98,
                    help="probability over which the model counts in the sum (default 0.98; see --measure-confident)")
    ap.add_argument("--measure-confident", metavar="BIN",
                    help="print what each confident threshold would make high, scanning with the git-kams binary BIN")
    ap.add_argument("--measure-sets", metavar="BIN",
                    help="print, for each training set left out of the model in turn, its poison cases at "
                         "medium or above with the rules alone and with the model too (BIN's findings)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the written model differs")
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()

    texts, labels = training(TRAIN_SETS)
    real = real_tools()
    files = sorted({f for f, _ in real})
    random.Random(1).shuffle(files)
    fold = {f: i % 2 for i, f in enumerate(files)}

    # Real tools scored by a model that did not see their half.
    held = []
    halves = {}
    for k in (0, 1):
        extra = [s for f, ss in real if fold[f] != k for s in ss]
        halves[k] = Model(texts + extra, labels + [0] * len(extra), a.c)
        held += [halves[k].worst(ss) for f, ss in real if fold[f] == k]
    threshold = next((t for t in GRID if sum(p > t for p in held) <= a.real_budget * len(held)), GRID[-1])
    flagged = sum(p > threshold for p in held)
    if a.measure_sets:
        measure_sets(os.path.abspath(a.measure_sets), threshold, a.c)
        return
    if a.measure_confident:
        measure_confident(os.path.abspath(a.measure_confident), halves, fold, a.c)
        return

    extra = [s for _, ss in real for s in ss]
    model = Model(texts + extra, labels + [0] * len(extra), a.c)
    lines = [
        "# The word model of the `resembles-poison` signal: written by",
        "# scripts/train_poison_model.py, do not edit (docs/detection.md, \"The word model\").",
        f"# trained on {', '.join(TRAIN_SETS)} ({sum(labels)} poisoned strings of {len(labels)})",
        f"# and {len(extra)} strings of {len(real)} real tools, prompts and resources; C {a.c}; scikit-learn {sklearn.__version__}",
        f"# real entries over the threshold, each scored by a model without its file: {flagged} of {len(held)}",
        f"=threshold\t{threshold}",
        f"=confident\t{a.confident}",
        f"=bias\t{model.bias:.6f}",
    ]
    for g in sorted(model.weights):
        lines.append(f"{g}\t{model.weights[g]:.6f}")
    # Probabilities the detector must reproduce (src/detect/poison/model.rs
    # tests them): one of every twentieth training string.
    probe = texts[::20][:40]
    text = "\n".join(lines) + "\n"
    checks = "".join(f"{model.probability(t):.6f}\t{json.dumps(t)}\n" for t in probe)
    out_checks = os.path.splitext(a.out)[0] + "-checks.tsv"
    if a.check:
        same = open(a.out).read() == text and open(out_checks).read() == checks
        print("unchanged" if same else f"{a.out} differs from a fresh training")
        sys.exit(0 if same else 1)
    with open(a.out, "w") as h:
        h.write(text)
    with open(out_checks, "w") as h:
        h.write(checks)
    print(f"threshold {threshold}: {flagged} of {len(held)} real entries over it (held out); "
          f"{len(model.weights)} weights written to {os.path.relpath(a.out, ROOT)}")


if __name__ == "__main__":
    main()
