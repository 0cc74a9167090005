#!/bin/sh
# Builds the terminal-neutralising benchmark in release mode and runs it:
# `scripts/bench-safe-text.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench-safe-text
exec target/release/examples/bench-safe-text "$@"
