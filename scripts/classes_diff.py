#!/usr/bin/env python3
"""The capability classes two git-kams builds give every tool of a folder of
inventory files, and the tools whose classes differ (docs/flows.md,
"Limits"). A measurement, not a test.

Each file is read alone with `status --format json` against an empty lock,
in a fresh repository; a file that a build refuses (a server name with a
`/`) is left out for both.

Usage, from the repository root:
    python3 scripts/classes_diff.py OLD_BINARY NEW_BINARY [FOLDER]
FOLDER defaults to corpus/benign-extra.
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

if len(sys.argv) < 3:
    sys.exit(__doc__)
OLD, NEW = (os.path.abspath(b) for b in sys.argv[1:3])
FOLDER = sys.argv[3] if len(sys.argv) > 3 else "corpus/benign-extra"
files = sorted(glob.glob(os.path.join(os.path.abspath(FOLDER), "*.json")))
repo = tempfile.mkdtemp()
subprocess.run(["git", "init", "-q", repo], check=True)
env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")


def classes(binary, path):
    run = subprocess.run(
        [binary, "--lock", "k.lock", "--format", "json", "status", "--inventory", path],
        cwd=repo, env=env, capture_output=True, text=True,
    )
    if run.returncode not in (0, 1):
        return None
    doc = json.loads(run.stdout)
    return {(e["server"], e["tool"]): e["can"] for e in doc["entries"] if e["tool"]}


gained = collections.Counter()
servers = set()
changed = 0
for path in files:
    old, new = classes(OLD, path), classes(NEW, path)
    if old is None or new is None:
        continue
    for key, can in new.items():
        if old.get(key) == can:
            continue
        changed += 1
        servers.add(key[0])
        for c in set(can) - set(old.get(key, [])):
            gained[c] += 1
        print(f"{os.path.basename(path)}\t{key[1]}\t{','.join(old.get(key, [])) or '-'}\t->\t{','.join(can) or '-'}")
print(f"# {changed} tools of {len(servers)} servers changed; classes gained: {dict(gained)}")
