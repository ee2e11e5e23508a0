package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/redact"
)

// Condition types this mode reports on the catalog.
const (
	ConditionGoldensReady    = "GoldenImagesReady"
	ConditionGoldensRetiring = "GoldenImagesRetiring"
)

// ReasonGoldenUnreadable: a golden of the catalog is observed but is not a
// DataVolume the function can read.
const ReasonGoldenUnreadable = "GoldenUnreadable"

// Problem buckets of a golden, most urgent first.
const (
	problemFailed     = "failed"
	problemUnreadable = "unreadable"
	problemFailing    = "failing"
	problemStalled    = "stalled"
	problemWaiting    = "waiting"
)

// ReasonRecreating is a golden's status reason while the catalog re-creates
// it (settle.go).
const ReasonRecreating = "Recreating"

// problem is what is wrong with one golden still in the catalog, if
// anything: its bucket, its reason (the cause CDI reports, or the kind) and
// the text the condition and its status entry give.
type problem struct {
	Bucket, Reason, Text string
}

// goldenProblem says what is wrong with a golden still in the catalog;
// Bucket is empty for one that is fine.
func goldenProblem(e planned) problem {
	ref := labels.GoldenRef(e.Namespace, e.Name)
	if e.Raw != nil {
		return problem{problemUnreadable, ReasonGoldenUnreadable, fmt.Sprintf("golden DataVolume %s cannot be read (%v), so it is kept exactly as it is, neither checked for drift nor re-created: fix it, or delete it so the catalog re-creates it", ref, e.Unreadable)}
	}
	if e.Recreate {
		return problem{problemWaiting, ReasonRecreating, fmt.Sprintf("%s (never succeeded and nothing clones it, so it is being deleted to be imported again with the catalog's %s)", ref, strings.Join(e.Changes, ", "))}
	}
	s := cdistate.Of(e.Live, nil)
	cause := string(s.Cause())
	reasonOr := func(r string) string {
		if cause != "" {
			return cause
		}
		return r
	}
	switch s.Kind {
	case cdistate.Succeeded:
		return problem{}
	case cdistate.Failed:
		return problem{problemFailed, reasonOr("ImportFailed"), fmt.Sprintf("golden DataVolume %s failed to import (phase Failed%s): %s", ref, quoted(s), failedFix(s, e.Golden))}
	case cdistate.Permanent:
		return problem{problemFailed, reasonOr("ImportFailed"), fmt.Sprintf("golden DataVolume %s cannot be imported as it stands (phase %s%s): %s", ref, s.PhaseText(), quoted(s), permanentFix(s, e.Golden))}
	case cdistate.Failing:
		return problem{problemFailing, reasonOr("ImportFailing"), failingText(s, ref, e.Golden)}
	}
	if e.Stalled {
		return problem{problemStalled, ReasonStalled, stalledText(s, ref, e)}
	}
	return problem{problemWaiting, "", fmt.Sprintf("%s (%s)", ref, waitingText(s))}
}

// goldenReason is a golden's status reason and message: what needs acting
// on, or its re-creation; empty while it imports or once it succeeded.
func goldenReason(p planned) (string, string) {
	if p.Retiring {
		return "", ""
	}
	pr := goldenProblem(p)
	if pr.Reason == "" {
		return "", ""
	}
	return pr.Reason, upperFirst(pr.Text) + "."
}

