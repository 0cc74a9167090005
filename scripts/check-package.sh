#!/usr/bin/env bash
# Checks that the source tarball of `ling-agent` (what `cargo package` makes and crates.io would
# serve) installs with `cargo install --locked --path DIR`, and that the installed `ling` runs:
# every file the build needs is in the package, and its Cargo.lock is the workspace's.
# Debug build, reusing this checkout's target directory for the dependencies, so it costs one
# compile of Ling itself. Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ling-agent"))')"
cargo package --locked --no-verify --allow-dirty -p ling-agent --quiet
crate="target/package/ling-agent-$version.crate"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$crate" -C "$work"
cargo install --locked --debug --quiet --path "$work/ling-agent-$version" \
  --root "$work/root" --target-dir "$PWD/target"
"$work/root/bin/ling" --version
test -x "$work/root/bin/ling-exec"
echo "check-package: $crate ($(du -h "$crate" | cut -f1)) installs ling and ling-exec"
