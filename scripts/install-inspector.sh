#!/usr/bin/env bash
# Installs the MCP Inspector and Node 22 for tests/suite/sqlite_inspector.rs.
# scripts/install-peers.sh is the one source of truth for peers and versions; this name is kept
# for those who know it.
set -euo pipefail
exec "$(dirname "$0")/install-peers.sh"
