package rules

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cozystack/function-worker-image/internal/defaults"
)

// The bounds of a pool's shape, defined once: the node pool enforces them on
// its own spec, and the tenant cluster on each pool it composes, with the
// same checks and the same messages, so a bad value is named where the user
// wrote it.
const (
	// MaxReplicas is the most workers one pool may run. 0..1000 is sane for
	// one pool: a larger count is a typo (or a number that wrapped through
	// int32) far more often than a real fleet, and a real fleet that large is
	// better split into several pools that roll independently.
	MaxReplicas = 1000
	// MaxCores is the most virtual CPU cores one worker VM may have.
	MaxCores = 512
)

var (
	// maxDiskSize is the largest worker system disk accepted. It is far above
	// any real worker disk, and far below the sizes apimachinery can no
	// longer represent exactly (1000000000000000000000 is written back as
	// "1"), so a size that passes is the size that gets provisioned.
	maxDiskSize = resource.MustParse("1Pi")
	// maxMemory is the largest guest memory accepted, for the same reason:
	// more than any host a KubeVirt worker runs on offers.
	maxMemory = resource.MustParse("16Ti")
	maxCores  = resource.MustParse(strconv.Itoa(MaxCores))
)

// CheckReplicas checks a replica count as it appears in the composite: a
// JSON number, checked before it is narrowed to int32 so that 4294967297 is
// refused rather than wrapped to 1. field is the path to name in the message.
// An omitted value passes, and so does one that is not a number: the spec's
// decoder reports its type.
func CheckReplicas(field string, v any) error {
	if !IsNumber(v) {
		return nil
	}
	literal := fmt.Sprint(v)
	if b, err := json.Marshal(v); err == nil {
		literal = string(b) // as JSON has it: 1e12 is 1000000000000, 3.0 is 3
	}
	if n, err := strconv.ParseInt(literal, 10, 64); err != nil || n < 0 || n > MaxReplicas {
		return fmt.Errorf("%s %s is not a whole number from 0 to %d; set how many workers the pool runs, at most %d per pool (split a larger fleet into several pools)", field, literal, MaxReplicas, MaxReplicas)
	}
	return nil
}

// CheckDiskSize checks a worker system disk size: a positive quantity no
// larger than 1Pi. An empty value (omitted) passes.
func CheckDiskSize(field, v string) error {
	_, err := ParseDiskSize(field, v)
	return err
}

// ParseDiskSize is CheckDiskSize that returns the size.
func ParseDiskSize(field, v string) (resource.Quantity, error) {
	return checkQuantity(field, v, maxDiskSize, defaults.DiskSize, "the largest worker disk accepted")
}

// CheckMemory checks a worker's guest memory: a positive quantity no larger
// than 16Ti. An empty value (omitted) passes.
func CheckMemory(field, v string) error {
	_, err := ParseMemory(field, v)
	return err
}

// ParseMemory is CheckMemory that returns the memory.
func ParseMemory(field, v string) (resource.Quantity, error) {
	return checkQuantity(field, v, maxMemory, "4Gi", "the largest worker memory accepted")
}

// CheckCPU checks a worker's core count: a whole number from 1 to 512. An
// empty value (omitted) passes.
func CheckCPU(field, v string) error {
	_, err := ParseCores(field, v)
	return err
}

// CheckStorageClass checks a StorageClass name. An empty value passes: it
// means the cluster's default class.
func CheckStorageClass(field, v string) error {
	if v == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		return fmt.Errorf("%s %q is not a StorageClass name (%s); name an existing StorageClass, or leave it empty for the cluster default", field, v, errs[0])
	}
	return nil
}

// checkQuantity parses v and bounds it to (0, most].
func checkQuantity(field, v string, most resource.Quantity, example, limit string) (resource.Quantity, error) {
	if v == "" {
		return resource.Quantity{}, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return resource.Quantity{}, fmt.Errorf("%s %q is not a positive quantity such as %s", field, v, example)
	}
	if q.Cmp(most) > 0 {
		return resource.Quantity{}, fmt.Errorf("%s %q is larger than %s, %s; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as %s", field, v, most.String(), limit, example)
	}
	return q, nil
}

// ParseCores parses a whole number of cores. It compares quantities rather
// than their int64 values, which overflow to 0 for sizes such as 1e30.
func ParseCores(field, v string) (uint32, error) {
	if v == "" {
		return 0, nil
	}
	c, err := resource.ParseQuantity(v)
	if err != nil || c.Sign() <= 0 || c.Cmp(maxCores) > 0 || c.MilliValue()%1000 != 0 {
		return 0, fmt.Errorf("%s %q is not a whole number of cores between 1 and %d, e.g. 2", field, v, MaxCores)
	}
	return uint32(c.Value()), nil
}

// IsNumber reports whether v, a value decoded from JSON, is a number: what
// a composite carries where its schema says integer, before it is narrowed.
func IsNumber(v any) bool {
	switch v.(type) {
	case nil, string, bool, map[string]any, []any:
		return false
	}
	return true
}
