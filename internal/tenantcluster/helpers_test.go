package tenantcluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/json"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/config"
)

// defaultConfig is the Config of an empty Input.
func defaultConfig(t testing.TB) config.Config {
	t.Helper()
	cfg, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatalf("config.FromInput: %v", err)
	}
	return cfg
}

// The helpers decode with apimachinery's JSON, which keeps integers int64
// as the unstructured helpers do.

// newXR is an observed XTenantCluster from JSON.
func newXR(t testing.TB, js string) *composite.Unstructured {
	t.Helper()
	xr := composite.New()
	if err := json.Unmarshal([]byte(js), &xr.Object); err != nil {
		t.Fatalf("bad test XR: %v", err)
	}
	return xr
}

// newObserved is an observed composed resource from JSON.
func newObserved(t testing.TB, js string) resource.ObservedComposed {
	t.Helper()
	u := composed.New()
	if err := json.Unmarshal([]byte(js), &u.Object); err != nil {
		t.Fatalf("bad test composed resource: %v", err)
	}
	return resource.ObservedComposed{Resource: u}
}

// newDesired is a desired composed resource from JSON.
func newDesired(t testing.TB, ready resource.Ready, js string) *resource.DesiredComposed {
	t.Helper()
	u := composed.New()
	if err := json.Unmarshal([]byte(js), &u.Object); err != nil {
		t.Fatalf("bad test composed resource: %v", err)
	}
	return &resource.DesiredComposed{Resource: u, Ready: ready}
}

// equateErrorMessages compares errors by message: a fatal's wording is part
// of the contract, its type is not.
var equateErrorMessages = cmp.Comparer(func(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
})

// errorMessage is err's message, or "" for none.
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func ptr[T any](v T) *T { return &v }
