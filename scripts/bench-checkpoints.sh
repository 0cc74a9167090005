#!/bin/sh
# Builds Ling and the checkpoint benchmark in release mode and runs it (issue 31): the cost of a
# session's first look, of a turn and of a call that writes, on a 10,000-file project and on one
# with a 200 MB ignored build folder, the storage of a one-file edit, the walk without inotify,
# and `ling -p` with 40 sandboxed bash calls with checkpoints on and off.
#   scripts/bench-checkpoints.sh
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling --bin ling-exec --example bench-checkpoints
exec target/release/examples/bench-checkpoints "$PWD/target/release/ling"
