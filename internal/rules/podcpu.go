package rules

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxPodCPU bounds a virt-launcher CPU request or limit: far above any host,
// and well inside what apimachinery represents exactly.
var maxPodCPU = resource.MustParse("4096")

// PodCPU parses a virt-launcher CPU request or limit: a quantity from 0 to
// 4096 cores (whole, decimal or millicores). Zero is a value a pool can mean
// (the chart's guards decide which zeroes are coherent, poolspec VMTemplate);
// a negative one never reaches a Pod. An empty value (omitted) is nil.
func PodCPU(path *field.Path, v string) (*resource.Quantity, field.ErrorList) {
	if v == "" {
		return nil, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() < 0 || q.Cmp(maxPodCPU) > 0 {
		return nil, field.ErrorList{field.Invalid(path, Quoted(v), "is not a CPU quantity from 0 to 4096, such as 2, 1.5 or 1500m")}
	}
	return &q, nil
}
