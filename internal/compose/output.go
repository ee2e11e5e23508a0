// Package compose is the one place a mode's decisions become a
// RunFunctionResponse: modes return an Output (plain data they can cmp.Diff)
// and Write turns it into desired resources, XR status, conditions, results
// and a TTL, in sorted order so the same Output gives the same bytes.
package compose

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composite"
	"github.com/crossplane/function-sdk-go/response"

	"github.com/cozystack/function-worker-image/internal/redact"
)

// ConditionStatus of a condition on the composite.
type ConditionStatus string

// Condition statuses.
const (
	StatusTrue    ConditionStatus = "True"
	StatusFalse   ConditionStatus = "False"
	StatusUnknown ConditionStatus = "Unknown"
)

// Condition is a custom condition on the composite (and its claim). Ready and
// Synced are Crossplane's own and may not be used.
type Condition struct {
	Type    string
	Status  ConditionStatus
	Reason  string
	Message string
}

// Severity of a result.
type Severity string

// Result severities; a fatal is Output.Fatal.
const (
	SeverityNormal  Severity = "Normal"
	SeverityWarning Severity = "Warning"
)

// Result becomes a Kubernetes event. Modes emit results only on transitions.
type Result struct {
	Severity Severity
	Reason   string
	Message  string
}

// Output is everything a mode decided.
type Output struct {
	// Fatal stops the pipeline; nothing else in the Output is written.
	Fatal error

	// Resources are the desired composed resources by
	// composition-resource-name; a key left out is deleted.
	Resources map[resource.Name]*resource.DesiredComposed

	// Status holds top-level status fields of the composite.
	Status map[string]any

	// Conditions on the composite and its claim.
	Conditions []Condition

	// Results are events, emitted on transitions only.
	Results []Result

	// TTL, when non-zero, overrides the response TTL.
	TTL time.Duration

	// NotReady marks the composite not ready whatever its composed
	// resources say: a pool whose gate holds its first template would
	// otherwise be Ready with no workers. When false, an earlier step's
	// readiness is kept.
	NotReady bool

	// Signals summarise the decision for the operator's metrics
	// (internal/metrics). Write never reads them: they change no byte of
	// the response.
	Signals Signals
}

// Signals are what a call decided, in the few words a platform alerts on.
type Signals struct {
	// Hold is the reason a change is held back (the pool's gate), "" when
	// nothing is.
	Hold string
	// ClonePlan is the pre-flight's prediction for a new clone template,
	// nil when this call predicted none.
	ClonePlan *ClonePlanSignal
	// Goldens are the catalog's goldens as its status reports them.
	Goldens []GoldenSignal
}

// ClonePlanSignal is how CDI is predicted to clone a new template's disks.
type ClonePlanSignal struct {
	// Strategy is csi-clone, snapshot or copy; empty when CDI cannot plan.
	Strategy string
	// Fallback is the reason of a predicted fallback to a host-assisted
	// copy (CDI's event reason), empty when there is none.
	Fallback string
	// Blocked is why CDI would not plan yet or at all, empty otherwise.
	Blocked string
}

// GoldenSignal is one golden of a catalog.
type GoldenSignal struct {
	// State is the golden's import state as the catalog classes it
	// (internal/cdistate Kind: Missing, Pending, Importing, Failing,
	// Failed, Permanent, WaitingForSource, Succeeded), Stalled for an
	// import that has not moved for polling.stallAfter.imports, or
	// Unreadable.
	State    string
	Retiring bool
}

// ObservedComposite is the composite the function is called for. A request
// without one, or without its kind or name, is refused: deciding from
// nothing would return an empty desired state, which Crossplane applies by
// deleting every composed resource.
func ObservedComposite(req *fnv1.RunFunctionRequest) (*resource.Composite, error) {
	if req.GetObserved().GetComposite().GetResource() == nil {
		return nil, errors.New("the request carries no observed composite resource: there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed")
	}
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read the observed composite resource: %w", err)
	}
	if oxr.Resource.GetKind() == "" || oxr.Resource.GetName() == "" {
		return nil, fmt.Errorf("the observed composite resource has no kind or no name (kind %q, name %q): there is nothing to compose from, and composing nothing would delete every composed resource, so nothing is changed", oxr.Resource.GetKind(), oxr.Resource.GetName())
	}
	return oxr, nil
}

