#!/usr/bin/env bash
# Start-up figures of the release binary: `ling --version` wall time and peak RSS, the size of
# the binary, one-shot text on loopback (`ling -p hi` against the tests' mock model, each wire API)
# as a ratio to `ling --version` in the same run, and the TLS set-up an https:// server costs.
# With --all, also runs the tool, hook and MCP benchmarks (scripts/bench-*.sh).
# Needs hyperfine (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v hyperfine >/dev/null; then
  apt-get install -y -qq hyperfine >/dev/null 2>&1 || { echo "bench: install hyperfine first" >&2; exit 1; }
fi
cargo build --release --quiet --bin ling
bin=target/release/ling

echo "== ling --version: wall time"
hyperfine --warmup 20 --runs 200 -N "$bin --version" --export-json /tmp/ling-version.json >/dev/null
python3 - <<'PY'
import json
r = json.load(open("/tmp/ling-version.json"))["results"][0]
print(f"mean {r['mean']*1000:.2f} ms, median {r['median']*1000:.2f} ms, max {r['max']*1000:.2f} ms")
PY

echo "== ling --version: peak RSS"
rss_max=0
for _ in $(seq 1 20); do
  rss=$(/usr/bin/time -f '%M' "$bin" --version 2>&1 >/dev/null | tail -1)
  [ "$rss" -gt "$rss_max" ] && rss_max=$rss
done
echo "peak RSS ${rss_max} KiB ($((rss_max / 1024)) MiB), worst of 20 runs"

echo "== release binary size"
bytes=$(stat -c %s "$bin")
echo "$bin: $bytes bytes ($((bytes / 1024 / 1024)) MiB)"

echo "== one-shot text on loopback against ling --version (examples/bench-api.rs)"
cargo build --release --quiet --example bench-api
target/release/examples/bench-api oneshot "$bin" 30
target/release/examples/bench-api tls "$bin" 10

if [ "${1:-}" = "--all" ]; then
  for script in scripts/bench-api.sh scripts/bench-grep.sh scripts/bench-hooks.sh scripts/bench-rules.sh scripts/bench-mcp.sh scripts/bench-safe-text.sh scripts/bench-spawn.sh; do
    [ -x "$script" ] && { echo; echo "== $script"; "$script"; }
  done
fi
