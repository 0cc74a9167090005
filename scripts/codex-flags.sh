#!/usr/bin/env bash
# Counts how many flags of Codex's `codex exec --help` Ling honours, refuses with a reason, or
# does not know (clap's generic error). The list is Codex's exec command line as its source
# defines it (openai/codex codex-rs/exec/src/cli.rs, utils/cli/src/shared_options.rs and
# config_override.rs; --enable/--disable are its root's feature flags; --thread-source and
# --cyber-access-program are what @openai/codex-sdk may pass). Each is run as
# `ling exec FLAG [VALUE] hi` against a model URL where nothing listens, with a temporary HOME
# and LING_HOME: a refusal names the flag ("is a Codex flag Ling does not support"), clap's
# "unexpected argument" is unknown, anything else got past the command line (honoured).
#   scripts/codex-flags.sh [path/to/ling]
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LING="${1:-$ROOT/target/debug/ling}"
[ -x "$LING" ] || { echo "codex-flags: build first (cargo build), or pass the binary" >&2; exit 1; }
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/home" "$TMP/ling" "$TMP/project"
printf '{"type":"object"}' > "$TMP/schema.json"

# flag|arguments (after the flag)
FLAGS=(
  "-c|model=\"o3\"" "--config|model=\"o3\"" "-i|$ROOT/tests/fixtures/none.png" "--image|x.png"
  "-m|o3" "--model|o3" "--oss|" "--local-provider|ollama" "-p|default" "--profile|default"
  "-s|workspace-write" "--sandbox|read-only" "--dangerously-bypass-approvals-and-sandbox|"
  "--yolo|" "--not-so-yolo|" "-C|$TMP/project" "--cd|$TMP/project" "--add-dir|$TMP/project"
  "--skip-git-repo-check|" "--ephemeral|" "--ignore-user-config|" "--ignore-rules|"
  "--full-auto|" "--output-schema|$TMP/schema.json" "--color|never" "--json|"
  "--experimental-json|" "-o|$TMP/last.txt" "--output-last-message|$TMP/last.txt"
  "--enable|web_search" "--disable|web_search" "--thread-source|user"
  "--cyber-access-program|standard" "--progress-cursor|" "-a|never" "--ask-for-approval|never"
)
SUBCOMMANDS=("resume --last hi" "resume 00000000-0000-4000-8000-000000000000 hi" "review --uncommitted")

honoured=0; refused=0; unknown=0
classify() {
  local label="$1"; shift
  local err
  err="$(cd "$TMP/project" && HOME="$TMP/home" LING_HOME="$TMP/ling" OPENAI_BASE_URL=http://127.0.0.1:9/v1 \
    LING_RETRY_BASE_MS=1 LING_MAX_RETRIES=0 timeout 20 "$LING" exec "$@" </dev/null 2>&1 >/dev/null)"
  if grep -q "is a Codex flag Ling does not support\|Ling does not read Codex" <<<"$err"; then
    refused=$((refused + 1)); echo "refused   $label: $(grep -o 'support: .*\|Ling does not read.*' <<<"$err" | head -1)"
  elif grep -q "unexpected argument\|unrecognized subcommand" <<<"$err"; then
    unknown=$((unknown + 1)); echo "unknown   $label"
  else
    honoured=$((honoured + 1)); echo "honoured  $label"
  fi
}
for entry in "${FLAGS[@]}"; do
  flag="${entry%%|*}"; value="${entry#*|}"
  if [ -n "$value" ]; then classify "$flag" "$flag" "$value" hi; else classify "$flag" "$flag" hi; fi
done
for sub in "${SUBCOMMANDS[@]}"; do
  # shellcheck disable=SC2086
  classify "exec $sub" $sub
done
total=$((honoured + refused + unknown))
echo "codex exec: $total flags and subcommands: $honoured honoured, $refused refused with a reason, $unknown unknown"
