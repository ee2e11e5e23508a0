package catalog

import (
	"fmt"
	"sort"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
)

// Condition types this mode reports on the catalog.
const (
	ConditionGoldensReady    = "GoldenImagesReady"
	ConditionGoldensRetiring = "GoldenImagesRetiring"
)

// ReasonGoldenUnreadable: a golden of the catalog is observed but is not a
// DataVolume the function can read.
const ReasonGoldenUnreadable = "GoldenUnreadable"

// goldensCondition summarises the goldens still in the catalog; one CDI
// cannot import as it stands is reported failed, quoting CDI, with the fix.
func goldensCondition(goldens []planned) compose.Condition {
	var failed, unreadable, failing, waiting []string
	total := 0
	for _, e := range goldens {
		if e.Retiring {
			continue
		}
		total++
		ref := labels.GoldenRef(e.Namespace, e.Name)
		if e.Raw != nil {
			unreadable = append(unreadable, fmt.Sprintf("golden DataVolume %s cannot be read (%v), so it is kept exactly as it is, neither checked for drift nor re-created: fix it, or delete it so the catalog re-creates it", ref, e.Unreadable))
			continue
		}
		s := cdistate.Of(e.Live, nil)
		switch s.Kind {
		case cdistate.Succeeded:
		case cdistate.Failed:
			failed = append(failed, fmt.Sprintf("golden DataVolume %s failed to import (phase Failed%s): %s", ref, quoted(s), failedFix(s, e.Namespace)))
		case cdistate.Permanent:
			failed = append(failed, fmt.Sprintf("golden DataVolume %s cannot be imported as it stands (phase %s%s): %s", ref, s.PhaseText(), quoted(s), permanentFix(s, e.Golden)))
		case cdistate.Failing:
			failing = append(failing, failingText(s, ref, e.Golden))
		default:
			waiting = append(waiting, fmt.Sprintf("%s (%s)", ref, waitingText(s)))
		}
	}
	switch {
	case total == 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "NoImages", Message: "The catalog lists no images."}
	case len(failed) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailed", Message: strings.Join(append(append(failed, unreadable...), failing...), "; ") + "."}
	case len(unreadable) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonGoldenUnreadable, Message: strings.Join(append(unreadable, failing...), "; ") + "."}
	case len(failing) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailing", Message: strings.Join(failing, "; ") + "."}
	case len(waiting) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
			Message: fmt.Sprintf("%d of %d golden images are Succeeded; waiting for %s. Pools that clone them wait until they are.", total-len(waiting), total, strings.Join(waiting, ", "))}
	}
	return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "AllSucceeded", Message: fmt.Sprintf("All golden images (%d) are Succeeded.", total)}
}

// quoted is CDI's reason and message for a message, ", Reason: \"message\"",
// or nothing when CDI gave none.
func quoted(s cdistate.State) string {
	switch {
	case s.Reason == "":
		return ""
	case s.Message == "":
		return ", " + s.Reason
	}
	return fmt.Sprintf(", %s: %q", s.Reason, s.Message)
}

func failedFix(s cdistate.State, ns string) string {
	if s.Reason == "" {
		return fmt.Sprintf("check the importer pod events in %s, then delete the DataVolume so the catalog re-creates it", ns)
	}
	return s.Remedy()
}

// permanentFix is CDI's remedy for a catalog entry. A golden's spec is
// immutable, so a fix that changes it must delete the DataVolume in the same
// change, or the drift check refuses the entry.
func permanentFix(s cdistate.State, g Golden) string {
	entry := fmt.Sprintf("images[%d]", g.Index)
	switch s.Message {
	case cdistate.MessageTooSmall:
		return fmt.Sprintf("the Talos image does not fit %s: delete the DataVolume and raise %s.storage (or spec.storage) in the same change; an existing golden's size cannot change", g.StorageText, entry)
	case cdistate.MessageStorageClassNotFound:
		return fmt.Sprintf("CDI finds no StorageClass for it: mark a class as default with an annotation CDI reads (storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class; CDI ignores the beta annotation), after which CDI retries by itself; or delete the DataVolume and set %s.storageClass (or spec.storageClass) in the same change", entry)
	}
	return s.Remedy()
}

