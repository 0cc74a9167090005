#!/bin/sh
# Builds the bash-rule benchmark in release mode and runs it: `scripts/bench-rules.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench-rules
exec target/release/examples/bench-rules "$@"
