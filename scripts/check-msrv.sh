#!/usr/bin/env bash
# Checks Ling's `rust-version` (its MSRV) as far as this machine allows. There is one Rust
# toolchain here (rustup's stable) and no other can be downloaded, so the check has three parts:
#
# 1. Every crate in Cargo.lock that is built on this platform declares a `rust-version` no
#    newer than Ling's (from `cargo metadata`). Crates that declare none cannot be judged this
#    way; they are counted.
# 2. No standard-library API newer than the MSRV is used: clippy's `incompatible_msrv` lint,
#    which reads `rust-version`, runs (denied) in the clippy step of .ci/run, not here.
# 3. A real `cargo check --all-targets` with a compiler of exactly the MSRV, when one can be
#    had: Debian ships one (`rustc-web`), installed here by apt-get when its version matches.
#    When none matches, this says so and the build itself is not checked, so language features
#    newer than the MSRV (let chains, say), in Ling or in a crate that declares no
#    `rust-version`, go unseen.
set -euo pipefail
cd "$(dirname "$0")/.."

host="$(rustc -vV | sed -n 's/^host: //p')"
metadata="$(cargo metadata --format-version 1 --locked --filter-platform "$host")"
msrv="$(printf '%s' "$metadata" | python3 -c '
import json, sys
meta = json.load(sys.stdin)
root = meta["resolve"]["root"] or meta["workspace_members"][0]
print(next(p["rust_version"] for p in meta["packages"] if p["id"] == root))
')"
echo "check-msrv: rust-version is $msrv"

# 1. What the dependencies declare.
printf '%s' "$metadata" | MSRV="$msrv" python3 -c '
import json, os, sys
def version(text):
    return tuple(int(part) for part in text.split(".")) + (0,) * (3 - text.count(".") - 1)
msrv = version(os.environ["MSRV"])
meta = json.load(sys.stdin)
built = {node["id"] for node in meta["resolve"]["nodes"]}
newer, undeclared = [], 0
for package in meta["packages"]:
    if package["id"] not in built or package["source"] is None:
        continue
    declared = package.get("rust_version")
    if declared is None:
        undeclared += 1
    elif version(declared) > msrv:
        name, release = package["name"], package["version"]
        newer.append(f"{name} {release} needs Rust {declared}")
print(f"check-msrv: {len(built)} crates; {undeclared} declare no rust-version")
if newer:
    print("check-msrv: these dependencies need a newer Rust than rust-version; raise it, or pin",
          "an older release with `cargo update -p NAME --precise VERSION`:", file=sys.stderr)
    for line in newer:
        print(f"  {line}", file=sys.stderr)
    sys.exit(1)
'

# 3. A real build, when a compiler of that version can be had.
want="$(printf '%s' "$msrv" | cut -d. -f1,2)"
debian="$(apt-cache policy rustc-web 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9]*\.[0-9]*\).*/\1/p')"
if [ "$debian" = "$want" ]; then
  if ! /usr/bin/rustc --version 2>/dev/null | grep -qF "rustc $want."; then
    echo "check-msrv: installing Debian's rustc-web $debian" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rustc-web cargo-web >/dev/null
  fi
  echo "check-msrv: building with $(/usr/bin/rustc --version)"
  RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO_TARGET_DIR=target/msrv \
    /usr/bin/cargo check --locked --all-targets --quiet
else
  echo "check-msrv: no Rust $want compiler here (Debian's rustc-web is ${debian:-not available})," \
    "so the build with Rust $want itself is not checked"
fi
