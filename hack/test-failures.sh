#!/usr/bin/env bash
# Prints, from a `go test -v` log, each failed test with the last lines it
# logged (its t.Error and t.Fatal messages are among them), at most 5 lines a
# test and 40 in all: make test prints it last, so the tail of a CI log that
# shows only its end still names what failed and why, however much the
# harness printed after the tests (process log tails, object dumps).
#
#   hack/test-failures.sh LOG
set -euo pipefail
awk '
	# The test a log line belongs to: -v names it before its first line and
	# again whenever another test has written in between.
	match($0, /^=== (RUN|CONT|NAME) +/) { cur = substr($0, RLENGTH + 1); next }
	# A t.Log line (a t.Error is one too): "    file_test.go:NN: text",
	# indented by the depth of the subtest.
	cur != "" && match($0, /^ +[^ ]+_test\.go:[0-9]+: /) {
		n = ++count[cur]
		line[cur, n] = substr($0, RSTART + 0)
		sub(/^ +/, "", line[cur, n])
		if (length(line[cur, n]) > 300) line[cur, n] = substr(line[cur, n], 1, 300) "..."
		next
	}
	match($0, /^ *--- FAIL: /) {
		name = substr($0, RLENGTH + 1); sub(/ \([0-9.]+s\)$/, "", name)
		failed[++nfailed] = name
	}
	END {
		if (nfailed == 0) exit
		printed = 0
		print "failed tests (last lines each logged):"
		for (i = 1; i <= nfailed && printed < 40; i++) {
			name = failed[i]
			# A parent that failed only through its subtests says nothing.
			if (count[name] == 0 && i < nfailed && index(failed[i + 1], name "/") == 1) continue
			print "  FAIL " name; printed++
			from = count[name] > 4 ? count[name] - 3 : 1
			for (j = from; j <= count[name] && printed < 40; j++) { print "      " line[name, j]; printed++ }
		}
	}
' "$1"
