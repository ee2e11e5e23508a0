package catalog

import (
	"fmt"
	"time"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// ReasonStalled is a golden's status reason, and the GoldenImagesReady
// reason, for an import that has not moved for polling.stallAfter.imports.
const ReasonStalled = "Stalled"

// trackImports records, for each golden the catalog imports and CDI is
// still working on, when it was first seen at its phase, progress and
// restarts, from the previous status's entry of the same golden, and
// whether that is polling.stallAfter.imports ago (internal/stall). A golden
// that succeeded, failed or needs action for another reason keeps no
// record: its state says more.
func trackImports(plan []planned, prev []v1alpha1.GoldenStatus, now time.Time, after time.Duration) {
	before := make(map[string]v1alpha1.GoldenStatus, len(prev))
	for _, st := range prev {
		before[labels.GoldenRef(st.Namespace, st.Name)] = st
	}
	for i := range plan {
		p := &plan[i]
		if p.Retiring || p.Raw != nil || p.Recreate || p.Live == nil || !cdistate.Of(p.Live, nil).InProgress() {
			continue
		}
		st := before[labels.GoldenRef(p.Namespace, p.Name)]
		rec, ok := stall.Track(stall.Recorded(st.Phase, st.Progress, st.Restarts, st.ProgressSince), stall.Of(p.Live), now)
		if !ok {
			continue
		}
		p.Moved, p.StallAfter = &rec, after
		p.Stalled = rec.Stalled(now, after)
	}
}

// stallMark is the annotation a stalled golden carries for its pools.
func stallMark(p planned) string {
	if !p.Stalled {
		return ""
	}
	return stall.Mark{Fingerprint: p.Moved.Fingerprint, After: p.StallAfter}.String()
}

// stalledText says where a golden's import stopped, what CDI says, and the
// fix: a claim that does not bind, or an importer that waits on a server.
func stalledText(s cdistate.State, ref string, p planned) string {
	at := "phase " + phaseOrPending(s.Phase)
	if s.Progress != "" {
		at += ", " + s.Progress
	}
	cause := s
	cause.Reason, cause.Message = s.StallCause()
	return fmt.Sprintf("golden DataVolume %s has not moved for at least %s (Input polling.stallAfter.imports; %s, %d importer restarts%s): %s",
		ref, stall.Bound(p.StallAfter), at, s.Restarts, quoted(cause), cdistate.StalledFix(s, causeGolden(p.Golden)))
}