// goldensCondition summarises the goldens still in the catalog; one CDI
// cannot import as it stands is reported failed, quoting CDI, with the fix.
// Where every golden that needs action fails for one cause, the reason is
// that cause.
func goldensCondition(goldens []planned) compose.Condition {
	texts := map[string][]string{}
	causes := map[string]bool{}
	total := 0
	for _, e := range goldens {
		if e.Retiring {
			continue
		}
		total++
		pr := goldenProblem(e)
		if pr.Bucket == "" {
			continue
		}
		texts[pr.Bucket] = append(texts[pr.Bucket], pr.Text)
		if pr.Bucket != problemWaiting {
			causes[pr.Reason] = true
		}
	}
	failed, unreadable, failing, stalled, waiting := texts[problemFailed], texts[problemUnreadable], texts[problemFailing], texts[problemStalled], texts[problemWaiting]
	single := func(fallback string) string {
		if len(causes) == 1 {
			for c := range causes {
				return c
			}
		}
		return fallback
	}
	switch {
	case total == 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "NoImages", Message: "The catalog lists no images."}
	case len(failed) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: single("ImportFailed"), Message: strings.Join(slices.Concat(failed, unreadable, failing, stalled), "; ") + "."}
	case len(unreadable) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonGoldenUnreadable, Message: strings.Join(slices.Concat(unreadable, failing, stalled), "; ") + "."}
	case len(failing) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: single("ImportFailing"), Message: strings.Join(slices.Concat(failing, stalled), "; ") + "."}
	case len(stalled) > 0:
		return compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: ReasonStalled, Message: strings.Join(stalled, "; ") + "."}
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

// fixOf is the catalog's fix for a golden failing for a cause CDI reports,
// empty for a cause it does not know.
func fixOf(s cdistate.State, g Golden) string {
	return cdistate.GoldenFix(s.Cause(), causeGolden(g))
}

// causeGolden is what cdistate.GoldenFix names of a golden.
func causeGolden(g Golden) cdistate.Golden {
	entry := ""
	if g.Index >= 0 {
		entry = fmt.Sprintf("images[%d]", g.Index)
	}
	return cdistate.Golden{Entry: entry, Namespace: g.Namespace, Name: g.Name, URL: g.URL, SchematicID: g.SchematicID, Version: g.Version,
		CertConfigMap: g.Import.CertConfigMap, SecretRef: g.Import.SecretRef, SecretExtraHeaders: g.Import.SecretExtraHeaders}
}

func failedFix(s cdistate.State, g Golden) string {
	if fix := fixOf(s, g); fix != "" {
		return fix
	}
	if s.Reason == "" {
		return fmt.Sprintf("check the importer pod events in %s, then delete the DataVolume so the catalog re-creates it", g.Namespace)
	}
	return s.Remedy()
}

// permanentFix is CDI's remedy for a catalog entry. A golden's spec is
// immutable; one that never succeeded and nothing clones is re-created
// once its entry changes (settle.go).
func permanentFix(s cdistate.State, g Golden) string {
	entry := fmt.Sprintf("images[%d]", g.Index)
	switch s.Message {
	case cdistate.MessageTooSmall:
		return fmt.Sprintf("the Talos image does not fit %s: raise %s.storage (or spec.storage); the catalog re-creates a golden that never succeeded and that nothing clones at the new size", g.StorageText, entry)
	case cdistate.MessageStorageClassNotFound:
		return fmt.Sprintf("CDI finds no StorageClass for it: mark a class as default with an annotation CDI reads (storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class; CDI ignores the beta annotation), after which CDI retries by itself; or set %s.storageClass (or spec.storageClass), and the catalog re-creates the golden on it", entry)
	}
	return s.Remedy()
}

func failingText(s cdistate.State, ref string, g Golden) string {
	if s.Reason == cdistate.ReasonImagePullFailed {
		return fmt.Sprintf("golden DataVolume %s cannot start its importer (phase %s%s): %s", ref, s.PhaseText(), quoted(s), s.Remedy())
	}
	if fix := fixOf(s, g); fix != "" {
		return fmt.Sprintf("golden DataVolume %s keeps failing to import (phase %s, %d importer restarts%s): %s", ref, s.PhaseText(), s.Restarts, quoted(s), fix)
	}
	return fmt.Sprintf("golden DataVolume %s keeps failing to import (phase %s, %d importer restarts%s): check the importer pod logs in %s and that %s is reachable; the import resumes by itself once an attempt succeeds",
		ref, s.PhaseText(), s.Restarts, quoted(s), g.Namespace, redact.Text(g.URL))
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
		case n.Reason == ReasonStalled && p.Reason != ReasonStalled:
			out = append(out, compose.Result{Severity: compose.SeverityWarning, Reason: "GoldenStalled", Message: n.Message})
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

// upperFirst capitalises a message's first letter.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
