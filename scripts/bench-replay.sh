#!/usr/bin/env bash
# A 30-turn session (29 bash calls, then the answer) recorded against a loopback mock model with
# --record, then replayed with --replay and no model: the replay's wall time against the live
# run's (hyperfine, installed with apt-get when missing). `scripts/bench-replay.sh [TURNS]`.
set -euo pipefail
cd "$(dirname "$0")/.."
turns="${1:-30}"
if ! command -v hyperfine > /dev/null; then
  apt-get install -y -qq hyperfine > /dev/null 2>&1 || { echo "install hyperfine first" >&2; exit 1; }
fi
cargo build --release --quiet --bin ling
bin="$PWD/target/release/ling"
work="$(mktemp -d)"
python3 scripts/bench-fleet-mock.py --turns "$turns" > "$work/port" &
mock=$!
trap 'kill $mock 2> /dev/null || true; rm -rf "$work"' EXIT
while [ ! -s "$work/port" ]; do sleep 0.05; done
mkdir -p "$work/home" "$work/project"
cd "$work/project"
export LING_HOME="$work/home" NO_COLOR=1
unset OPENAI_API_KEY ANTHROPIC_API_KEY LING_MODEL LING_BASE_URL OTEL_EXPORTER_OTLP_ENDPOINT
live="http://127.0.0.1:$(cat "$work/port")/v1"
run=(-p steps --allowed-tools bash --sandbox off --max-turns 100)
OPENAI_BASE_URL="$live" "$bin" "${run[@]}" --record "$work/tape.jsonl" > "$work/recorded.txt"
echo "recorded $(wc -l < "$work/tape.jsonl") model requests ($(wc -c < "$work/tape.jsonl") bytes)"
OPENAI_BASE_URL=http://127.0.0.1:9/v1 "$bin" "${run[@]}" --replay "$work/tape.jsonl" > "$work/replayed.txt"
cmp "$work/recorded.txt" "$work/replayed.txt" && echo "replayed output is the recorded one"
hyperfine --warmup 2 --runs 10 -N \
  -n live "env OPENAI_BASE_URL=$live $bin ${run[*]}" \
  -n replay "env OPENAI_BASE_URL=http://127.0.0.1:9/v1 $bin ${run[*]} --replay $work/tape.jsonl"
