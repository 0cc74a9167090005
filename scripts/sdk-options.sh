#!/usr/bin/env bash
# Counts the Claude Agent SDK's query() options by how Ling takes them (the table "The Agent
# SDK's options" in docs/cli.md), and checks the table names every option of the installed SDK
# (`Options` in sdk.d.ts under .cache/npm, or LING_TEST_NPM_DIR). Exits 1 when one is missing.
set -eu
cd "$(dirname "$0")/.."
npm_dir=${LING_TEST_NPM_DIR:-.cache/npm}
dts="$npm_dir/agent-sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.d.ts"
table=$(awk '/^### The Agent SDK.s options/{f=1; next} f && /^#/{exit} f && /^\| `/' docs/cli.md)
status=0
if [ -f "$dts" ]; then
    options=$(awk '/^export declare type Options = \{/{f=1;next} f&&/^};/{exit} f' "$dts" \
        | grep -oE '^    [a-zA-Z_]+\??:' | tr -d ' ?:')
    for option in $options; do
        if ! echo "$table" | grep -q "^| \`$option\` |"; then
            echo "missing from docs/cli.md: $option"
            status=1
        fi
    done
else
    echo "note: $dts not found (scripts/install-peers.sh installs it); counting the table only"
fi
for kind in honoured SDK-side refused unknown; do
    printf '%-9s %s\n' "$kind" "$(echo "$table" | awk -F'|' -v k=" $kind " '$3 == k' | wc -l)"
done
printf '%-9s %s\n' total "$(echo "$table" | wc -l)"
exit $status
