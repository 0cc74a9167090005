#!/bin/sh
# The REPL's paint against the stream, end to end: builds ling in release mode and the benchmark,
# and runs the real binary in a pseudo-terminal against a mock model on 127.0.0.1, and `-p` on
# the same mock: `scripts/bench-repl.sh [N]` (N runs of each, default 3).
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling
# Release too: a debug build's mock and pty reader stream slower than ling reads, which would
# flatter both sides' wall times.
cargo build --release --example bench-repl
exec target/release/examples/bench-repl target/release/ling "$@"
