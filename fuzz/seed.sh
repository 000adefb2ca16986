#!/bin/sh
# Seeds fuzz/corpus/<target>/ from real files: the shared corpus (real
# inventories, attacks, the JCS test vectors), the bundled samples, and a
# few hook inputs and client configs written here. Run from anywhere;
# existing corpus entries are kept. The corpus is not committed.
set -eu
fuzz=$(cd "$(dirname "$0")" && pwd)
main=$(dirname "$fuzz")
shared=${KAMS_SHARED:-$main/../shared}/corpus
corpus=$fuzz/corpus

seed() { # target file...
    t=$1
    shift
    mkdir -p "$corpus/$t"
    for f in "$@"; do
        [ -f "$f" ] && cp "$f" "$corpus/$t/seed-$(basename "$f")"
    done
    return 0
}

inventories="$shared/real/*.json $shared/attacks/*.json $main/samples/inventory/*.json $main/samples/inventory-drifted/*.json $shared/real/raw/*.jsonl"
# shellcheck disable=SC2086
seed inventory $inventories
# shellcheck disable=SC2086
seed canon $inventories $shared/jcs/input/*.json
seed lock "$main/samples/kams.lock"
# shellcheck disable=SC2086
seed textconv "$main/samples/kams.lock" $shared/attacks/*.json

# merge: base, ours and theirs separated by NUL bytes.
mkdir -p "$corpus/merge"
lock=$main/samples/kams.lock
{ cat "$lock"; printf '\0'; cat "$lock"; printf '\0'; cat "$lock"; } > "$corpus/merge/seed-same"
{ printf '{"version":1,"servers":{}}\n'; printf '\0'; cat "$lock"; printf '\0'; cat "$lock"; } > "$corpus/merge/seed-empty-base"
cp "$lock" "$corpus/merge/seed-one"

zero=0000000000000000000000000000000000000000
a=1111111111111111111111111111111111111111
b=2222222222222222222222222222222222222222
mkdir -p "$corpus/prepush" "$corpus/prereceive"
printf 'refs/heads/main %s refs/heads/main %s\n' $b $a > "$corpus/prepush/seed-update"
printf 'refs/heads/new %s refs/heads/new %s\n(delete) %s refs/heads/old %s\n' $a $zero $zero $b > "$corpus/prepush/seed-new-and-delete"
printf '%s %s refs/heads/main\n' $a $b > "$corpus/prereceive/seed-update"
printf '%s %s refs/heads/new\n%s %s refs/tags/v1\n' $zero $a $b $zero > "$corpus/prereceive/seed-new-and-delete"

mkdir -p "$corpus/config"
cat > "$corpus/config/seed-claude" <<'JSON'
{"mcpServers":{"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],"env":{"TOKEN":"${TOKEN}","DEBUG":"1"}},"web":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer x"}}}}
JSON
cat > "$corpus/config/seed-vscode" <<'JSON'
{
  // VS Code: JSON with comments
  "servers": {
    "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git",], "envFile": ".env"}, /* trailing */
  },
}
JSON
echo "seeded $(find "$corpus" -type f | wc -l) files under $corpus"
