#!/usr/bin/env bash
# Every benchmark in one run (issue #7): builds the release binary once,
# builds each input (gen_inventory.py at 200x50 and 2000x50, the
# 10,000-commit history repository, fake MCP servers), runs git-kams and
# the comparison commands (sha256sum, git hash-object, git log, git blame,
# git show), and prints medians, peak memory and ratios as markdown, which
# is what docs/performance.md holds. A benchmark, not a test: it never
# fails on a slow result, only on an unexpected exit status.
#
# Usage, from anywhere:   bench/all.sh [> results.md]
# Environment: RUNS (timed runs per command; each script has its default),
#              SKIP_BUILD=1 to use the existing target/release/git-kams.
# Run it on an otherwise idle machine: the numbers are wall times.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ "${SKIP_BUILD:-}" != 1 ]]; then
  echo "# building the release binary" >&2
  cargo build --release --quiet
fi
export SKIP_BUILD=1

echo "# git-kams benchmarks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); $(git --version); git-kams $(git rev-parse --short HEAD)"
echo
echo "## Scan, status and pin against sha256sum (bench/run.sh)"
echo
bench/run.sh
echo
echo "## History: log, blame, status --at, pre-push against git (bench/history.sh)"
echo
bench/history.sh
echo
echo "## Capture concurrency (bench/capture.sh)"
echo
bench/capture.sh
