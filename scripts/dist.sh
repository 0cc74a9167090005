#!/usr/bin/env bash
# Builds a release archive of Ling for one target with the `dist` profile (Cargo.toml):
#   dist/ling-TARGET.tar.gz          ling-TARGET/: ling, ling-exec, VERSION, README.md, LICENSE,
#                                     docs/ (with the man pages)
#   dist/ling-TARGET.tar.gz.sha256
# The names carry no version, so `releases/latest/download/ling-TARGET.tar.gz` always works.
# and prints the archive's path. The release workflow (.github/workflows/release.yml) runs it
# once per target; scripts/install.sh installs what it makes.
#
#   scripts/dist.sh                               # this machine's target, with cargo
#   scripts/dist.sh x86_64-unknown-linux-musl     # another target (its std must be installed)
#   CARGO="cargo zigbuild" scripts/dist.sh aarch64-unknown-linux-musl   # cross, static
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-$(rustc -vV | sed -n 's/^host: //p')}"
cargo_cmd="${CARGO:-cargo}"
version="$(cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import json, sys
print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "ling-agent"))')"

# shellcheck disable=SC2086 # CARGO may be two words (`cargo zigbuild`).
$cargo_cmd build --locked --profile dist --target "$target" -p ling-agent --bins
bin_dir="target/$target/dist"

name="ling-$target"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name"
cp "$bin_dir/ling" "$bin_dir/ling-exec" "$stage/$name/"
cp README.md LICENSE "$stage/$name/"
echo "$version" > "$stage/$name/VERSION"
cp -R docs "$stage/$name/docs"

mkdir -p dist
archive="dist/$name.tar.gz"
if tar --version 2>/dev/null | grep -q GNU; then
  # Reproducible: sorted names, no owner, the commit's time as every file's time.
  mtime="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    -C "$stage" -czf "$archive" "$name"
else
  tar -C "$stage" -czf "$archive" "$name" # macOS's bsdtar
fi
if command -v sha256sum >/dev/null; then
  (cd dist && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
else
  (cd dist && shasum -a 256 "$name.tar.gz" > "$name.tar.gz.sha256")
fi
echo "$archive"
