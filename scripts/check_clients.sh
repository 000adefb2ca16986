#!/usr/bin/env bash
# Checks `git kams enforce` against the real clients, not their
# documentation: the Gemini CLI and Claude Code, at the versions below,
# from the npm registry (about 500 MiB, so not part of `cargo test`).
#
#   1. the Gemini CLI writes the project settings that
#      tests/fixtures/clients/gemini-settings.by-gemini-cli-0.61.0.json
#      holds, byte for byte (`gemini mcp add --scope project`);
#   2. `git kams enforce` merges its rules for the samples into that file
#      and into tests/fixtures/clients/claude-code-settings.json;
#   3. the Gemini CLI reads the merged file (`gemini mcp list` lists both
#      servers), and Claude Code finds nothing invalid in the merged
#      settings (`claude doctor` prints no "Invalid settings"; it reports
#      a malformed rule there, which step 4 checks it does).
#   4. a settings file with a malformed rule added is reported by
#      `claude doctor`: the check in 3 can fail.
#
# Usage, from the repository root: scripts/check_clients.sh
# CLIENTS_DIR reuses an npm prefix holding both packages (default:
# target/clients, installed there on first use). Exits 1 on a failed
# check. docs/enforce.md gives the last run's result.
set -euo pipefail

GEMINI_VERSION=0.61.0
CLAUDE_VERSION=2.1.337
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLIENTS_DIR="${CLIENTS_DIR:-$ROOT/target/clients}"
FIXTURES="$ROOT/tests/fixtures/clients"

fail() { echo "check_clients: FAILED: $*" >&2; exit 1; }

mkdir -p "$CLIENTS_DIR"
if [[ ! -x "$CLIENTS_DIR/node_modules/.bin/gemini" || ! -x "$CLIENTS_DIR/node_modules/.bin/claude" ]]; then
  npm install --prefix "$CLIENTS_DIR" --no-audit --no-fund \
    "@google/gemini-cli@$GEMINI_VERSION" "@anthropic-ai/claude-code@$CLAUDE_VERSION" >&2
fi
GEMINI="$CLIENTS_DIR/node_modules/.bin/gemini"
CLAUDE="$CLIENTS_DIR/node_modules/.bin/claude"
[[ "$("$GEMINI" --version)" == "$GEMINI_VERSION" ]] || fail "gemini is not $GEMINI_VERSION"

(cd "$ROOT" && cargo build --release -q)
KAMS="$ROOT/target/release/git-kams"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME/.gemini"
P="$WORK/project"
mkdir -p "$P"
git -C "$P" init -q
# An untrusted folder's project settings are not read back, and each
# `mcp add` would then write the file anew with its one server.
printf '{"%s": "TRUST_FOLDER"}\n' "$P" > "$HOME/.gemini/trustedFolders.json"

# 1. The Gemini CLI's own file.
(cd "$P" &&
  "$GEMINI" mcp add files npx -y @modelcontextprotocol/server-filesystem /srv/project \
    --scope project --timeout 30000 >/dev/null &&
  "$GEMINI" mcp add web uvx mcp-server-fetch --scope project --exclude-tools fetch_raw >/dev/null)
cmp "$P/.gemini/settings.json" "$FIXTURES/gemini-settings.by-gemini-cli-$GEMINI_VERSION.json" ||
  fail "the Gemini CLI now writes another file than the fixture"
echo "1. gemini $GEMINI_VERSION writes the fixture's bytes"

# 2. The rules for the samples, merged into both files.
cp "$ROOT/samples/kams.lock" "$P/kams.lock"
mkdir -p "$P/.kams/inventory" "$P/.claude"
cp "$ROOT"/samples/inventory-drifted/* "$P/.kams/inventory/"
cp "$FIXTURES/claude-code-settings.json" "$P/.claude/settings.json"
(cd "$P" && "$KAMS" enforce) || fail "git kams enforce"
grep -q '"write_file"' "$P/.gemini/settings.json" || fail "no excludeTools rule written"
grep -q '"mcp__files__write_file"' "$P/.claude/settings.json" || fail "no deny rule written"
echo "2. git kams enforce wrote both files"

# 3. Both clients read what was written.
listed="$(cd "$P" && "$GEMINI" mcp list 2>&1)" || fail "gemini mcp list: $listed"
for server in files web; do
  grep -q "$server: " <<<"$listed" || fail "gemini mcp list does not list $server: $listed"
done
doctor() { (cd "$P" && "$CLAUDE" doctor </dev/null 2>&1 || true); }
said="$(doctor)"
grep -q "Claude Code doctor" <<<"$said" || fail "claude doctor did not run: $said"
if grep -q "Invalid settings" <<<"$said"; then
  fail "claude doctor: $(grep -A4 'Invalid settings' <<<"$said")"
fi
echo "3. gemini $GEMINI_VERSION lists both servers; claude $CLAUDE_VERSION doctor finds no invalid setting"

# 4. The doctor does report a malformed rule.
python3 - "$P/.claude/settings.json" <<'EOF'
import json, sys
path = sys.argv[1]
settings = json.load(open(path))
settings["permissions"]["deny"].append("Bash(unclosed")
json.dump(settings, open(path, "w"), indent=2)
EOF
grep -q "Invalid settings" <<<"$(doctor)" || fail "claude doctor no longer reports a malformed rule"
echo "4. claude doctor reports a malformed rule: the check in 3 can fail"
