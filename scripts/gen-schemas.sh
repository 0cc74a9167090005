#!/bin/sh
# Regenerates docs/schemas/*.schema.json from the config types (src/config/settings_raw.rs,
# src/config/hooks/schema.rs, src/config/mcp/raw.rs). Run it after changing a config type;
# `cargo test --test schemas` fails until the checked-in files match.
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --example gen-schemas -- docs/schemas
