#!/usr/bin/env bash
# Fails when `go mod tidy` would change the go.mod or go.sum of any module in
# the repository (the function's and every nested one: test suites, tools
# modules). Uses `go mod tidy -diff`, which changes nothing and prints the
# diff. The modules are checked concurrently: on a cold module cache most of
# the time is downloads of test-only dependencies, not CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
mods=()
skipped=()
for gomod in $(git ls-files '*go.mod' 'go.mod' | sort -u); do
  dir=$(dirname "$gomod")
  # A module that replaces a dependency with a directory its build fetches
  # (tools/cdi-importer: the libnbd Go bindings, from Debian's source
  # package, which no module proxy serves) cannot be tidied without it; its
  # build (test/e2e/hack/build-binaries.sh) compiles it against go.sum.
  missing=$(cd "$dir" && go mod edit -json | grep -o '"Path": "\./[^"]*"' | sed 's/"Path": "//; s/"$//' | while read -r p; do [ -e "$p" ] || echo "$p"; done || true)
  if [ -n "$missing" ]; then
    skipped+=("$dir (replaced by $missing, fetched by its build)")
    continue
  fi
  mods+=("$dir")
  (cd "$dir" && go mod tidy -diff) > "$out/${#mods[@]}" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "go mod tidy would change module ${mods[$i]}: run (cd ${mods[$i]} && go mod tidy) and commit" >&2
    grep -v '^go: downloading ' "$out/$((i + 1))" >&2 || true
    status=1
  fi
done
for s in "${skipped[@]}"; do echo "tidy: skipped $s" >&2; done
[ "$status" = 0 ] && echo "tidy: ${#mods[@]} modules"
exit $status
