#!/usr/bin/env bash
# Benchmarks the MCP host (release build): startup of the reference servers together vs alone,
# and tools/call round trips per second over stdio. Extra arguments go to the bench
# (e.g. --calls 50000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-peers.sh >/dev/null || echo "bench-mcp: reference servers not installed; startup numbers skipped" >&2
cargo build --release --example mcp-test-server --example bench-mcp
exec target/release/examples/bench-mcp "$@"
