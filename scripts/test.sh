#!/usr/bin/env bash
# The one test command (README, Development; .ci/run runs it too): installs the peer programs the
# suite runs against (scripts/install-peers.sh: Node 22, the MCP reference servers, the MCP
# conformance suite and the MCP Inspector, into .cache/npm or $LING_TEST_NPM_DIR; needs npm the
# first time), then `cargo test`: with no arguments the whole workspace (ling and the example
# server), else with the arguments given. A test whose peer is missing fails.
#
#   scripts/test.sh                          # every test
#   scripts/test.sh --test all mcp_http::    # one suite of the integration tests
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-peers.sh
# Every test binary runs even when an earlier one failed, so one run shows every failure.
if [ "$#" -eq 0 ]; then
  exec cargo test --workspace --no-fail-fast
fi
exec cargo test --no-fail-fast "$@"
