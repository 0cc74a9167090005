#!/bin/sh
# `ling acp` as an editor sees it (examples/bench-acp.rs), in a release build: the time from
# session/prompt to the first session/update against a mock model on 127.0.0.1, measured from
# the prompt and from the model's first byte (target: within 5 ms of it), and the RSS of an
# idle `ling acp` (after initialize, and with one session open).
#   scripts/bench-acp.sh [PROMPTS]        (default 200)
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin ling --bin ling-exec --example bench-acp
echo "load: $(uptime)"
exec target/release/examples/bench-acp "$PWD/target/release/ling" "$@"
