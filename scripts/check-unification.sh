#!/usr/bin/env bash
# Checks that one build serves both `cargo build --workspace` and `cargo build -p ling-agent`.
# Cargo unifies the features of shared dependencies over the packages it builds; when the
# example server turned on a feature Ling does not, the two commands built different variants of
# Ling and of what it depends on, so each rebuilt in the other's place. The check compares the
# artifacts (their file names carry the hash of their features) that the two builds use, so it
# holds whatever the target directory already has cached. Features do not depend on the profile:
# the dev profile answers for `--release` too. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

artifacts() { # cargo build arguments; prints "package_id<TAB>file" per artifact file
  cargo build --locked --message-format=json "$@" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact":
        for name in msg["filenames"]:
            print(msg["package_id"] + "\t" + name)
'
}
workspace="$(mktemp)"
alone="$(mktemp)"
trap 'rm -f "$workspace" "$alone"' EXIT
artifacts --workspace | sort -u > "$workspace"
artifacts -p ling-agent | sort -u > "$alone"
differ="$(comm -13 "$workspace" "$alone" | cut -f1 | sort -u)"
if [ -n "$differ" ]; then
  echo "check-unification: \`cargo build -p ling-agent\` builds these differently than the workspace build:" >&2
  echo "$differ" >&2
  echo "A dependency gets other features in the workspace build; name the feature in" >&2
  echo "ling-agent's Cargo.toml too (as for hashbrown) so the two builds agree." >&2
  exit 1
fi
echo "check-unification: one build serves the workspace and ling-agent alone ($(wc -l < "$alone") artifacts)"
