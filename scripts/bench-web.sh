#!/bin/sh
# Issue 32's figures (examples/bench-web.rs): web_fetch of a 1 MB HTML page from 127.0.0.1 (fetch
# and HTML → Markdown time, bytes in and characters out), and the bytes a 4000 x 3000 screenshot
# attached with `-i` adds to a request on each wire API, against the mock model of the tests.
# Release build.
#   scripts/bench-web.sh [all|fetch|image] [RUNS]
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ling --example bench-web
exec target/release/examples/bench-web "${1:-all}" target/release/ling "${2:-10}"
