#!/usr/bin/env bash
# Creates the demo database data/demo.sqlite that .ling/mcp.json serves with ling-sqlite-mcp.
# Uses target/release/ling-sqlite-mcp when it is built, else builds it with cargo.
# Extra arguments are passed on (e.g. --force to replace an existing file).
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=target/release/ling-sqlite-mcp
if [[ ! -x "$BIN" ]]; then
  cargo build --release -p ling-sqlite-mcp
fi
exec "$BIN" --init-demo data/demo.sqlite "$@"
