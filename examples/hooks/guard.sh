#!/bin/sh
# PreToolUse hook for the `bash` tool: blocks `rm -rf` and force pushes.
# Input: the hook JSON on stdin. Exit 2 with the reason on stderr blocks the call; the reason
# becomes the tool result the model reads. Works as a Claude Code hook too.

input=$(cat)

# The command the model wants to run. Without python3 (or on unreadable input) the whole input
# is checked instead: stricter, never looser.
cmd=$(printf '%s' "$input" | python3 -c '
import json, sys
print(json.load(sys.stdin)["tool_input"]["command"])
' 2>/dev/null) || cmd=$input

ws='[[:space:]]'
opt="-[^[:space:]]*$ws+"
start="(^|[;&|(\`\$[:space:]])(sudo$ws+)?"

# rm with a recursive and a force flag, together (-rf, -fR) or apart (-r -f, --recursive --force).
rm_together="${start}rm$ws+($opt)*-[[:alnum:]]*([rR][[:alnum:]]*f|f[[:alnum:]]*[rR])"
rm_apart="${start}rm$ws+($opt)*(-[[:alnum:]]*[rR][[:alnum:]]*|--recursive)$ws+($opt)*(-[[:alnum:]]*f[[:alnum:]]*|--force)($ws|$)"
rm_apart2="${start}rm$ws+($opt)*(-[[:alnum:]]*f[[:alnum:]]*|--force)$ws+($opt)*(-[[:alnum:]]*[rR][[:alnum:]]*|--recursive)($ws|$)"

# git push with --force, -f (alone or bundled) or a +refspec; --force-with-lease is allowed.
push="${start}git$ws+([^;&|[:space:]]+$ws+)*push($ws+[^;&|]*)?$ws"
push_force="${push}(--force|-[[:alnum:]]*f[[:alnum:]]*|\+[^[:space:]]+)($ws|$)"

matches() {
    printf '%s\n' "$cmd" | grep -Eq -- "$1"
}

if matches "$rm_together" || matches "$rm_apart" || matches "$rm_apart2"; then
    echo "Blocked by examples/hooks/guard.sh: \`rm -rf\` is not allowed here. Remove specific files by name instead, or ask the user to run it." >&2
    exit 2
fi
if matches "$push_force"; then
    echo "Blocked by examples/hooks/guard.sh: force pushes are not allowed. Use \`git push --force-with-lease\` if the user asked for a rewrite of the remote branch." >&2
    exit 2
fi
exit 0
