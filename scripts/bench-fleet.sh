#!/usr/bin/env bash
# 100 `ling -p` at once sharing one LING_HOME, telemetry on (a loopback OTLP collector), against
# a loopback mock model (scripts/bench-fleet-mock.py): every run answered, no file of LING_HOME
# corrupted (each .json parses, each .jsonl line parses), per-run peak RSS, the batch's wall
# time and what the collector received. `scripts/bench-fleet.sh [RUNS] [LING_BINARY]`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-100}"
bin="${2:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin ling
  bin="$PWD/target/release/ling"
fi
work="$(mktemp -d)"
counts="$work/counts.json"
python3 scripts/bench-fleet-mock.py --counts "$counts" > "$work/port" &
mock=$!
trap 'kill $mock 2> /dev/null || true; rm -rf "$work"' EXIT
while [ ! -s "$work/port" ]; do sleep 0.05; done
port="$(cat "$work/port")"
mkdir -p "$work/home" "$work/project" "$work/out"
export LING_HOME="$work/home" OPENAI_BASE_URL="http://127.0.0.1:$port/v1" NO_COLOR=1
export OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$port" OTEL_EXPORTER_OTLP_PROTOCOL=http/json
unset OPENAI_API_KEY ANTHROPIC_API_KEY LING_MODEL LING_BASE_URL
start=$(date +%s.%N)
for i in $(seq 1 "$runs"); do
  (
    cd "$work/project"
    /usr/bin/time -f '%M' -o "$work/out/$i.rss" "$bin" -p "task $i" --output-format json \
      > "$work/out/$i.json" 2> "$work/out/$i.err"
    echo $? > "$work/out/$i.code"
  ) &
done
wait $(jobs -p | grep -v "^$mock$") 2> /dev/null || true
end=$(date +%s.%N)
kill -TERM $mock; wait $mock 2> /dev/null || true
python3 - "$work" "$runs" "$start" "$end" <<'PY'
import json, pathlib, statistics, sys
work, runs, start, end = pathlib.Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
out = work / "out"
codes = [int((out / f"{i}.code").read_text()) for i in range(1, runs + 1)]
answered = 0
for i in range(1, runs + 1):
    try:
        if json.loads((out / f"{i}.json").read_text())["subtype"] == "success":
            answered += 1
    except Exception as e:
        print(f"run {i}: no JSON result ({e}); stderr: {(out / f'{i}.err').read_text()[:300]}")
rss = sorted(int((out / f"{i}.rss").read_text().split()[-1]) for i in range(1, runs + 1))
bad = []
files = 0
for path in (work / "home").rglob("*"):
    if path.suffix == ".json":
        files += 1
        try:
            json.loads(path.read_text())
        except Exception as e:
            bad.append(f"{path}: {e}")
    elif path.suffix == ".jsonl":
        files += 1
        for n, line in enumerate(path.read_text().splitlines(), 1):
            try:
                json.loads(line)
            except Exception as e:
                bad.append(f"{path}:{n}: {e}")
counts = json.loads((work / "counts.json").read_text())
print(f"runs: {runs}, exit 0: {codes.count(0)}, answered (subtype success): {answered}")
print(f"LING_HOME: {files} JSON/JSONL files checked, {len(bad)} corrupted")
for b in bad[:10]:
    print("  " + b)
print(f"peak RSS per run: min {rss[0]/1024:.1f} MiB, median {statistics.median(rss)/1024:.1f} MiB, max {rss[-1]/1024:.1f} MiB")
print(f"wall time of the batch: {end - start:.2f} s")
print(f"collector received: {counts['traces']} trace, {counts['metrics']} metric, {counts['logs']} log exports; model requests: {counts['model']}")
sys.exit(0 if answered == runs and not bad else 1)
PY
