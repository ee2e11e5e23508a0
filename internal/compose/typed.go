package compose

import (
	"github.com/pkg/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/function-sdk-go/resource/composed"
)

// FromTyped converts a typed object into a desired composed resource. Desired
// state is a server-side-apply intent: status is never desired, and zero
// values that a type serialises without omitempty (for example a
// DataVolume's spec.finalCheckpoint) would claim an opinion the function does
// not have, so the paths named in zeroFields are removed when they hold
// their type's zero value.
func FromTyped(obj runtime.Object, zeroFields ...[]string) (*composed.Unstructured, error) {
	c, err := composed.From(obj)
	if err != nil {
		return nil, errors.Wrapf(err, "cannot convert %T to a composed resource", obj)
	}
	delete(c.Object, "status")
	for _, path := range zeroFields {
		v, found, err := unstructured.NestedFieldNoCopy(c.Object, path...)
		if err != nil || !found {
			continue
		}
		switch x := v.(type) {
		case bool:
			if x {
				continue
			}
		case string:
			if x != "" {
				continue
			}
		case int64:
			if x != 0 {
				continue
			}
		case float64:
			if x != 0 {
				continue
			}
		default:
			continue
		}
		unstructured.RemoveNestedField(c.Object, path...)
	}
	return c, nil
}
