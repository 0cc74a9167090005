#!/usr/bin/env bash
# Compares the grep tool with ripgrep on the same tree.
#   scripts/bench-grep.sh [DIR] [PATTERN] [RUNS]
# DIR defaults to the cargo registry sources (~/.cargo/registry/src, ~170 MB of Rust code).
# Both sides search with .gitignore applied outside git checkouts too (rg --no-require-git).
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-$HOME/.cargo/registry/src}
pattern=${2:-'fn\s+\w+_unchecked'}
runs=${3:-10}
[ -d "$dir" ] || { echo "no such directory: $dir" >&2; exit 2; }

if ! command -v rg >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        apt-get install -y ripgrep >/dev/null
    else
        cargo install ripgrep --locked --root .cache/ripgrep
        export PATH="$PWD/.cache/ripgrep/bin:$PATH"
    fi
fi

cargo build --release --example bench-grep
bench=target/release/examples/bench-grep
echo "tree: $dir ($(du -sh "$dir" | cut -f1)), pattern: $pattern, $(rg --version | head -1)"

for mode in content files; do
    rg_flag=-n
    [ "$mode" = files ] && rg_flag=-l
    echo "== output=$mode (rg $rg_flag)"
    # Warm the page cache so both sides read from memory.
    rg --no-require-git $rg_flag "$pattern" "$dir" >/dev/null || true
    "$bench" "$dir" "$pattern" "$runs" "$mode"
    if command -v hyperfine >/dev/null; then
        hyperfine --warmup 2 --runs "$runs" --style basic -i \
            "rg --no-require-git $rg_flag '$pattern' '$dir' > /dev/null" | grep -E 'Time|Range'
    else
        times=()
        for _ in $(seq "$runs"); do
            start=$(date +%s%N)
            rg --no-require-git $rg_flag "$pattern" "$dir" >/dev/null || true
            times+=($(( ($(date +%s%N) - start) / 1000000 )))
        done
        median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
        echo "rg: median ${median} ms over $runs runs"
    fi
done
