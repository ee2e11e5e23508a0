#!/usr/bin/env bash
# Runs golangci-lint, pinned by hack/tools/golangci-lint and cached by version.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$("$here/cached-tool.sh" "$here/tools/golangci-lint" github.com/golangci/golangci-lint/v2 github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
cd "$here/.."
exec "$bin" run "$@"
