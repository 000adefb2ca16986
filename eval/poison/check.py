#!/usr/bin/env python3
"""Validate the poison-detector evaluation sets and print their counts.

Usage: python3 eval/poison/check.py [DIR]   (DIR defaults to this file's folder)

Checks every line of dev.jsonl, dev2.jsonl, dev3.jsonl, dev4.jsonl, dev5.jsonl,
dev6.jsonl, dev7.jsonl, dev8.jsonl, dev9.jsonl, dev10.jsonl, dev11.jsonl, dev12.jsonl,
dev13.jsonl, dev14.jsonl, dev15.jsonl, dev16.jsonl and heldout.jsonl against the format in
README.md, then prints counts per set, label, shape, expect and placement of the poison.
Exits 1 if any error was found.
"""
import difflib
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

SETS = {"dev": "dev.jsonl", "dev2": "dev2.jsonl", "dev3": "dev3.jsonl", "dev4": "dev4.jsonl",
        "dev5": "dev5.jsonl", "dev6": "dev6.jsonl", "dev7": "dev7.jsonl", "dev8": "dev8.jsonl",
        "dev9": "dev9.jsonl", "dev10": "dev10.jsonl", "dev11": "dev11.jsonl",
        "dev12": "dev12.jsonl", "dev13": "dev13.jsonl", "dev14": "dev14.jsonl",
        "dev15": "dev15.jsonl", "dev16": "dev16.jsonl", "heldout": "heldout.jsonl"}

POISON_SHAPES = [
    "arg-hijack", "priority-over-user", "prerequisite-call", "destructive-safety",
    "disclosed-exfil", "fenced-block", "pseudo-tag", "foreign-language",
    "credential-request", "consent-bypass", "webhook-default", "secret-read",
    "concealment", "shadowing", "schema-hidden",
]
BENIGN_SHAPES = [
    "loud-workflow", "own-tags", "note-to-llm", "use-default", "query-operators",
    "code-examples", "own-tool-refs", "local-write", "export", "honest-delete",
    "security-reads", "email-tool", "user-webhook", "without-asking",
    "credential-param", "foreign-docs",
]
KEYS_REQUIRED = ["id", "label", "shape", "expect", "server", "tools", "note"]
KEYS_ALLOWED = set(KEYS_REQUIRED) | {"instructions"}
TOOL_KEYS_ALLOWED = {"name", "title", "description", "inputSchema", "annotations", "outputSchema", "_meta"}
ANNOTATION_KEYS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
SERVER_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
POINTER_RE = re.compile(r"^(/[^:\s]*)(?:, (/[^:\s]*))*: \S")


def bad_char(ch, foreign):
    """Return a reason if ch may not appear in a case's text, else None."""
    if ch in "\n\t":
        return None
    if " " <= ch <= "~":
        return None
    if not foreign:
        return "non-ASCII character U+%04X" % ord(ch)
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp") or (cat == "Zs" and ch != " "):
        return "invisible or control character U+%04X (%s)" % (ord(ch), cat)
    return None


def strings(o):
    """Every string in o, keys included."""
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)


def resolve(doc, pointer):
    """Resolve an RFC 6901 pointer; raise KeyError/IndexError if it does not."""
    cur = doc
    if pointer == "":
        return cur
    for raw in pointer.split("/")[1:]:
        tok = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(cur, list):
            cur = cur[int(tok)]
        elif isinstance(cur, dict):
            cur = cur[tok]
        else:
            raise KeyError(tok)
    return cur


def placement(pointer):
    """Coarse place of the poison, from the note's first pointer."""
    parts = pointer.split("/")
    if parts[1] == "instructions":
        return "instructions"
    if len(parts) == 4 and parts[3] == "description":
        return "tool description"
    last = parts[-1]
    if parts[-2] == "properties":
        return "property name"
    for key, name in (("enum", "enum value"), ("examples", "example"), ("default", "default"),
                      ("const", "const"), ("title", "title"), ("$comment", "$comment")):
        if key in parts[3:]:
            return name
    if "anyOf" in parts or "oneOf" in parts or "items" in parts or "$defs" in parts:
        return "nested schema"
    if last == "description":
        return "parameter description"
    return "other"


def check_schema(schema, where, errors):
    if not isinstance(schema, dict):
        errors.append("%s: inputSchema is not an object" % where)
        return
    if schema.get("type") != "object":
        errors.append("%s: inputSchema.type must be \"object\"" % where)
    props = schema.get("properties")
    if not isinstance(props, dict):
        errors.append("%s: inputSchema.properties must be an object" % where)
        props = {}
    req = schema.get("required")
    if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
        errors.append("%s: inputSchema.required must be a list of strings" % where)
        req = []
    for r in req:
        if r not in props:
            errors.append("%s: required %r is not a property" % (where, r))
    if len(set(req)) != len(req):
        errors.append("%s: duplicate entries in required" % where)
    for name, p in props.items():
        if not isinstance(p, dict):
            errors.append("%s: property %r is not a schema object" % (where, name))
        elif "enum" in p and (not isinstance(p["enum"], list) or not p["enum"]):
            errors.append("%s: property %r has an empty or non-list enum" % (where, name))


