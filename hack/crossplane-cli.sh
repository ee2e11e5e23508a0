#!/usr/bin/env bash
# Prints the path of the crossplane CLI pinned by hack/tools/crossplane, building
# it once per version into the user cache dir. A cold build takes minutes on a
# 2-core machine, so a cached binary is never rebuilt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools="$here/tools/crossplane"
version=$(sed -nE "s#^(require)?[[:space:]]*github.com/crossplane/crossplane/v2 (v[^ ]+).*#\2#p" "$tools/go.mod" | head -1)
[ -n "$version" ] || { echo "crossplane version not pinned in $tools/go.mod" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/function-worker-image/bin"
bin="$cache/crossplane-$version"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  echo "building crossplane CLI $version into $bin (once per version)" >&2
  tmp="$bin.tmp.$$"
  (cd "$tools" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp" github.com/crossplane/crossplane/v2/cmd/crank)
  mv "$tmp" "$bin"
fi
echo "$bin"
