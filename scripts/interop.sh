#!/usr/bin/env bash
# For developers: everything Ling checks against other people's MCP programs, in one go.
# Installs the peers (scripts/install-peers.sh), builds, runs every test suite that needs a peer
# (a missing peer fails its tests), then the whole conformance suite (scripts/conformance.sh
# --all), and prints one line per step.
#
#   scripts/interop.sh
set -uo pipefail
cd "$(dirname "$0")/.."

# Every suite of tests/all.rs that talks to a peer program from .cache/npm.
PEER_SUITES=(mcp_reference mcp_reference_cli mcp_http_everything mcp_conformance
  mcp_features repl_mcp acp serve_mcp)
LOGS=target/interop
mkdir -p "$LOGS"

summary=()
status=0
step() {
  local name="$1"
  shift
  local log="$LOGS/$name.log"
  echo "=== $name"
  if "$@" >"$log" 2>&1; then
    summary+=("ok      $name")
  else
    summary+=("FAILED  $name (log: $log)")
    tail -n 30 "$log" | sed 's/^/    /'
    status=1
  fi
}

step install-peers scripts/install-peers.sh
step build cargo build --quiet --bins --examples
filters=()
for s in "${PEER_SUITES[@]}"; do filters+=("suite::$s::"); done
step peer-tests cargo test --test all -- "${filters[@]}"
step sqlite-peer-tests env CI=true cargo test -p ling-sqlite-mcp --test sqlite inspector
step conformance scripts/conformance.sh --all

echo
echo "=== interop summary"
printf '  %s\n' "${summary[@]}"
# "Running tests/x.rs (...)" precedes each binary's "test result:" line.
awk '/Running tests\//{name=$2} /^test result/{sub(/; finished.*/, ""); print "  " name ": " $0}' \
  "$LOGS/peer-tests.log" "$LOGS/sqlite-peer-tests.log" 2>/dev/null
grep -h -e '^Total:' -e 'scenarios passed' "$LOGS/conformance.log" 2>/dev/null \
  | sed 's/^ */  conformance suite: /'
exit "$status"
