#!/usr/bin/env bash
# For developers: everything Ling checks against other people's MCP programs, in one go.
# Installs the peers (scripts/install-peers.sh), builds, runs every test target that needs a peer
# with CI set (so a missing peer fails instead of skipping), then the whole conformance suite
# (scripts/conformance.sh --all), and prints one line per step.
#
#   scripts/interop.sh
set -uo pipefail
cd "$(dirname "$0")/.."

# Every test binary of ling that talks to a peer program from .cache/npm (and, below, the
# example server's Inspector tests, in its own package).
PEER_TESTS=(mcp_reference mcp_reference_cli mcp_http_everything mcp_conformance)
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
step build cargo build --quiet --workspace --bins --examples
target_args=()
for t in "${PEER_TESTS[@]}"; do target_args+=(--test "$t"); done
step peer-tests env CI=true cargo test "${target_args[@]}"
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