func failingText(s cdistate.State, ref string, g Golden) string {
	if s.Reason == cdistate.ReasonImagePullFailed {
		return fmt.Sprintf("golden DataVolume %s cannot start its importer (phase %s%s): %s", ref, s.PhaseText(), quoted(s), s.Remedy())
	}
	if status := s.SourceRefusal(); status != "" {
		return fmt.Sprintf("golden DataVolume %s keeps failing to import (phase %s, %d importer restarts%s): %s answers HTTP %s, and CDI's retries get the same answer until it serves the image; check that the Image Factory has schematicID %s and Talos %s (images[%d]), and correct the entry, deleting the DataVolume in the same change (a golden's URL cannot change in place)",
			ref, s.PhaseText(), s.Restarts, quoted(s), g.URL, status, g.SchematicID, g.Version, g.Index)
	}
	return fmt.Sprintf("golden DataVolume %s keeps failing to import (phase %s, %d importer restarts%s): check the importer pod logs in %s and that %s is reachable; the import resumes by itself once an attempt succeeds",
		ref, s.PhaseText(), s.Restarts, quoted(s), g.Namespace, g.URL)
}

// waitingText says how far a golden on its way got, with CDI's reason only
// when it says why the golden is not moving.
func waitingText(s cdistate.State) string {
	if s.Kind == cdistate.Missing {
		return "not created yet"
	}
	text := "phase " + phaseOrPending(s.Phase)
	if s.Progress != "" {
		text += ", " + s.Progress
	}
	switch s.Reason {
	case cdistate.ReasonErrExceededQuota, cdistate.ReasonErrClaimNotValid, cdistate.ReasonUnschedulable, cdistate.ReasonCloneWithoutSource:
		text += quoted(s)
	}
	if s.Awaits != "" {
		text += "; " + s.Awaits
	}
	return text
}

// retiringCondition says why each retiring golden stays; byUsages is true
// when pins are read from Usages, not templates (grants.go).
func retiringCondition(entries []planned, byUsages bool) compose.Condition {
	var retiring []string
	for _, e := range entries {
		if e.Retiring {
			why := "pinned by " + strings.Join(e.PinnedBy, ", ")
			switch {
			case len(e.PinnedBy) > 0:
			case e.Raw != nil:
				// The function never deletes what it cannot read.
				why = "not a DataVolume the function can read, so it is never deleted by it; remove it by hand once nothing clones it"
			case byUsages:
				why = fmt.Sprintf("in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l %s=%s lists them", labels.Golden, labels.GoldenHash(e.Namespace, e.Name))
			default:
				// Kept while a Usage protects it: a refused delete would
				// stop the catalog applying anything.
				why = "no template pins it, but a Crossplane Usage still protects it (it carries " + labels.CrossplaneInUse + "=true) and its delete would be refused; it is deleted once that Usage is gone: kubectl get usages.protection.crossplane.io -A shows which"
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

// transitions turns status changes into events; steady state produces none.
func transitions(prev, next []v1alpha1.GoldenStatus) []compose.Result {
	before := map[string]v1alpha1.GoldenStatus{}
	for _, p := range prev {
		before[labels.GoldenRef(p.Namespace, p.Name)] = p
	}
	var out []compose.Result
	seen := map[string]bool{}
	for _, n := range next {
		ref := labels.GoldenRef(n.Namespace, n.Name)
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
			while := strings.Join(n.PinnedBy, ", ") + " pin it"
			if len(n.PinnedBy) == 0 {
				while = "it is in use"
			}
			out = append(out, compose.Result{Severity: compose.SeverityNormal, Reason: "GoldenRetiring", Message: fmt.Sprintf("Golden DataVolume %s left the catalog and is kept while %s.", ref, while)})
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
