#!/bin/sh
# The three wire APIs against the mock model of the tests (examples/bench-api.rs): prompt caching
# over a 20-request session (bytes marked cacheable, share of input read from the cache), the
# one-shot wall time of each API against chat completions and `ling --version`, and the TLS
# set-up of an https:// server. Release build.
#   scripts/bench-api.sh [all|cache|oneshot|tls] [RUNS]
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ling --example bench-api
exec target/release/examples/bench-api "${1:-all}" target/release/ling "${2:-30}"
