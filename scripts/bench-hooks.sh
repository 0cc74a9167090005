#!/bin/sh
# Builds the hook benchmark in release mode and runs it: `scripts/bench-hooks.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench-hooks
exec target/release/examples/bench-hooks "$@"