// DesiredComposite is the earlier pipeline steps' desired composite with
// its readiness, which request.GetDesiredCompositeResource drops (turning
// an earlier READY_FALSE into UNSPECIFIED).
func DesiredComposite(req *fnv1.RunFunctionRequest) (*resource.Composite, error) {
	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return nil, fmt.Errorf("cannot read the desired composite resource: %w", err)
	}
	switch req.GetDesired().GetComposite().GetReady() {
	case fnv1.Ready_READY_TRUE:
		dxr.Ready = resource.ReadyTrue
	case fnv1.Ready_READY_FALSE:
		dxr.Ready = resource.ReadyFalse
	case fnv1.Ready_READY_UNSPECIFIED:
		dxr.Ready = resource.ReadyUnspecified
	}
	return dxr, nil
}

// Write applies out to rsp, setting only out.Status's fields on the
// earlier steps' desired composite.
func Write(rsp *fnv1.RunFunctionResponse, dxr *resource.Composite, out Output) error {
	if out.Fatal != nil {
		response.Fatal(rsp, out.Fatal)
		return nil
	}
	if out.TTL > 0 {
		if rsp.Meta == nil {
			rsp.Meta = &fnv1.ResponseMeta{}
		}
		rsp.Meta.Ttl = durationpb.New(out.TTL)
	}
	if len(out.Resources) > 0 {
		if err := response.SetDesiredComposedResources(rsp, out.Resources); err != nil {
			return fmt.Errorf("cannot set desired composed resources: %w", err)
		}
	}
	if len(out.Status) > 0 || out.NotReady {
		if dxr == nil {
			dxr = &resource.Composite{Resource: composite.New()}
		}
		if out.NotReady {
			dxr.Ready = resource.ReadyFalse
		}
		keys := make([]string, 0, len(out.Status))
		for k := range out.Status {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := dxr.Resource.SetValue("status."+k, out.Status[k]); err != nil {
				return fmt.Errorf("cannot set composite status field %q: %w", k, err)
			}
		}
		if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
			return fmt.Errorf("cannot set desired composite resource: %w", err)
		}
	}

	conds := append([]Condition(nil), out.Conditions...)
	sort.SliceStable(conds, func(i, j int) bool { return conds[i].Type < conds[j].Type })
	for _, c := range conds {
		var co *response.ConditionOption
		switch c.Status {
		case StatusTrue:
			co = response.ConditionTrue(rsp, c.Type, c.Reason)
		case StatusFalse:
			co = response.ConditionFalse(rsp, c.Type, c.Reason)
		default:
			co = response.ConditionUnknown(rsp, c.Type, c.Reason)
		}
		co.WithMessage(c.Message).TargetCompositeAndClaim()
	}
	for _, r := range out.Results {
		var ro *response.ResultOption
		if r.Severity == SeverityWarning {
			ro = response.Warning(rsp, errors.New(r.Message))
		} else {
			ro = response.Normal(rsp, r.Message)
		}
		if r.Reason != "" {
			ro = ro.WithReason(r.Reason)
		}
		ro.TargetCompositeAndClaim()
	}
	return nil
}

// Redact masks URL userinfo in every message of rsp: its results (fatal ones
// included, and so the events Crossplane records from them) and its
// conditions. It is the last thing done to a response, so no path that
// writes a message, the Input's validation and the modes' alike, can leak a
// credential (internal/redact).
func Redact(rsp *fnv1.RunFunctionResponse) {
	for _, r := range rsp.GetResults() {
		r.Message = redact.Text(r.GetMessage())
	}
	for _, c := range rsp.GetConditions() {
		if c.Message != nil {
			m := redact.Text(c.GetMessage())
			c.Message = &m
		}
	}
}
