#!/usr/bin/env bash
# Usage: hack/cached-tool.sh <tools module dir> <module path> <package> [binary name]
# Prints the path of a tool pinned in a tools module under hack/tools, building
# it once per version into the user cache dir. The proxy serves exact versions
# only, so `go install pkg@version` cannot be used; a tools go.mod can.
set -euo pipefail
dir=$1 module=$2 pkg=$3 name=${4:-$(basename "$3")}
version=$(sed -nE "s#^(require)?[[:space:]]*${module//./\\.} (v[^ ]+).*#\\2#p" "$dir/go.mod" | head -1)
[ -n "$version" ] || { echo "$module is not pinned in $dir/go.mod" >&2; exit 1; }
cache="${XDG_CACHE_HOME:-$HOME/.cache}/function-worker-image/bin"
bin="$cache/$name-$version"
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  echo "building $name $version into $bin (once per version)" >&2
  tmp="$bin.tmp.$$"
  (cd "$dir" && CGO_ENABLED=0 GOGC=${GOGC:-400} nice -n 10 go build -trimpath -ldflags "-s -w" -o "$tmp" "$pkg")
  mv "$tmp" "$bin"
fi
echo "$bin"
