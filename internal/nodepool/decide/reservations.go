package decide

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// NodeSize is what the kubelet reservations are computed from: the pool's
// resources, else its instance type; false while that is missing.
func NodeSize(s pool.Shape, it *instancetypev1beta1.VirtualMachineClusterInstancetype) (poolspec.NodeSize, bool) {
	if s.InstanceType == "" {
		return s.Node, true
	}
	if it == nil {
		return poolspec.NodeSize{}, false
	}
	size := poolspec.NodeSize{MilliCPU: int64(it.Spec.CPU.Guest) * 1000, From: fmt.Sprintf("%s %q", pool.InstancetypeKind, s.InstanceType)}
	if it.Spec.Memory.Guest.Sign() > 0 {
		size.MemoryBytes = it.Spec.Memory.Guest.Value()
	}
	return size, true
}

// ResolveReservations is the pool's kubelet reservations, or a hold while
// its instance type is missing: a pool that cannot be sized keeps what it
// runs rather than rolling onto reservations guessed from nothing. A
// reservation the node cannot carry is a spec error.
func ResolveReservations(p pool.Pool, spec v1alpha1.NodePoolSpec, s pool.Shape, size poolspec.NodeSize, ok bool) (poolspec.Reserved, *Hold, error) {
	if s.InstanceType == "" {
		return s.Reserved, nil, nil // on the shape's own size, checked by readPool
	}
	if !ok {
		size = poolspec.NodeSize{Pending: true}
	}
	r, errs := poolspec.Reservations(field.NewPath("spec"), spec.Kubelet, size)
	if len(errs) > 0 {
		return r, nil, pool.Refused(p.Ref(), errors.New(rules.Message(errs)))
	}
	if !ok {
		return r, &Hold{Reason: ReasonInstanceTypeMissing, Message: msgInstanceTypeMissing(p, s.InstanceType)}, nil
	}
	return r, nil, nil
}
