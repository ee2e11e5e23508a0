#!/usr/bin/env bash
# Prints the path of the Crossplane core binary `crossplane render` runs the
# pipeline through (--crossplane-binary: `crossplane internal render`, the
# real composite reconciler on an in-memory client; no Docker), building it
# once per version into the user cache dir. The version is the e2e suite's
# default (DefaultCrossplaneVersion in test/e2e/harness/crds.go), from the
# same tools module; v2.4 is the first core with `internal render`, so an
# older CROSSPLANE_VERSION does not apply here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$("$root/test/e2e/hack/default-crossplane-version.sh")
exec "$root/hack/cached-tool.sh" "$root/test/e2e/tools/crossplane/$version" github.com/crossplane/crossplane/v2 github.com/crossplane/crossplane/v2/cmd/crossplane crossplane-core
