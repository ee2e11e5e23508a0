#!/usr/bin/env bash
# Prints the path of the crossplane CLI pinned by hack/tools/crossplane
# (github.com/crossplane/cli/v2), building it once per version into the user
# cache dir. Its render needs a Crossplane core binary: hack/crossplane-core.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/cached-tool.sh" "$here/tools/crossplane" github.com/crossplane/cli/v2 github.com/crossplane/cli/v2/cmd/crossplane crossplane
