//go:build renderclock

package main

import "github.com/cozystack/function-worker-image/internal/fixture"

// A binary built with -tags renderclock, as test/render and make render
// build it, runs every call at fixture.Clock's fixed instant, so that a
// rendered status recording when an import or clone last moved is the same
// on every run and a scenario's recorded time decides a stall. A release
// binary reads the wall clock and cannot be told another time.
func init() { defaultClock = fixture.Clock }
