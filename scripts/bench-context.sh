#!/bin/sh
# Builds the long-session benchmark in release mode and runs it: the token estimate's error
# against tiktoken (o200k, cl100k), Ling's own time per compaction, and the request size by turn
# with and without elision. `scripts/bench-context.sh`
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench-context
exec target/release/examples/bench-context "$@"
