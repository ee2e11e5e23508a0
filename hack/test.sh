#!/usr/bin/env bash
# make test: every test CI runs, in two lanes at once.
#
# - The e2e lane (make e2e) runs at normal priority: it is the long pole. On a
#   cold machine it first builds the control plane (~26 min of both cores,
#   test/e2e/hack/build-binaries.sh), then runs scenarios that mostly wait on
#   controllers: measured at about a quarter of the machine's CPU.
# - The checks lane (make checks: linters, generated files, unit, render,
#   fuzz, schema, Talos and package tests) runs at nice 19: it takes the CPU
#   the e2e lane leaves idle (the builds' single-threaded links, the
#   scenarios' waits) and yields whenever the e2e lane wants it, so the e2e
#   timings are those of an idle machine.
#
# Both lanes run to the end even when the other fails; the exit status is
# non-zero when either failed, and the summary says which. Set
# TEST_LANES=serial to run them one after the other (checks first).
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
start=$SECONDS
stamp() { while IFS= read -r line; do printf '%s%s\n' "$1" "$line"; done; }

# The e2e lane's output is kept to name its failed tests at the end
# (hack/test-failures.sh).
e2e_log=$(mktemp "${TMPDIR:-/tmp}/e2e-lane.XXXXXX")
trap 'rm -f "$e2e_log"' EXIT
if [ "${TEST_LANES:-}" = serial ]; then
  "$make" --no-print-directory checks; checks=$?; checks_t=$((SECONDS - start))
  { "$make" --no-print-directory e2e && "$make" --no-print-directory e2e-oldest; } 2>&1 | tee "$e2e_log"; e2e=${PIPESTATUS[0]}; e2e_t=$((SECONDS - start))
else
  ( { "$make" --no-print-directory e2e && "$make" --no-print-directory e2e-oldest; } 2>&1 | tee "$e2e_log" | stamp '[e2e] '; exit "${PIPESTATUS[0]}" ) &
  e2e_pid=$!
  nice -n 19 "$make" --no-print-directory checks; checks=$?; checks_t=$((SECONDS - start))
  wait "$e2e_pid"; e2e=$?; e2e_t=$((SECONDS - start))
fi

[ "$e2e" = 0 ] || hack/test-failures.sh "$e2e_log" | stamp '[e2e] '
verdict() { if [ "$1" = 0 ]; then echo passed; else echo "FAILED (exit $1)"; fi; }
echo "make test: checks $(verdict "$checks") at ${checks_t}s; e2e $(verdict "$e2e") at ${e2e_t}s; total $((SECONDS - start))s"
[ "$checks" = 0 ] && [ "$e2e" = 0 ]
