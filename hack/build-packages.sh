#!/usr/bin/env bash
# Builds the function package, the Configuration and its legacy variant into
# $OUTPUT_DIR (default _output/) without Docker:
#   1. the static function binary (CGO_ENABLED=0);
#   2. its runtime image, assembled by hack/tools/xpkg (go-containerregistry)
#      on a distroless-style base layer, as an image tarball;
#   3. crossplane xpkg build (CLI v2.5.0, hack/crossplane-cli.sh) of package/
#      with that tarball embedded, then of package/configuration and
#      package/configuration/legacy.
# Every input is pinned and every timestamp fixed, so the same tree gives the
# same package digests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUTPUT_DIR:-_output}
arch=${GOARCH:-$(go env GOARCH)}
mkdir -p "$out/bin"

crossplane=$(hack/crossplane-cli.sh)

CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -ldflags "-s -w" -o "$out/bin/function-linux-$arch" .
(cd hack/tools/xpkg && go build -o "$root/$out/bin/xpkg" .)
"$out/bin/xpkg" runtime-image -binary "$out/bin/function-linux-$arch" -arch "$arch" -o "$out/runtime-linux-$arch.tar"

# package/ holds the Function package; the Configurations and the RBAC
# manifest below it are separate artifacts (--ignore matches one directory
# level per pattern). --examples-root points at a directory that does not
# exist: no examples are embedded.
"$crossplane" xpkg build --package-root=package \
  --embed-runtime-image-tarball="$out/runtime-linux-$arch.tar" \
  --ignore='configuration/*,configuration/legacy/*,rbac/*' \
  --examples-root="$out/no-examples" \
  -o "$out/function-worker-image-linux-$arch.xpkg"
"$crossplane" xpkg build --package-root=package/configuration --ignore='legacy/*' \
  --examples-root="$out/no-examples" -o "$out/configuration-worker-image.xpkg"
"$crossplane" xpkg build --package-root=package/configuration/legacy \
  --examples-root="$out/no-examples" -o "$out/configuration-worker-image-legacy.xpkg"
ls -l "$out"/*.xpkg
