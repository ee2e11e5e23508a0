#!/usr/bin/env bash
# Prints the Crossplane core version the e2e suite and crossplane render use
# unless told otherwise: DefaultCrossplaneVersion in test/e2e/harness/crds.go,
# the one place it is written.
set -euo pipefail
crds="$(cd "$(dirname "$0")/.." && pwd)/harness/crds.go"
v=$(sed -nE 's/^[[:space:]]*DefaultCrossplaneVersion[[:space:]]*=[[:space:]]*"([^"]+)".*/\1/p' "$crds")
[ -n "$v" ] || { echo "no DefaultCrossplaneVersion in $crds" >&2; exit 1; }
echo "$v"
