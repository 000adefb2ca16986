#!/usr/bin/env python3
"""Propose words for the poison rules' word classes from WordNet.

The rules' classes (rules/poison.toml, `[classes]`) name words by role:
what sends data out, what destroys, what hides. Written from the texts
one has seen, they miss the synonyms one has not. This script reads
WordNet 3.0 (Debian's `wordnet-base`, the files under /usr/share/wordnet)
and, for each class asked for, lists the words of the first senses of the
class's words (their synsets, and for verbs the synsets' troponyms: "ways
to X") that the class does not hold yet.

It only proposes. A person reads the proposals class by class and adds
the words that carry the class's meaning in a tool's description; WordNet
mixes senses ("send" is also "air" a programme, "drop" is also "fall"),
and a word that widens one class can make another fire on honest text.
Nothing here runs at build time, and no WordNet file is needed to build or
test git-kams.

    apt-get install wordnet-base
    python3 scripts/widen.py SENDS DESTROYS          # proposals per class
    python3 scripts/widen.py --senses 2 --pos v SENDS  # fewer senses

Hand-written: WordNet's data files are a simple line format (wndb(5WN));
nltk reads them too, but needs its own copy of the data downloaded at run
time, which this machine's registries do not offer.
"""

import argparse
import os
import re
import sys
import tomllib

WN = os.environ.get("WNHOME", "/usr/share/wordnet")
POS = {"v": "verb", "n": "noun", "a": "adj", "r": "adv"}


def entries(kind, pos):
    """The lines of WordNet's `index.verb`, `data.noun`...: the licence
    header's lines start with a space."""
    with open(os.path.join(WN, f"{kind}.{POS[pos]}"), encoding="latin-1") as f:
        yield from (line for line in f if not line.startswith(" "))


def load_index(pos):
    """lemma -> [synset offsets], most frequent sense first."""
    index = {}
    for line in entries("index", pos):
        parts = line.split()
        lemma, _, synset_cnt, p_cnt = parts[0], parts[1], int(parts[2]), int(parts[3])
        offsets = parts[4 + p_cnt + 2:]
        index[lemma] = offsets[:synset_cnt]
    return index


def load_data(pos):
    """offset -> (words, troponym/hyponym offsets, gloss)."""
    data = {}
    for line in entries("data", pos):
        head, _, gloss = line.partition(" | ")
        parts = head.split()
        offset = parts[0]
        w_cnt = int(parts[3], 16)
        words = [parts[4 + 2 * i].lower() for i in range(w_cnt)]
        k = 4 + 2 * w_cnt
        p_cnt = int(parts[k])
        below = []
        for i in range(p_cnt):
            sym, off, ppos = parts[k + 1 + 4 * i: k + 4 + 4 * i]
            if sym == "~" and ppos == pos:
                below.append(off)
        data[offset] = (words, below, gloss.strip().split(";")[0])
    return data


def base_words(classes, name, seen=None):
    """The words of a class, `@CLASS` references expanded, `~` dropped."""
    seen = seen or set()
    if name in seen:
        return set()
    seen.add(name)
    out = set()
    for w in classes[name].split():
        if w.startswith("@"):
            out |= base_words(classes, w[1:], seen)
        else:
            out.add(w.lstrip("~'"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("classes", nargs="+", help="class names of rules/poison.toml")
    ap.add_argument("--rules", default="rules/poison.toml")
    ap.add_argument("--pos", default="v", choices=sorted(POS))
    ap.add_argument("--senses", type=int, default=3, help="senses of each word to follow")
    ap.add_argument("--below", action="store_true", help="also the troponyms (ways to X)")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(WN, "index.verb")):
        sys.exit(f"no WordNet under {WN}: apt-get install wordnet-base")
    with open(args.rules, "rb") as f:
        classes = tomllib.load(f)["classes"]
    index, data = load_index(args.pos), load_data(args.pos)
    for name in args.classes:
        if name not in classes:
            sys.exit(f"no class {name} in {args.rules}")
        have = base_words(classes, name)
        proposals = {}
        for w in sorted(have):
            for off in index.get(w, [])[: args.senses]:
                words, below, gloss = data[off]
                offs = [(off, gloss)] + ([(b, data[b][2]) for b in below] if args.below else [])
                for o, g in offs:
                    for cand in data[o][0]:
                        cand = re.sub(r"\(.*\)$", "", cand)
                        if "_" in cand or cand in have:
                            continue
                        proposals.setdefault(cand, (w, g))
        print(f"# {name}: {len(have)} words, {len(proposals)} proposals")
        for cand, (w, g) in sorted(proposals.items()):
            print(f"{cand:18} from {w:14} {g[:70]}")


if __name__ == "__main__":
    main()
