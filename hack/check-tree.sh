#!/usr/bin/env bash
# Fails when git tracks what a clone should not carry: a compiled binary
# (ELF, Mach-O, PE, WebAssembly, an ar archive such as a Go .a) anywhere, or
# any file over 1 MiB outside the paths listed in allowed_large below. Build
# outputs belong in bin/ and _output/, which .gitignore keeps out; a 50 MB
# loadgen binary once sat at the root (f10f2ee, removed in 7e70a71).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=$((1024 * 1024))
# Paths (extended regular expressions on the repository path) whose files may
# pass the limit because a test needs them whole. Empty today.
allowed_large=()

status=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # a deletion not yet committed
  size=$(stat -c %s "$f")
  magic=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
  kind=
  case "$magic" in
    7f454c46*) kind="an ELF binary" ;;
    feedface* | feedfacf* | cefaedfe* | cffaedfe* | cafebabe*) kind="a Mach-O binary" ;;
    4d5a*) kind="a PE (Windows) binary" ;;
    0061736d*) kind="a WebAssembly module" ;;
    213c617263683e0a) kind="an ar archive (a compiled Go package or C library)" ;;
  esac
  if [ -n "$kind" ]; then
    echo "$f: git tracks $kind; build outputs go to bin/ or _output/ (ignored): git rm --cached '$f'" >&2
    status=1
  fi
  if [ "$size" -gt "$limit" ]; then
    ok=
    for re in "${allowed_large[@]}"; do
      [[ $f =~ $re ]] && ok=1
    done
    if [ -z "$ok" ]; then
      echo "$f: $size bytes, over the 1 MiB limit for tracked files; shrink it, generate it in the test, or list the test data that needs it in allowed_large of hack/check-tree.sh" >&2
      status=1
    fi
  fi
done < <(git ls-files -z)
[ "$status" = 0 ] && echo "tree: no compiled binary and no file over 1 MiB tracked"
exit $status
