package compose

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/crossplane/function-sdk-go/resource/composite"
)

// StatusOf reads u's status into S, which names exactly what a mode reads
// back. No status is the zero S; a wrong shape is an error and the zero S,
// never a half-read view.
func StatusOf[S any](u *unstructured.Unstructured) (S, error) {
	var s S
	if u == nil {
		return s, nil
	}
	st, ok := u.Object["status"]
	if !ok || st == nil {
		return s, nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return s, fmt.Errorf("cannot encode status: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		var zero S
		return zero, err
	}
	return s, nil
}

// PreviousStatus is the composite's status as the last call left it, read
// into S (the zero S when unreadable). It only drives results on transitions
// and the node pool's choice of what to read (nodepool/reads.go), never what
// is composed: a status is what the function wrote, not what exists.
func PreviousStatus[S any](xr *composite.Unstructured) S {
	if xr == nil {
		var zero S
		return zero
	}
	s, err := StatusOf[S](&xr.Unstructured)
	if err != nil {
		var zero S
		return zero
	}
	return s
}

// ObservedCondition is a condition as read back from an object's
// status.conditions.
type ObservedCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ConditionOf returns the condition of type t among cs.
func ConditionOf(cs []ObservedCondition, t string) (ObservedCondition, bool) {
	for _, c := range cs {
		if c.Type == t {
			return c, true
		}
	}
	return ObservedCondition{}, false
}

// ObservedStateReadable reports the objects a mode could not read and so
// ignores and keeps (Observed.Keep), without an event on every reconcile.
const (
	ConditionObservedReadable = "ObservedStateReadable"
	ReasonAllReadable         = "AllReadable"
	ReasonUnreadable          = "UnreadableObject"
)

// Readable is the ObservedStateReadable condition of subject ("node pool
// \"tenant-a/demo-md0\"") over problems, each naming an object and why it
// cannot be read.
func Readable(subject string, problems []string) Condition {
	if len(problems) == 0 {
		return Condition{Type: ConditionObservedReadable, Status: StatusTrue, Reason: ReasonAllReadable,
			Message: fmt.Sprintf("Every object %s reads is readable.", subject)}
	}
	return Condition{Type: ConditionObservedReadable, Status: StatusFalse, Reason: ReasonUnreadable,
		Message: fmt.Sprintf("%s ignores objects it cannot read: %s. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl.", capitalised(subject), strings.Join(problems, "; "))}
}

// ReadableWhenNeeded is Readable while there are problems, and True while
// the composite still carries it otherwise: Crossplane (v2.2.0, composite
// reconciler) keeps a dropped custom condition as it was, so it would go
// stale. The second result says whether to emit it.
func ReadableWhenNeeded(subject string, problems []string, previous []ObservedCondition) (Condition, bool) {
	c := Readable(subject, problems)
	if c.Status != StatusTrue {
		return c, true
	}
	prev, ok := ConditionOf(previous, ConditionObservedReadable)
	return c, ok && prev.Status != string(StatusTrue)
}

// Transition is the Warning for a condition that is not True, emitted only
// when it differs from the previous one of its type.
func Transition(c Condition, previous []ObservedCondition) (Result, bool) {
	if c.Status == StatusTrue {
		return Result{}, false
	}
	// Crossplane keeps a condition equal in type, status, reason and message as it is (crossplane-runtime v2.2.0 apis/common/condition.go:101, Condition.Equal).
	if prev, ok := ConditionOf(previous, c.Type); ok && prev.Status == string(c.Status) && prev.Reason == c.Reason && prev.Message == c.Message {
		return Result{}, false
	}
	return Result{Severity: SeverityWarning, Reason: c.Reason, Message: c.Message}, true
}

func capitalised(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}
