#!/bin/sh
# PreToolUse hook for the `bash` tool: blocks `rm -rf` and force pushes.
# Input: the hook JSON on stdin. Exit 2 with the reason on stderr blocks the call; the reason
# becomes the tool result the model reads. Works as a Claude Code hook too.
#
# The command is split into words the way the shell does (python3's shlex: quotes and
# backslashes removed, so `'rm'`, `r''m` and `\rm` are all `rm`; a program given by path,
# `/bin/rm`, is matched by its name), and text run by `sh -c`, `eval` or `$(...)` is checked
# too. This is a guard against mistakes, not a sandbox: code a script or interpreter runs is
# not seen. Without python3 (or on unreadable input) the whole input is checked with quotes
# and backslashes removed: stricter, never looser.

input=$(cat)

verdict=$(printf '%s' "$input" | python3 -c '
import json, os, re, shlex, sys

SEPARATORS = set(";&|()<>\n")
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash", "eval", "su", "env", "watch", "flock",
          "xargs", "sudo", "doas", "ssh", "nohup", "timeout", "find"}

def words(text):
    lexer = shlex.shlex(text.replace("\n", ";"), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        # Unbalanced quotes: bash would refuse it, but check it anyway without its quotes.
        return re.sub(r"[\x27\"\\]", "", text).replace("\n", ";").split()

def segments(tokens):
    current = []
    for token in tokens:
        if token and all(c in SEPARATORS for c in token):
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current

def name(word):
    word = word.strip("`{}!$")
    return os.path.basename(word) if "/" in word else word

def rm_rf(args):
    recursive = force = False
    for arg in args:
        if arg == "--":
            break
        if arg == "--recursive":
            recursive = True
        elif arg == "--force":
            force = True
        elif re.fullmatch(r"-[A-Za-z]+", arg):
            recursive |= "r" in arg or "R" in arg
            force |= "f" in arg
    return recursive and force

def force_push(args):
    for arg in args:
        if arg in ("--force", "-f") or re.fullmatch(r"-[A-Za-z]*f[A-Za-z]*", arg):
            return True
        if arg.startswith("+") and len(arg) > 1:
            return True
    return False

def check(text, depth=0):
    if depth > 8:
        return None
    tokens = words(text)
    for segment in segments(tokens):
        names = [name(w) for w in segment]
        for i, program in enumerate(names):
            if program == "rm" and rm_rf(segment[i + 1:]):
                return "rm"
            if program == "git" and "push" in names[i + 1:]:
                at = names.index("push", i + 1)
                if force_push(segment[at + 1:]):
                    return "push"
        # Text that a shell, eval or a substitution runs is checked like the command itself.
        nested = any(n in SHELLS for n in names)
        for word in segment:
            inner = None
            if "$(" in word or "`" in word:
                inner = re.sub(r"[$()`]", " ", word)
            elif nested and re.search(r"\s", word):
                inner = word
            if inner is not None:
                found = check(inner, depth + 1)
                if found:
                    return found
    return None

command = json.load(sys.stdin)["tool_input"]["command"]
print(check(command) or "ok")
' 2>/dev/null)

if [ -z "$verdict" ]; then
    # No python3, or input that is not the hook JSON: check the whole text, unquoted.
    flat=$(printf '%s' "$input" | tr -d "'\"\\\\")
    ws='[[:space:]]'
    opt="-[^[:space:]]*$ws+"
    start="(^|[;&|(\`\$/:{[:space:]])"
    end="($ws|$|[;&|)}])"
    rm_flags="-[[:alnum:]]*([rR][[:alnum:]]*f|f[[:alnum:]]*[rR])"
    if printf '%s\n' "$flat" | grep -Eq -- "${start}rm$ws+($opt)*$rm_flags" ||
        { printf '%s\n' "$flat" | grep -Eq -- "${start}rm$ws" &&
          printf '%s\n' "$flat" | grep -Eq -- "$ws(-[[:alnum:]]*[rR]|--recursive)" &&
          printf '%s\n' "$flat" | grep -Eq -- "$ws(-[[:alnum:]]*f|--force)$end"; }; then
        verdict=rm
    elif printf '%s\n' "$flat" | grep -Eq -- "${start}git$ws.*push.*$ws(--force|-[[:alnum:]]*f[[:alnum:]]*|\+[^[:space:]]+)$end"; then
        verdict=push
    fi
fi

case $verdict in
rm)
    echo "Blocked by examples/hooks/guard.sh: \`rm -rf\` is not allowed here. Remove specific files by name instead, or ask the user to run it." >&2
    exit 2
    ;;
push)
    echo "Blocked by examples/hooks/guard.sh: force pushes are not allowed. Use \`git push --force-with-lease\` if the user asked for a rewrite of the remote branch." >&2
    exit 2
    ;;
esac
exit 0
