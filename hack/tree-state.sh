#!/usr/bin/env bash
# Prints a digest of the working tree as git sees it: tracked changes and the
# content of every untracked, unignored file. Two equal digests mean nothing
# was changed or added in between (make check-generate).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  git status --porcelain=v1 --untracked-files=all
  git diff HEAD --binary
  git ls-files --others --exclude-standard -z | xargs -0 -r sha256sum
} | sha256sum
