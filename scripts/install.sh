#!/bin/sh
# Installs Ling from a release archive (made by scripts/dist.sh): downloads
# ling-TARGET.tar.gz and its .sha256 for this machine, checks the checksum, and puts `ling` and
# its `ling-exec` helper (they belong side by side) into $LING_INSTALL_DIR, else ~/.local/bin.
#
#   curl -fsSL https://github.com/OWNER/REPO/releases/latest/download/install.sh | sh
#
# Settings (environment):
#   LING_VERSION        a release such as 0.2.0 (default: the latest)
#   LING_INSTALL_DIR    where the binaries go (default: ~/.local/bin)
#   LING_REPO           the GitHub repository, OWNER/NAME (the copy attached to a release has it)
#   LING_DOWNLOAD_URL   the folder holding the archives instead (any URL curl or wget reads,
#                       file:// too), e.g. a mirror
set -eu

REPO_DEFAULT=""
repo="${LING_REPO:-$REPO_DEFAULT}"

say() { printf 'install: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

case "$(uname -s)" in
  Linux) os=unknown-linux-musl ;;
  Darwin) os=apple-darwin ;;
  *) fail "no release for $(uname -s); build from source: cargo install --locked ling-agent" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=aarch64 ;;
  *) fail "no release for $(uname -m); build from source: cargo install --locked ling-agent" ;;
esac
target="$arch-$os"

if [ -n "${LING_DOWNLOAD_URL:-}" ]; then
  base="${LING_DOWNLOAD_URL%/}"
elif [ -n "$repo" ]; then
  if [ -n "${LING_VERSION:-}" ]; then
    base="https://github.com/$repo/releases/download/v${LING_VERSION#v}"
  else
    base="https://github.com/$repo/releases/latest/download"
  fi
else
  fail "set LING_REPO=OWNER/NAME (the repository that publishes the releases) or LING_DOWNLOAD_URL"
fi

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --proto '=https,file' -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    fail "needs curl or wget"
  fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    fail "needs sha256sum or shasum to check the download"
  fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
archive="ling-$target.tar.gz"
say "downloading $base/$archive"
fetch "$base/$archive" "$tmp/$archive" || fail "cannot download $base/$archive"
fetch "$base/$archive.sha256" "$tmp/$archive.sha256" || fail "cannot download $base/$archive.sha256"
want="$(cut -d' ' -f1 < "$tmp/$archive.sha256")"
got="$(sha256 "$tmp/$archive")"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "checksum mismatch for $archive (expected $want, got $got); nothing installed"

tar -xzf "$tmp/$archive" -C "$tmp"
dir="$tmp/ling-$target"
[ -x "$dir/ling" ] && [ -x "$dir/ling-exec" ] || fail "$archive does not hold ling and ling-exec"

dest="${LING_INSTALL_DIR:-$HOME/.local/bin}"
mkdir -p "$dest"
# Each binary replaced by a rename, so a running ling is never left with a half-written file.
for bin in ling-exec ling; do
  cp "$dir/$bin" "$dest/.$bin.new"
  chmod 755 "$dest/.$bin.new"
  mv -f "$dest/.$bin.new" "$dest/$bin"
done
say "installed ling $(cat "$dir/VERSION" 2>/dev/null || echo '') into $dest"
case ":$PATH:" in
  *":$dest:"*) ;;
  *) say "$dest is not on your PATH; add it, e.g. export PATH=\"$dest:\$PATH\"" ;;
esac