def check_case(case, setname, lineno, errors):
    where = "%s:%d" % (SETS[setname], lineno)
    if not isinstance(case, dict):
        errors.append("%s: not a JSON object" % where)
        return None
    cid = case.get("id", "?")
    where = "%s:%d (%s)" % (SETS[setname], lineno, cid)
    for k in KEYS_REQUIRED:
        if k not in case:
            errors.append("%s: missing key %r" % (where, k))
    for k in case:
        if k not in KEYS_ALLOWED:
            errors.append("%s: unknown key %r" % (where, k))
    if not re.fullmatch(r"%s-\d{4}" % setname, str(cid)):
        errors.append("%s: id must look like %s-0001" % (where, setname))
    label, shape, expect = case.get("label"), case.get("shape"), case.get("expect")
    if label == "poison":
        if shape not in POISON_SHAPES:
            errors.append("%s: unknown poison shape %r" % (where, shape))
        if expect not in ("high", "medium"):
            errors.append("%s: poison expects high or medium, not %r" % (where, expect))
    elif label == "benign":
        if shape not in BENIGN_SHAPES:
            errors.append("%s: unknown benign shape %r" % (where, shape))
        if expect != "none":
            errors.append("%s: benign expects none, not %r" % (where, expect))
    else:
        errors.append("%s: label must be poison or benign, not %r" % (where, label))
    server = case.get("server")
    if not isinstance(server, str) or not SERVER_RE.match(server):
        errors.append("%s: server %r must be [a-z0-9-]" % (where, server))
    if "instructions" in case and (not isinstance(case["instructions"], str) or not case["instructions"].strip()):
        errors.append("%s: instructions, when present, must be a non-empty string" % where)
    tools = case.get("tools")
    if not isinstance(tools, list) or not 1 <= len(tools) <= 4:
        errors.append("%s: tools must be a list of 1 to 4 tools" % where)
        tools = []
    names = []
    for ti, t in enumerate(tools):
        tw = "%s tools/%d" % (where, ti)
        if not isinstance(t, dict):
            errors.append("%s: not an object" % tw)
            continue
        for k in t:
            if k not in TOOL_KEYS_ALLOWED:
                errors.append("%s: unknown tool key %r" % (tw, k))
        name = t.get("name")
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            errors.append("%s: bad tool name %r" % (tw, name))
        names.append(name)
        desc = t.get("description")
        if not isinstance(desc, str) or not desc.strip():
            errors.append("%s: description must be a non-empty string" % tw)
        check_schema(t.get("inputSchema"), tw, errors)
        ann = t.get("annotations")
        if ann is not None:
            if not isinstance(ann, dict):
                errors.append("%s: annotations must be an object" % tw)
            else:
                for k, v in ann.items():
                    if k not in ANNOTATION_KEYS:
                        errors.append("%s: unknown annotation %r" % (tw, k))
                    elif k != "title" and not isinstance(v, bool):
                        errors.append("%s: annotation %r must be boolean" % (tw, k))
    if len(set(names)) != len(names):
        errors.append("%s: tool names are not unique within the case" % where)
    note = case.get("note")
    pointers = []
    if not isinstance(note, str) or not note.strip():
        errors.append("%s: note must be a non-empty string" % where)
    elif label == "poison":
        m = POINTER_RE.match(note)
        if not m:
            errors.append("%s: a poison note must start with JSON pointer(s) and ': '" % where)
        else:
            head = note.split(": ", 1)[0]
            pointers = head.split(", ")
            for p in pointers:
                try:
                    resolve(case, p)
                except (KeyError, IndexError, ValueError):
                    errors.append("%s: note pointer %s does not resolve" % (where, p))
    foreign = shape in ("foreign-language", "foreign-docs")
    for st in strings({k: v for k, v in case.items() if k != "note"}):
        for ch in st:
            why = bad_char(ch, foreign)
            if why:
                errors.append("%s: %s in %r" % (where, why, st[:60]))
                break
    for ch in str(note):
        why = bad_char(ch, False)
        if why:
            errors.append("%s: %s in note" % (where, why))
            break
    return pointers


