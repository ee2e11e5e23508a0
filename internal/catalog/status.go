package catalog

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/compose"
)

// Condition types this mode reports on the catalog.
const (
	ConditionGoldensReady    = "GoldenImagesReady"
	ConditionGoldensRetiring = "GoldenImagesRetiring"
)

// restartLoopThreshold is the importer restart count from which a golden
// that is still not Succeeded is reported as failing rather than importing:
// CDI reaches Failed only on fatal errors, while an unreachable factory
// restarts the importer with back-off and the phase stays in progress.
const restartLoopThreshold = 3

// GoldenStatus is one golden in the catalog's status.goldens.
type GoldenStatus struct {
	Name         string   `json:"name"`
	Namespace    string   `json:"namespace"`
	SchematicID  string   `json:"schematicID,omitempty"`
	Version      string   `json:"version,omitempty"`
	Phase        string   `json:"phase,omitempty"`
	Progress     string   `json:"progress,omitempty"`
	Storage      string   `json:"storage,omitempty"`
	StorageClass string   `json:"storageClass,omitempty"`
	PinnedBy     []string `json:"pinnedBy,omitempty"`
	Retiring     bool     `json:"retiring,omitempty"`
	Ready        bool     `json:"ready"`
}

// state classifies a golden's live DataVolume for gating and reporting.
type state int

const (
	statePending state = iota
	stateImporting
	stateFailing
	stateFailed
	stateSucceeded
)

func classify(dv *cdiv1.DataVolume) state {
	if dv == nil {
		return statePending
	}
	switch dv.Status.Phase {
	case cdiv1.Succeeded:
		return stateSucceeded
	case cdiv1.Failed:
		return stateFailed
	}
	if dv.Status.RestartCount >= restartLoopThreshold {
		for _, c := range dv.Status.Conditions {
			if c.Type == cdiv1.DataVolumeRunning && c.Status == corev1.ConditionFalse {
				return stateFailing
			}
		}
	}
	if dv.Status.Phase == "" || dv.Status.Phase == cdiv1.Pending {
		return statePending
	}
	return stateImporting
}

// goldensCondition summarises the goldens still in the catalog.
func goldensCondition(goldens []planned) compose.Condition {
	var failed, failing, waiting []string
	total := 0
	for _, e := range goldens {
		if e.Retiring {
			continue
		}
		total++
		dv := e.Live
		ref := e.Namespace + "/" + e.Name
		switch classify(dv) {
		case stateSucceeded:
		case stateFailed:
			failed = append(failed, fmt.Sprintf("golden DataVolume %s failed to import (phase Failed): check the importer pod events in %s, then delete the DataVolume so the catalog re-creates it", ref, e.Namespace))
		case stateFailing:
			failing = append(failing, fmt.Sprintf("golden DataVolume %s keeps failing to import (%d importer restarts): check the importer pod logs in %s and that %s is reachable; the import resumes by itself once an attempt succeeds", ref, dv.Status.RestartCount, e.Namespace, e.URL))
		default:
			phase := "not created yet"
			if dv != nil {
				phase = "phase " + phaseOrPending(dv.Status.Phase)
				if p := string(dv.Status.Progress); p != "" && p != "N/A" {
					phase += ", " + p
				}
			}
			waiting = append(waiting, fmt.Sprintf("%s (%s)", ref, phase))
		}
	}
	switch {
	case total == 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "NoImages", Message: "The catalog lists no images."}
	case len(failed) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailed", Message: strings.Join(append(failed, failing...), "; ") + "."}
	case len(failing) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailing", Message: strings.Join(failing, "; ") + "."}
	case len(waiting) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
			Message: fmt.Sprintf("%d of %d golden images are Succeeded; waiting for %s. Pools that clone them wait until they are.", total-len(waiting), total, strings.Join(waiting, ", "))}
	}
	return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "AllSucceeded", Message: fmt.Sprintf("All golden images (%d) are Succeeded.", total)}
}

func retiringCondition(entries []planned) compose.Condition {
	var retiring []string
	for _, e := range entries {
		if e.Retiring {
			why := "pinned by " + strings.Join(e.PinnedBy, ", ")
			if len(e.PinnedBy) == 0 {
				// Only an unreadable golden is kept unpinned: the function
				// never deletes what it cannot read.
				why = "not a DataVolume the function can read, so it is never deleted by it; remove it by hand once nothing clones it"
			}
			retiring = append(retiring, fmt.Sprintf("%s/%s (%s)", e.Namespace, e.Name, why))
		}
	}
	if len(retiring) == 0 {
		return compose.Condition{Type: ConditionGoldensRetiring, Status: compose.StatusFalse, Reason: "NoneRetiring", Message: "Every composed golden image is in the catalog."}
	}
	return compose.Condition{Type: ConditionGoldensRetiring, Status: compose.StatusTrue, Reason: "PinnedByTemplates",
		Message: fmt.Sprintf("Kept although no longer in the catalog, because templates still clone them: %s. Each is deleted once no template pins it; move those pools to another image to retire it.", strings.Join(retiring, "; "))}
}

// transitions turns the difference between the previous and the new status
// into events. Steady state produces none.
func transitions(prev, next []GoldenStatus) []compose.Result {
	before := map[string]GoldenStatus{}
	for _, p := range prev {
		before[p.Namespace+"/"+p.Name] = p
	}
	var out []compose.Result
	seen := map[string]bool{}
	for _, n := range next {
		ref := n.Namespace + "/" + n.Name
		seen[ref] = true
		p, had := before[ref]
		if !had {
			continue
		}
		switch {
		case n.Phase == string(cdiv1.Succeeded) && p.Phase != string(cdiv1.Succeeded):
			out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "GoldenImported", Message: fmt.Sprintf("Golden DataVolume %s is Succeeded: pools can clone Talos %s from it.", ref, n.Version)})
		case n.Phase == string(cdiv1.Failed) && p.Phase != string(cdiv1.Failed):
			out = append(out, compose.Result{Severity: compose.SeverityWarning, Reason: "GoldenFailed", Message: fmt.Sprintf("Golden DataVolume %s failed to import: check the importer pod events in %s, then delete the DataVolume so the catalog re-creates it.", ref, n.Namespace)})
		}
		if n.Retiring && !p.Retiring {
			out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "GoldenRetiring", Message: fmt.Sprintf("Golden DataVolume %s left the catalog and is kept while %s pin it.", ref, strings.Join(n.PinnedBy, ", "))})
		}
	}
	var gone []string
	for ref := range before {
		if !seen[ref] {
			gone = append(gone, ref)
		}
	}
	sort.Strings(gone)
	for _, ref := range gone {
		out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "GoldenRetired", Message: fmt.Sprintf("Golden DataVolume %s is no longer in the catalog and no template pins it: deleted.", ref)})
	}
	return out
}

func phaseOrPending(p cdiv1.DataVolumePhase) string {
	if p == "" {
		return string(cdiv1.Pending)
	}
	return string(p)
}
