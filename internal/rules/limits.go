package rules

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
	// MaxStorage is the largest size accepted anywhere (a worker disk, the
	// Input's sizes). It is far above any real disk, and far below the sizes
	// apimachinery can no longer represent exactly (1000000000000000000000
	// is written back as "1"), so a size that passes is the size that gets
	// provisioned.
	MaxStorage = resource.MustParse("1Pi")
	// MaxGoldenStorage is the largest golden accepted: a golden holds one
	// Talos disk image, about 1.2 GiB.
	MaxGoldenStorage = resource.MustParse("1Ti")
	// maxMemory is the largest guest memory accepted, for the same reason:
	// more than any host a KubeVirt worker runs on offers.
	maxMemory = resource.MustParse("16Ti")
	maxCores  = resource.MustParse(strconv.Itoa(MaxCores))
)

// Replicas checks a replica count as it appears in the composite: a JSON
// number, checked before it is narrowed to int32 so that 4294967297 is
// refused rather than wrapped to 1. An omitted value passes, and so does one
// that is not a number: the spec's decoder reports its type.
func Replicas(path *field.Path, v any) field.ErrorList {
	if !IsNumber(v) {
		return nil
	}
	literal := fmt.Sprint(v)
	if b, err := json.Marshal(v); err == nil {
		literal = string(b) // as JSON has it: 1e12 is 1000000000000, 3.0 is 3
	}
	if n, err := strconv.ParseInt(literal, 10, 64); err != nil || n < 0 || n > MaxReplicas {
		return field.ErrorList{field.Invalid(path, json.Number(Quoted(literal)), fmt.Sprintf("is not a whole number from 0 to %d; set how many workers the pool runs, at most %d per pool (split a larger fleet into several pools)", MaxReplicas, MaxReplicas))}
	}
	return nil
}

// DiskSize parses a worker system disk size: a positive quantity no larger
// than 1Pi. An empty value (omitted) is the zero quantity.
func DiskSize(path *field.Path, v string) (resource.Quantity, field.ErrorList) {
	return quantity(path, v, MaxStorage, defaults.DiskSize, "the largest worker disk accepted")
}

// Memory parses a worker's guest memory: a positive quantity no larger than
// 16Ti. An empty value (omitted) is the zero quantity.
func Memory(path *field.Path, v string) (resource.Quantity, field.ErrorList) {
	return quantity(path, v, maxMemory, "4Gi", "the largest worker memory accepted")
}

// Size parses one of the Input's sizes: a positive quantity no larger than
// 1Pi; example is its default, shown as the fix.
func Size(path *field.Path, v, example string) (resource.Quantity, field.ErrorList) {
	return quantity(path, v, MaxStorage, example, "the largest size accepted")
}

// GoldenStorage parses a golden's size: at least minimum (what the Talos
// disk image needs) and at most 1Ti; example is the default size.
func GoldenStorage(path *field.Path, v string, minimum resource.Quantity, example string) (resource.Quantity, field.ErrorList) {
	q, errs := quantity(path, v, MaxGoldenStorage, example, "the largest golden accepted (a golden holds one Talos disk image, about 1.2 GiB)")
	if len(errs) == 0 {
		if errs = HoldsImage(path, v, q, minimum, "raise it to at least "+minimum.String()); len(errs) > 0 {
			return resource.Quantity{}, errs
		}
	}
	return q, errs
}

// HoldsImage checks that a disk the Talos image is imported into, over
// HTTP (a golden, or a worker disk of a pool that imports), is at least
// minimum, the Input's storage.minimumImageStorage: CDI's importer refuses
// a target smaller than the image's virtual size, so a smaller disk is an
// import that can only fail. v is the value as written; fix says what to
// write instead. One rule for the catalog and the pools, so both refuse
// the same sizes with the same reason.
func HoldsImage(path *field.Path, v string, q, minimum resource.Quantity, fix string) field.ErrorList {
	if q.Cmp(minimum) >= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is smaller than the Talos disk image (%s), so the import would fail; %s", minimum.String(), fix))}
}

// Cores parses a whole number of cores from 1 to 512. It compares quantities
// rather than their int64 values, which overflow to 0 for sizes such as
// 1e30. An empty value (omitted) is 0.
func Cores(path *field.Path, v string) (uint32, field.ErrorList) {
	if v == "" {
		return 0, nil
	}
	c, err := resource.ParseQuantity(v)
	if err != nil || c.Sign() <= 0 || c.Cmp(maxCores) > 0 || c.MilliValue()%1000 != 0 {
		return 0, field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is not a whole number of cores between 1 and %d, e.g. 2", MaxCores))}
	}
	return uint32(c.Value()), nil
}

// quantity parses v and bounds it to (0, most].
func quantity(path *field.Path, v string, most resource.Quantity, example, limit string) (resource.Quantity, field.ErrorList) {
	if v == "" {
		return resource.Quantity{}, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return resource.Quantity{}, field.ErrorList{field.Invalid(path, Quoted(v), "is not a positive quantity such as "+example)}
	}
	if q.Cmp(most) > 0 {
		return resource.Quantity{}, field.ErrorList{field.Invalid(path, Quoted(v), fmt.Sprintf("is larger than %s, %s; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as %s", most.String(), limit, example))}
	}
	// Bounded by most, the milli value cannot overflow. A fraction of a
	// byte is a typo: "1m" is a thousandth of a byte (m is milli, not
	// mega), and a PVC request rounds it up to 1 byte.
	if q.MilliValue()%1000 != 0 {
		return resource.Quantity{}, field.ErrorList{field.Invalid(path, Quoted(v), "is not a whole number of bytes (the suffix m is milli: 1m is a thousandth of a byte); write a size such as "+example+" (Mi, Gi for binary megabytes and gigabytes, M, G for decimal)")}
	}
	return q, nil
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
