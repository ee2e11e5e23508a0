#!/usr/bin/env bash
# Reads back the packages hack/build-packages.sh built and checks their
# contents: the runtime image's entrypoint, user, port and layers, and that each
# package.yaml holds exactly the metadata and objects of its source directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUTPUT_DIR:-_output}
arch=${GOARCH:-$(go env GOARCH)}
xpkg="$out/bin/xpkg"
"$xpkg" check-function -package "$out/function-worker-image-linux-$arch.xpkg" -input package/input
"$xpkg" check-configuration -package "$out/configuration-worker-image.xpkg" -source package/configuration
"$xpkg" check-configuration -package "$out/configuration-worker-image-legacy.xpkg" \
  -source package/configuration/legacy -name configuration-worker-image-legacy
