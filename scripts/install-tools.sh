#!/usr/bin/env bash
# Installs the cargo tools CI runs (`cargo deny`, `cargo machete`) from crates.io into the user's
# cache, ~/.cache/ling/tools (LING_TOOLS_DIR overrides it), outside the checkout so that every
# clone on a machine (CI clones afresh for each run) shares them, and prints the directory to put on PATH. Versions
# are pinned here, the one place that names them; `--locked` builds each with the dependency
# versions its authors tested. A tool already installed at its version is not built again, so
# only the first run pays (about 4 minutes of CPU for both on 2 cores).
set -euo pipefail

TOOLS_DIR="${LING_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ling/tools}"

TOOLS=(
  "cargo-deny@0.20.2"
  "cargo-machete@0.9.2"
)

for spec in "${TOOLS[@]}"; do
  name="${spec%@*}"
  version="${spec##*@}"
  if "$TOOLS_DIR/bin/$name" --version 2>/dev/null | grep -qwF "$version"; then
    continue
  fi
  echo "install-tools: building $spec into $TOOLS_DIR" >&2
  cargo install --locked --quiet --root "$TOOLS_DIR" "$name@$version" >&2
done
echo "$TOOLS_DIR/bin"
