package rules

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The kubelet reservation primitives, after the cozystack chart's format
// and sign guards (kubernetes-nodes templates/nodegroup.yaml:346-400@69da032:
// "invalid ... value", "must be a positive value", "percentage must be
// greater than 0 and at most 100"). The pool-level guards that compare them
// with each other and with the node live in poolspec.

// ReservedMemory parses a memory reservation: a positive quantity no larger
// than the largest worker memory.
func ReservedMemory(path *field.Path, v string) (resource.Quantity, field.ErrorList) {
	return quantity(path, v, maxMemory, "512Mi", "the largest worker memory accepted")
}

// ReservedCPU parses a CPU reservation, in millicores: a positive quantity
// such as 100m or 0.5, no larger than the largest worker.
func ReservedCPU(path *field.Path, v string) (int64, field.ErrorList) {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 || q.Cmp(maxCores) > 0 {
		return 0, field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a positive CPU quantity of at most %d cores, such as 100m or 0.5", MaxCores))}
	}
	return q.MilliValue(), nil
}

// Threshold is a kubelet eviction threshold: a percentage of the node's
// memory, or an absolute quantity.
type Threshold struct {
	// Percent is set for a percentage (7 for 7%).
	Percent float64
	// Quantity is set otherwise.
	Quantity resource.Quantity
	// IsPercent says which of the two it is.
	IsPercent bool
	// Text is the value as written.
	Text string
}

// Bytes is the threshold in bytes on a node of memory bytes.
func (t Threshold) Bytes(memory int64) float64 {
	if t.IsPercent {
		return float64(memory) * t.Percent / 100
	}
	return t.Quantity.AsApproximateFloat64()
}

// EvictionThreshold parses an eviction threshold: a percentage greater than
// 0 and at most 100, or a positive quantity.
func EvictionThreshold(path *field.Path, v string) (Threshold, field.ErrorList) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil || strings.ContainsAny(pct, "eE+-") || f <= 0 || f > 100 {
			return Threshold{}, field.ErrorList{field.Invalid(path, Quoted(v), "is not a percentage greater than 0 and at most 100, such as 7%")}
		}
		return Threshold{Percent: f, IsPercent: true, Text: v}, nil
	}
	q, errs := quantity(path, v, maxMemory, "500Mi", "the largest worker memory accepted")
	if len(errs) > 0 {
		return Threshold{}, field.ErrorList{field.Invalid(path, Quoted(v), "is neither a percentage (such as 7%) nor a positive memory quantity (such as 500Mi)")}
	}
	return Threshold{Quantity: q, Text: v}, nil
}
