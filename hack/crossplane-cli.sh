#!/usr/bin/env bash
# Prints the path of the crossplane CLI pinned by hack/tools/crossplane (v2.2.0:
# the last release whose `render` runs without Docker), building it once per
# version into the user cache dir.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/cached-tool.sh" "$here/tools/crossplane" github.com/crossplane/crossplane/v2 github.com/crossplane/crossplane/v2/cmd/crank crossplane
