#!/bin/sh
# Builds `ling`, `ling-exec` and the spawn benchmark in release mode and times `bash -c true` started directly
# against the same through the trampolines and the shell sandbox: `scripts/bench-spawn.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling --bin ling-exec --example bench-spawn
exec target/release/examples/bench-spawn target/release/ling "$@"
