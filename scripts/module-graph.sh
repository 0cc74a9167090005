#!/bin/sh
# The module graph of the ling library: which top-level module of src/ uses which (`crate::NAME`
# anywhere in its files, tests included), checked against the layers below. Every edge must point
# to a lower layer; an edge within a layer or back up is printed as a violation and the script
# exits 1. Usage: scripts/module-graph.sh [--dot]   (--dot: Graphviz output instead of the list)
set -eu
cd "$(dirname "$0")/.."

# Top to bottom; modules on one line are peers and must not use each other.
LAYERS='cli
acp serve
ui
setup
agent trust
permissions rpc
tools hooks mcp llm
process web
log http_client error_chain media
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
# Inside ui: the REPL's module on top, the shared terminal plumbing below it (the same rule:
# every edge points down). An edge is `crate::ui::NAME`, or `super::NAME` from a file directly in
# src/ui (or a folder's mod.rs), `super::super::NAME` from a file in a folder; comments left out.
UI_LAYERS='repl
print trust login
subagent_view
markdown render signals
style
output
term
safe_text'
ui_layer_of() {
    echo "$UI_LAYERS" | awk -v m="$1" '{ for (i = 1; i <= NF; i++) if ($i == m) { print NR; exit } }'
}
for m in $(ls src/ui | sed 's/\.rs$//' | grep -vx mod); do
    from=$(ui_layer_of "$m")
    if [ -z "$from" ]; then
        echo "module ui::$m is in no layer: add it to UI_LAYERS in $0"
        status=1
        continue
    fi
    if [ -d "src/ui/$m" ]; then
        deps=$(for f in $(find "src/ui/$m" -name '*.rs'); do
            if [ "$(dirname "$f")" = "src/ui/$m" ] && [ "$(basename "$f")" = mod.rs ]; then
                pattern='(crate::ui::|super::)[a-z_]+'
            else
                pattern='(crate::ui::|super::super::)[a-z_]+'
            fi
            grep -v '^ *//' "$f" | grep -oE "$pattern" || true
        done)
    else
        deps=$(grep -v '^ *//' "src/ui/$m.rs" | grep -oE '(crate::ui::|super::)[a-z_]+' || true)
    fi
    deps=$(echo "$deps" | sed -E 's/.*:://' | sort -u | grep -vx -e "$m" -e '' | tr '\n' ' ' || true)
    printf '  ui::%-10s (layer %s) -> %s\n' "$m" "$from" "${deps:-(nothing)}"
    for d in $deps; do
        [ -e "src/ui/$d.rs" ] || [ -d "src/ui/$d" ] || continue
        to=$(ui_layer_of "$d")
        if [ -z "$to" ] || [ "$to" -le "$from" ]; then
            echo "  VIOLATION: ui::$m (layer $from) uses ui::$d (layer ${to:-none}), which is not below it"
            status=1
        fi
    done
done

[ "$status" -eq 0 ] && echo "no edge runs back up"
exit "$status"
