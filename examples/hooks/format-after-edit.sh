#!/bin/sh
# PostToolUse hook for write_file|edit_file: runs rustfmt on the .rs file the tool wrote and,
# when that changed it, tells the model through additionalContext (its copy is stale now).
# RUSTFMT_EDITION overrides the edition (default 2024, Ling's own).

path=$(python3 -c '
import json, sys
print(json.load(sys.stdin).get("tool_input", {}).get("path", ""))
') || exit 1

case "$path" in
    *.rs) ;;
    *) exit 0 ;;
esac
case "$path" in
    /*) file=$path ;;
    *) file="${LING_PROJECT_DIR:-.}/$path" ;;
esac
[ -f "$file" ] || exit 0
command -v rustfmt >/dev/null 2>&1 || { echo "format-after-edit.sh: rustfmt is not installed" >&2; exit 1; }

before=$(cksum < "$file")
if out=$(rustfmt --edition "${RUSTFMT_EDITION:-2024}" "$file" 2>&1); then
    [ "$(cksum < "$file")" = "$before" ] && exit 0
    message="rustfmt reformatted $path after your edit; read it again before editing it further."
else
    message="rustfmt could not format $path (it may not compile yet): $out"
fi

python3 -c '
import json, sys
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": sys.argv[1]}}))
' "$message"
