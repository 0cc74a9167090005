#!/usr/bin/env bash
# Benchmarks the MCP host (release build): startup of the reference servers together vs alone,
# and tools/call round trips per second over stdio, then the same startups without Ling
# (scripts/bench-mcp-baseline.py) for comparison, and a one-shot `ling -p` with server-everything
# against that server's own start-up (scripts/bench-mcp-oneshot.py). Extra arguments go to the
# bench (e.g. --calls 50000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-peers.sh >/dev/null || echo "bench-mcp: reference servers not installed; startup numbers skipped" >&2
cargo build --release --example mcp-test-server --example bench-mcp --bin ling
target/release/examples/bench-mcp "$@"
# The baseline: the same startups with no Ling in between (CPU contention alone).
if command -v python3 >/dev/null && [ -f .cache/npm/node_modules/@modelcontextprotocol/server-memory/dist/index.js ]; then
  python3 scripts/bench-mcp-baseline.py "${LING_TEST_NPM_DIR:-.cache/npm}"
fi
# One-shot: `ling -p` with server-everything, spawn to exit, against the server's own start-up.
if command -v python3 >/dev/null && [ -f "${LING_TEST_NPM_DIR:-.cache/npm}/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ]; then
  python3 scripts/bench-mcp-oneshot.py target/release/ling "${LING_TEST_NPM_DIR:-.cache/npm}"
fi
