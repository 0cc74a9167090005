#!/bin/sh
# Builds the markdown rendering benchmark in release mode and runs it:
# `scripts/bench-markdown.sh [N]`.
set -eu
cd "$(dirname "$0")/.."
cargo build --release --example bench-markdown
exec target/release/examples/bench-markdown "$@"
