package read

import (
	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
)

// Previous is what the observed composite said last time, to emit results
// on transitions only, and since when each disk in flight has not moved.
type Previous struct {
	Gate       v1alpha1.Gate               `json:"gate"`
	Template   string                      `json:"template"`
	Conditions []compose.ObservedCondition `json:"conditions"`
	// Image carries the records of the disks in flight (decide/stall.go).
	Image struct {
		Clones []v1alpha1.CloneProgress `json:"clones"`
	} `json:"image"`
}

// Condition is "status/reason" of the previous condition of type t.
func (p Previous) Condition(t string) string {
	c, ok := compose.ConditionOf(p.Conditions, t)
	if !ok {
		return ""
	}
	return c.Status + "/" + c.Reason
}
