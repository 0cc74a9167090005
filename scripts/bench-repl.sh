#!/bin/sh
# The REPL's paint against the stream, end to end: builds ling in release mode and the benchmark,
# and runs the real binary in a pseudo-terminal against a mock model on 127.0.0.1, and `-p` on
# the same mock: `scripts/bench-repl.sh [N]` (N runs of each, default 3).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling
cargo build --example bench-repl
exec target/debug/examples/bench-repl target/release/ling "$@"
