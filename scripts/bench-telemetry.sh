#!/usr/bin/env bash
# One-shot start (`ling -p hi` against a loopback mock model, scripts/bench-fleet-mock.py) with
# telemetry off and on (a loopback OTLP collector, http/json), against the same run of a build
# from before telemetry existed (BASE, default: the parent of the commit that added
# src/telemetry/): off should cost nothing, on at most a couple of milliseconds. hyperfine,
# installed with apt-get when missing. `scripts/bench-telemetry.sh [BASE]`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v hyperfine > /dev/null; then
  apt-get install -y -qq hyperfine > /dev/null 2>&1 || { echo "install hyperfine first" >&2; exit 1; }
fi
base="${1:-$(git log --format=%H --diff-filter=A -- src/telemetry/mod.rs | tail -1)^}"
work="$(mktemp -d)"
cargo build --release --quiet --bin ling
cp target/release/ling "$work/ling-new"
# The old source in a worktree of its own, built into this target directory (the dependencies
# they share are not built twice).
git worktree add --quiet --detach "$work/base" "$base"
(cd "$work/base" && CARGO_TARGET_DIR="$OLDPWD/target" cargo build --release --quiet --bin ling)
cp target/release/ling "$work/ling-base"
git worktree remove --force "$work/base"
cargo build --release --quiet --bin ling
python3 scripts/bench-fleet-mock.py > "$work/port" &
mock=$!
trap 'kill $mock 2> /dev/null || true; rm -rf "$work"' EXIT
while [ ! -s "$work/port" ]; do sleep 0.05; done
port="$(cat "$work/port")"
mkdir -p "$work/home" "$work/project"
cd "$work/project"
export LING_HOME="$work/home" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" NO_COLOR=1
unset OPENAI_API_KEY ANTHROPIC_API_KEY LING_MODEL LING_BASE_URL OTEL_EXPORTER_OTLP_ENDPOINT
on="env OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port OTEL_EXPORTER_OTLP_PROTOCOL=http/json"
hyperfine --warmup 5 --runs 40 -N \
  -n "before telemetry" "$work/ling-base -p hi" \
  -n "telemetry off" "$work/ling-new -p hi" \
  -n "telemetry on" "$on $work/ling-new -p hi"
