#!/bin/sh
# Builds ling and the sub-agent benchmark in release mode and runs it against the tests' mock
# model: four sub-agents at once against the slowest alone, the parent's request growth, and the
# first request with 100 skills and 20 agent definitions. `scripts/bench-subagents.sh`
set -eu
cd "$(dirname "$0")/.."
cargo build --release --bin ling --example bench-subagents
exec target/release/examples/bench-subagents target/release/ling "$@"