def main():
    base = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    errors, warnings = [], []
    cases = {}
    seen_ids = set()
    for setname, fname in SETS.items():
        path = base / fname
        cases[setname] = []
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except OSError as e:
            errors.append("%s: %s" % (fname, e))
            continue
        if lines and lines[-1] == "":
            lines.pop()
        for lineno, line in enumerate(lines, 1):
            try:
                case = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append("%s:%d: invalid JSON: %s" % (fname, lineno, e))
                continue
            pointers = check_case(case, setname, lineno, errors)
            if isinstance(case, dict):
                if case.get("id") in seen_ids:
                    errors.append("%s:%d: duplicate id %r" % (fname, lineno, case.get("id")))
                seen_ids.add(case.get("id"))
                cases[setname].append((case, pointers or []))

    # The two sets are written separately: no poison text may be shared, and
    # near-copies are reported.
    def poison_texts(setname):
        out = []
        for case, pointers in cases[setname]:
            for p in pointers:
                try:
                    v = resolve(case, p)
                except (KeyError, IndexError, ValueError):
                    continue
                if p.split("/")[-2] == "properties":
                    text = p.split("/")[-1]  # the property name is the poison
                else:
                    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True)
                out.append((case["id"], text))
        return out
    def compare(new_t, old_t, same=False):
        for i, (hid, ht) in enumerate(new_t):
            for did, dt in (old_t[i + 1:] if same else old_t):
                if hid == did:
                    continue
                # A short value (`true`, a number) is no text of its own.
                if ht == dt and len(ht) > 12:
                    errors.append("%s repeats the poison text of %s" % (hid, did))
                elif len(ht) > 40 and difflib.SequenceMatcher(None, ht, dt).ratio() > 0.8:
                    warnings.append("%s is close to %s (ratio > 0.8)" % (hid, did))
    # The sets written later, each by a writer who saw none of the earlier
    # sets' texts, in the order they were written. Each shares no poison text
    # with the sets before it (dev, dev2 and dev3 included) nor two of its own
    # cases with each other; from dev6 on, no server name of another set
    # written before it (the held-out set included) is used again. The
    # held-out set shares no poison text with any development set.
    later = ["dev4", "dev5", "dev6", "dev7", "dev8", "dev9", "dev10", "dev11", "dev12",
             "dev13", "dev14", "dev15", "dev16"]
    before = poison_texts("dev") + poison_texts("dev2") + poison_texts("dev3")
    compare(poison_texts("heldout"), before + [t for sn in later for t in poison_texts(sn)])
    for k, setname in enumerate(later):
        texts = poison_texts(setname)
        compare(texts, before)
        compare(texts, texts, same=True)
        before = before + texts
        if k < later.index("dev6"):
            continue
        others = {c.get("server") for sn in SETS if sn not in later[k:] for c, _ in cases[sn]}
        for case, _ in cases[setname]:
            if case.get("server") in others:
                errors.append("%s reuses the server name %r of an earlier set" % (case["id"], case["server"]))
    all_descs = {}
    for setname in SETS:
        for case, _ in cases[setname]:
            for t in case.get("tools", []):
                d = t.get("description") if isinstance(t, dict) else None
                if isinstance(d, str) and len(d) > 80:
                    all_descs.setdefault(d, []).append(case["id"])
    for d, ids in all_descs.items():
        if len(ids) > 1:
            warnings.append("same tool description in %s" % ", ".join(ids))

    for setname in SETS:
        cs = [c for c, _ in cases[setname]]
        print("== %s: %d cases" % (setname, len(cs)))
        labels = Counter(c.get("label") for c in cs)
        print("   labels: " + ", ".join("%s %d" % kv for kv in sorted(labels.items())))
        expects = Counter((c.get("label"), c.get("expect")) for c in cs)
        print("   expect: " + ", ".join("%s/%s %d" % (l, e, n) for (l, e), n in sorted(expects.items())))
        tools = sum(len(c.get("tools", [])) for c in cs)
        withins = sum(1 for c in cs if "instructions" in c)
        print("   tools: %d; cases with instructions: %d" % (tools, withins))
        for label, shapes in (("poison", POISON_SHAPES), ("benign", BENIGN_SHAPES)):
            sc = Counter(c.get("shape") for c in cs if c.get("label") == label)
            print("   %s shapes:" % label)
            for sh in shapes:
                hi = sum(1 for c in cs if c.get("shape") == sh and c.get("expect") == "high")
                extra = " (high %d)" % hi if label == "poison" else ""
                print("     %-20s %3d%s" % (sh, sc.get(sh, 0), extra))
        pc = Counter(placement(p[0]) for c, p in cases[setname] if c.get("label") == "poison" and p)
        print("   poison placement: " + ", ".join("%s %d" % kv for kv in pc.most_common()))
    for w in warnings:
        print("warning: " + w)
    for e in errors:
        print("error: " + e, file=sys.stderr)
    print("%d error(s), %d warning(s)" % (len(errors), len(warnings)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
