#!/bin/sh
# Builds `ling` and the spawn benchmark in release mode and times `bash -c true` started directly
# against the same through the `ling __ling-exec` trampoline: `scripts/bench-spawn.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling --example bench-spawn
exec target/release/examples/bench-spawn target/release/ling "$@"
