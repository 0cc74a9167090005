#!/bin/sh
# The module graph of the ling library: which top-level module of src/ uses which (`crate::NAME`
# anywhere in its files, tests included), checked against the layers below. Every edge must point
# to a lower layer; an edge within a layer or back up is printed as a violation and the script
# exits 1. Usage: scripts/module-graph.sh [--dot]   (--dot: Graphviz output instead of the list)
set -eu
cd "$(dirname "$0")/.."

# Top to bottom; modules on one line are peers and must not use each other.
LAYERS='cli
front
ui
session
setup
agent trust
permissions rpc
tools hooks mcp llm
process checkpoint web telemetry
log http_client error_chain sse pending media program
config redact test_support'

layer_of() {
    echo "$LAYERS" | awk -v m="$1" '{ for (i = 1; i <= NF; i++) if ($i == m) { print NR; exit } }'
}

# `bin/` holds the other binaries (`ling-exec`), not library modules.
modules=$(ls src | sed -n 's/\.rs$//p; /\./!p' | grep -vx -e lib -e main -e bin -e prompts | sort -u)

edges=$(for m in $modules; do
    if [ -d "src/$m" ]; then files=$(find "src/$m" -name '*.rs'); else files="src/$m.rs"; fi
    # `crate::x` and `$crate::x`; `crate::term!` is the ui's exported macro.
    # shellcheck disable=SC2086
    grep -hoE '(\$)?crate::[a-z_]+' $files \
        | sed -E 's/^\$?crate:://; s/^term$/ui/' \
        | sort -u | grep -vx "$m" | sed "s/^/$m /" || true
done)

if [ "${1:-}" = "--dot" ]; then
    echo 'digraph ling {'
    echo "$edges" | awk 'NF == 2 { printf "  %s -> %s;\n", $1, $2 }'
    echo '}'
    exit 0
fi

status=0
for m in $modules; do
    from=$(layer_of "$m")
    if [ -z "$from" ]; then
        echo "module $m is in no layer: add it to LAYERS in $0"
        status=1
        continue
    fi
    deps=$(echo "$edges" | awk -v m="$m" '$1 == m { print $2 }' | tr '\n' ' ')
    printf '%-12s (layer %s) -> %s\n' "$m" "$from" "${deps:-(nothing)}"
    for d in $deps; do
        to=$(layer_of "$d")
        if [ -z "$to" ] || [ "$to" -le "$from" ]; then
            echo "  VIOLATION: $m (layer $from) uses $d (layer ${to:-none}), which is not below it"
            status=1
        fi
    done
done
# Inside a folder module (ui, front): the same rule among its own modules. An edge is
# `crate::FOLDER::NAME`, or `super::NAME` from a file directly in src/FOLDER (or a folder's mod.rs),
# `super::super::NAME` from a file in a folder; comments left out.
# inner FOLDER LAYERS: checks src/FOLDER's modules against LAYERS (top to bottom); `snapshots` holds
# insta's snapshots, no module.
inner() {
    folder=$1
    layers=$2
    inner_layer_of() {
        echo "$layers" | awk -v m="$1" '{ for (i = 1; i <= NF; i++) if ($i == m) { print NR; exit } }'
    }
    for m in $(ls "src/$folder" | sed 's/\.rs$//' | grep -vx -e mod -e snapshots); do
        from=$(inner_layer_of "$m")
        if [ -z "$from" ]; then
            echo "module $folder::$m is in no layer: add it to the layers of $folder in $0"
            status=1
            continue
        fi
        if [ -d "src/$folder/$m" ]; then
            deps=$(for f in $(find "src/$folder/$m" -name '*.rs'); do
                if [ "$(dirname "$f")" = "src/$folder/$m" ] && [ "$(basename "$f")" = mod.rs ]; then
                    pattern="(crate::$folder::|super::)[a-z_]+"
                else
                    pattern="(crate::$folder::|super::super::)[a-z_]+"
                fi
                grep -v '^ *//' "$f" | grep -oE "$pattern" || true
            done)
        else
            deps=$(grep -v '^ *//' "src/$folder/$m.rs" | grep -oE "(crate::$folder::|super::)[a-z_]+" || true)
        fi
        deps=$(echo "$deps" | sed -E 's/.*:://' | sort -u | grep -vx -e "$m" -e '' | tr '\n' ' ' || true)
        printf '  %s::%-10s (layer %s) -> %s\n' "$folder" "$m" "$from" "${deps:-(nothing)}"
        for d in $deps; do
            [ -e "src/$folder/$d.rs" ] || [ -d "src/$folder/$d" ] || continue
            to=$(inner_layer_of "$d")
            if [ -z "$to" ] || [ "$to" -le "$from" ]; then
                echo "  VIOLATION: $folder::$m (layer $from) uses $folder::$d (layer ${to:-none}), which is not below it"
                status=1
            fi
        done
    done
}

# The front ends: the stream-json session writes through -p's outputs; stream-json's and ACP's
# image blocks decode alike.
inner front 'repl acp serve claude
print
image_blocks'
# The terminal plumbing the front ends share.
inner ui 'trust login
subagent_view
markdown render signals
style
output
term
safe_text'

# Front ends and their plumbing reach a running session only through the session host
# (`crate::session`), never the agent or its setup directly.
for folder in front ui; do
    if grep -rnE 'crate::(agent|setup)\b' "src/$folder" | grep -v ':[0-9]*: *//'; then
        echo "  VIOLATION: src/$folder uses crate::agent or crate::setup; go through crate::session"
        status=1
    fi
done

[ "$status" -eq 0 ] && echo "no edge runs back up"
exit "$status"
