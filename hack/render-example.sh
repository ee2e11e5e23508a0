#!/usr/bin/env bash
# Renders a shipped example with `crossplane render` against the function
# running locally: no Docker, no cluster. Usage:
#   hack/render-example.sh [example dir] [scenario]
#   hack/render-example.sh example/catalog                  # the example XR
#   hack/render-example.sh example/catalog golden-succeeded # one scenario
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
example=${1:-example/catalog}
scenario=${2:-}

xp=$(hack/crossplane-cli.sh)
core=$(hack/crossplane-core.sh)
bin=$(mktemp -d)/function-worker-image
# At crossplane render's fixed instant, as test/render renders (clock_render.go).
go build -tags renderclock -o "$bin" .

# A free loopback port, so a function already running on :9443 is not disturbed.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 9443)
log=$(mktemp)
"$bin" --insecure --address "127.0.0.1:$port" --metrics-address= >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$(dirname "$bin")" "$log"' EXIT
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

dir=$example
[ -n "$scenario" ] && dir="$example/scenarios/$scenario"
args=("$dir/xr.yaml" "$example/composition.yaml" "$example/functions.yaml"
  --include-function-results "--crossplane-binary=$core"
  "--function-annotations=render.crossplane.io/runtime-development-target=127.0.0.1:$port")
[ -f "$dir/observed.yaml" ] && args+=("--observed-resources=$dir/observed.yaml")
[ -f "$dir/required.yaml" ] && args+=("--required-resources=$dir/required.yaml")
"$xp" render "${args[@]}"
