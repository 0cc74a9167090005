#!/usr/bin/env bash
# Validates the Kubernetes manifests of examples/k8s/ against the API's schemas (strict: an
# unknown field is an error), with kubernetes-validate from PyPI, which bundles the schemas
# (no cluster, no download at run time). Installed once into ~/.cache/ling/tools/k8s-venv.
# Then checks the check: a manifest with a misspelt field must fail.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.37.0
venv="${LING_TOOLS_DIR:-$HOME/.cache/ling/tools}/k8s-venv"
if ! "$venv/bin/kubernetes-validate" --version 2> /dev/null | grep -q "$version"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "kubernetes-validate==$version"
fi
"$venv/bin/kubernetes-validate" --strict --quiet examples/k8s/*.yaml
broken="$(mktemp --suffix=.yaml)"
trap 'rm -f "$broken"' EXIT
sed 's/^  completions: /  completionz: /' examples/k8s/indexed-job.yaml > "$broken"
if "$venv/bin/kubernetes-validate" --strict --quiet "$broken" > /dev/null 2>&1; then
  echo "check-k8s: a misspelt field passed the validator; the check checks nothing" >&2
  exit 1
fi
echo "examples/k8s: every manifest is valid (kubernetes-validate $version, strict)"
