#!/usr/bin/env bash
# History benchmark (issue #3): git-kams log, blame, status --at and the
# pre-push hook against git's own commands, on a generated repository of
# 10,000 commits of which 2,000 change one entry of a 2,000-entry kams.lock.
# A benchmark, not a test: it prints medians, peak RSS and ratios.
#
# Usage, from the repository root:   bench/history.sh
# Environment: MERGES=1 for the repository whose lock changes come in
#              pairs through 1,000 merges (bench/history_repo.py --merges),
#              BENCH_DIR (default target/bench/history, or
#              target/bench/history-merges with MERGES=1), RUNS (default 5),
#              SKIP_BUILD=1 to use the binary already built,
#              BIN to time another binary (default: release/git-kams under
#              CARGO_TARGET_DIR, or target/).
#
# `git kams log` is timed twice: cold, with its cache ($GIT_DIR/kams/)
# removed before each run, and warm, with the cache the runs before left.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MERGES_FLAG=()
if [[ "${MERGES:-}" == 1 ]]; then
  MERGES_FLAG=(--merges)
  BENCH_DIR="${BENCH_DIR:-target/bench/history-merges}"
fi
BENCH_DIR="${BENCH_DIR:-target/bench/history}"
RUNS="${RUNS:-5}"
BIN="${BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/git-kams}"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC

[[ "${SKIP_BUILD:-}" == 1 ]] || cargo build --release --quiet
if [[ ! -d "$BENCH_DIR/repo/.git" ]]; then
  echo "# building the benchmark repository in $BENCH_DIR (once)" >&2
  python3 bench/history_repo.py --git-kams "$BIN" --out "$BENCH_DIR" "${MERGES_FLAG[@]}"
fi
REPO="$(cd "$BENCH_DIR/repo" && pwd)"
cd "$REPO"
PUSH="$(mktemp)"
echo "refs/heads/main $(git rev-parse HEAD) refs/heads/main $(git rev-parse HEAD~20)" > "$PUSH"

T="$ROOT/bench/timeit.py"
rows=()
measure() { rows+=("$(python3 "$T" "$@")"); }
measure "git log --format=%H -- kams.lock" --runs "$RUNS" -- git log --format=%H -- kams.lock
measure "git kams log, cold (no cache)" --runs "$RUNS" -- sh -c 'rm -rf .git/kams && exec "$0" log' "$BIN"
measure "git kams log, warm (cache)" --runs "$RUNS" -- "$BIN" log
measure "git blame kams.lock" --runs "$RUNS" -- git blame kams.lock
measure "git kams blame" --runs "$RUNS" -- "$BIN" blame
measure "git show HEAD~500:kams.lock" --runs "$RUNS" -- git show HEAD~500:kams.lock
measure "git kams status --at HEAD~500, cold (no index)" --runs "$RUNS" -- env "GIT_CONFIG_PARAMETERS='kams.indexCache'='false'" "$BIN" status --at HEAD~500
measure "git kams status --at HEAD~500, warm (index)" --runs "$RUNS" -- "$BIN" status --at HEAD~500
measure "git kams hook pre-push (20 commits)" --runs "$RUNS" --stdin "$PUSH" -- "$BIN" hook pre-push origin file:///dev/null
rm -f "$PUSH"

printf '| command | median s | min s | max s | peak RSS MiB | exit |\n|---|---:|---:|---:|---:|---:|\n'
for r in "${rows[@]}"; do
  IFS=$'\t' read -r label med lo hi rss code <<< "$r"
  printf '| `%s` | %s | %s | %s | %s | %s |\n' "$label" "$med" "$lo" "$hi" "$rss" "$code"
done
median() { for r in "${rows[@]}"; do IFS=$'\t' read -r label med _ <<< "$r"; [[ "$label" == "$1" ]] && echo "$med"; done; }
ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.2f}')"; }
echo
echo "| git-kams command | git baseline | ratio (target <= 1.0) |"
echo "|---|---|---:|"
echo "| log, cold (no cache) | git log --format=%H -- kams.lock | $(ratio "$(median 'git kams log, cold (no cache)')" "$(median 'git log --format=%H -- kams.lock')") |"
echo "| log, warm (cache) | git log --format=%H -- kams.lock | $(ratio "$(median 'git kams log, warm (cache)')" "$(median 'git log --format=%H -- kams.lock')") |"
echo "| blame | git blame kams.lock | $(ratio "$(median 'git kams blame')" "$(median 'git blame kams.lock')") |"
echo "| status --at HEAD~500, cold (no index) | git show HEAD~500:kams.lock | $(ratio "$(median 'git kams status --at HEAD~500, cold (no index)')" "$(median 'git show HEAD~500:kams.lock')") |"
echo "| status --at HEAD~500, warm (index) | git show HEAD~500:kams.lock | $(ratio "$(median 'git kams status --at HEAD~500, warm (index)')" "$(median 'git show HEAD~500:kams.lock')") |"
echo "| hook pre-push, 20 commits | target < 50 ms | $(median 'git kams hook pre-push (20 commits)') s |"
