#!/bin/sh
# Builds ling and the background benchmark and runs it against the tests' mock model: Ling's
# peak RSS while a background command prints 1 GiB (bounded by the ring of settings
# `backgroundOutputBytes`), and a `--until` goal's rounds. Debug build by default (the figure is
# about memory, which the build type barely moves); `--release` for the release binary.
# `scripts/bench-background.sh [--release] [BYTES]`
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--release" ]; then
    shift
    cargo build --release --bin ling --bin ling-exec --example bench-background
    exec target/release/examples/bench-background target/release/ling "$@"
fi
cargo build --bin ling --bin ling-exec --example bench-background
exec target/debug/examples/bench-background target/debug/ling "$@"
