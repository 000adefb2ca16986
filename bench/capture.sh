#!/usr/bin/env bash
# Capture concurrency benchmark: `git kams capture` of five slow fake MCP
# servers (tests/fixtures/mcp_server.py: four answer initialize after 2 s,
# one after 1 s), with --jobs 4 against --jobs 1. A benchmark, not a test:
# it prints medians and ratios and never fails on a slow result, only on
# an unexpected exit status (then the numbers would mean nothing).
#
# With five jobs the five servers should take about as long as the slowest
# one (ratio near 1.0); with four, the slowest plus the 1 s one that waits
# for a free slot (near 1.5 to the slowest, 0.33 to the sum); with one
# job, about the sum (ratio to the sum near 1.0).
#
# Usage, from anywhere:   bench/capture.sh
# Environment: RUNS (default 3, after one warm-up run each),
#              SKIP_BUILD=1 to use the existing target/release/git-kams.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${RUNS:-3}"
BIN="$ROOT/target/release/git-kams"
FIXTURE="$ROOT/tests/fixtures/mcp_server.py"
T="$ROOT/bench/timeit.py"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC

[[ "${SKIP_BUILD:-}" == 1 ]] || cargo build --release --quiet

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
git -C "$WORK" init -q
python3 - "$FIXTURE" > "$WORK/.mcp.json" <<'EOF'
import json, sys
fixture = sys.argv[1]
servers = {"slow%d" % i: {"command": "python3", "args": [fixture, "slow:2"]} for i in range(1, 5)}
servers["quick"] = {"command": "python3", "args": [fixture, "slow:1"]}
print(json.dumps({"mcpServers": servers}, indent=2))
EOF
cd "$WORK"

# One timeit.py row per measurement: label, median, min, max, RSS, exit.
rows=()
measure() {
  local label="$1"
  shift
  local row
  row="$(python3 "$T" "$label" --runs "$RUNS" -- "$@")"
  local code="${row##*$'\t'}"
  if [[ "$code" != 0 ]]; then
    echo "\`$label\` exited $code; rerun it by hand in $WORK to see why" >&2
    trap - EXIT
    exit 2
  fi
  rows+=("$row")
}
median() {
  local r label med
  for r in "${rows[@]}"; do
    IFS=$'\t' read -r label med _ <<< "$r"
    if [[ "$label" == "$1" ]]; then echo "$med"; fi
  done
}
ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.2f}')"; }

measure "one slow:2 server" "$BIN" capture --yes --out "$WORK/out-one" slow1
measure "one slow:1 server" "$BIN" capture --yes --out "$WORK/out-quick" quick
measure "5 servers, --jobs 5" "$BIN" capture --yes --jobs 5 --out "$WORK/out-5"
measure "5 servers, --jobs 4" "$BIN" capture --yes --jobs 4 --out "$WORK/out-4"
measure "5 servers, --jobs 1" "$BIN" capture --yes --jobs 1 --out "$WORK/out-1"

printf '| capture | median s | min s | max s | peak RSS MiB | exit |\n|---|---:|---:|---:|---:|---:|\n'
for r in "${rows[@]}"; do
  IFS=$'\t' read -r label med lo hi rss code <<< "$r"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$label" "$med" "$lo" "$hi" "$rss" "$code"
done

slowest="$(median 'one slow:2 server')"
sum="$(python3 -c "print(4 * float('$slowest') + float('$(median 'one slow:1 server')'))")"
jobs5="$(median '5 servers, --jobs 5')"
jobs4="$(median '5 servers, --jobs 4')"
jobs1="$(median '5 servers, --jobs 1')"
echo
echo "slowest single server: $slowest s; sum of the five single captures: $(printf '%.4f' "$sum") s"
echo
echo "| capture of 5 servers | ratio to the slowest single server | ratio to the sum |"
echo "|---|---:|---:|"
echo "| --jobs 5 (default 8 behaves alike) | $(ratio "$jobs5" "$slowest") | $(ratio "$jobs5" "$sum") |"
echo "| --jobs 4 | $(ratio "$jobs4" "$slowest") | $(ratio "$jobs4" "$sum") |"
echo "| --jobs 1 | $(ratio "$jobs1" "$slowest") | $(ratio "$jobs1" "$sum") |"
echo
echo "--jobs 1 / --jobs 4: $(ratio "$jobs1" "$jobs4")"
