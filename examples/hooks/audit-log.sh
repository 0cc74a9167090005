#!/bin/sh
# Any event: appends one JSON line per hook call to $LING_PROJECT_DIR/.ling/audit.jsonl,
# {"time": "...", "input": <the hook input>}. Good as an `async: true` handler.

dir="${LING_PROJECT_DIR:-${CLAUDE_PROJECT_DIR:-.}}/.ling"
mkdir -p "$dir" || exit 1

# The input is one JSON document; raw newlines in it can only be whitespace between tokens
# (JSON escapes them inside strings), so dropping them keeps it valid and on one line.
input=$(tr -d '\n\r')
[ -n "$input" ] || input=null

printf '{"time":"%s","input":%s}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$input" >> "$dir/audit.jsonl"
