package poolspec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// PodResources are the virt-launcher Pod's CPU and ephemeral storage.
type PodResources struct {
	// PodCPURequest and PodCPULimit are nil when the pool leaves them to
	// KubeVirt, which derives both from the guest vCPU count.
	PodCPURequest, PodCPULimit       *resource.Quantity
	EphemeralRequest, EphemeralLimit resource.Quantity
}

// VMTemplate checks the worker VM details of a pool's shape at root: roles,
// the virt-launcher CPU pair and its guards, ephemeral storage and the
// system disk, and returns the Pod's resources it parsed. The CPU guards are
// the cozystack chart's, one for one
// (packages/apps/kubernetes-nodes/templates/nodegroup.yaml:228-297 @69da032).
func VMTemplate(root *field.Path, s v1alpha1.PoolShape) (PodResources, field.ErrorList) {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range s.Roles {
		path := root.Child("roles").Index(i)
		if seen[r] {
			errs = append(errs, field.Duplicate(path, rules.Quoted(r)))
			continue
		}
		seen[r] = true
		errs = append(errs, rules.NodeRole(path, r)...)
	}
	cpuReq, cpuLim, e := podCPU(root, s)
	req, lim, es := EphemeralStorage(root.Child("ephemeralStorage"), s.EphemeralStorage)
	errs = append(append(errs, e...), es...)
	if d := s.Disk; d != nil {
		errs = append(errs, rules.PCIAddress(root.Child("disk", "pciAddress"), d.PCIAddress)...)
		if b := d.BlockSize; b != nil {
			errs = append(errs, rules.BlockSize(root.Child("disk", "blockSize"), b.Logical, b.Physical)...)
		}
	}
	return PodResources{PodCPURequest: cpuReq, PodCPULimit: cpuLim, EphemeralRequest: req, EphemeralLimit: lim}, errs
}

// podCPU parses podCpuRequest and podCpuLimit and runs the chart's guards
// on them. Presence, not truth: zero is a value, and which zeroes are
// coherent is decided here.
func podCPU(root *field.Path, s v1alpha1.PoolShape) (req, lim *resource.Quantity, errs field.ErrorList) {
	reqPath, limPath := root.Child("podCpuRequest"), root.Child("podCpuLimit")
	req, errs = rules.PodCPU(reqPath, string(s.PodCPURequest))
	lim, e := rules.PodCPU(limPath, string(s.PodCPULimit))
	errs = append(errs, e...)
	if len(errs) > 0 {
		return req, lim, errs
	}
	sizedByResources := s.InstanceType == "" && s.Resources != nil && (s.Resources.CPU != "" || s.Resources.Memory != "")
	for _, c := range []struct {
		path  *field.Path
		value string
		key   string
	}{{reqPath, string(s.PodCPURequest), "requests"}, {limPath, string(s.PodCPULimit), "limits"}} {
		if c.value != "" && !sizedByResources {
			// An instance type (the pool's, or the default u1.medium when
			// the pool sets no resources) owns the VM's CPU.
			errs = append(errs, field.Invalid(c.path, rules.Quoted(c.value), fmt.Sprintf("cannot be combined with instance type sizing: KubeVirt refuses a VirtualMachine that references an instancetype and also sets domain.resources.%s.cpu; size the pool with resources (memory, optionally cpu) instead of instanceType, or drop it", c.key)))
		}
	}
	if len(errs) > 0 {
		return req, lim, errs
	}
	switch {
	case lim != nil && req == nil && lim.IsZero():
		errs = append(errs, field.Invalid(limPath, rules.Quoted(string(s.PodCPULimit)), "0 needs podCpuRequest 0 beside it: a zero limit removes the ceiling, but KubeVirt still derives a CPU request from the guest vCPU count when the VM declares none, and a request above a declared limit of zero is refused when the worker's Pod is created"))
	case lim != nil && req != nil && req.IsZero() && !lim.IsZero():
		errs = append(errs, field.Invalid(reqPath, rules.Quoted(string(s.PodCPURequest)), fmt.Sprintf("0 beside podCpuLimit %q does not reserve nothing: KubeVirt replaces a zero CPU request with the declared limit, so the worker would ask for its whole ceiling; give podCpuRequest a non-zero value, or drop it", rules.Quoted(string(s.PodCPULimit)))))
	case lim != nil && req != nil && req.Cmp(*lim) > 0:
		errs = append(errs, field.Invalid(reqPath, rules.Quoted(string(s.PodCPURequest)), fmt.Sprintf("exceeds podCpuLimit %q, and a container cannot request more CPU than its limit; lower the request or raise the limit", rules.Quoted(string(s.PodCPULimit)))))
	}
	return req, lim, errs
}

// EphemeralStorage resolves the virt-launcher Pod's ephemeral storage at
// path: the limit (default 2Gi) and the request (default limit/40, the
// chart's cozy-lib sanitize), a request no larger than the limit. e may be
// nil (both defaults).
func EphemeralStorage(path *field.Path, e *v1alpha1.EphemeralStorage) (request, limit resource.Quantity, errs field.ErrorList) {
	limit = resource.MustParse(defaults.EphemeralStorageLimit)
	var reqSet string
	if e != nil {
		if e.Limit != "" {
			q, es := rules.Size(path.Child("limit"), string(e.Limit), defaults.EphemeralStorageLimit)
			errs = append(errs, es...)
			limit = q
		}
		reqSet = string(e.Request)
	}
	if reqSet == "" {
		// The chart writes the request as whole bytes (cozy-lib's
		// "| int"): 2Gi/40 is 53687091.
		request = *resource.NewQuantity(limit.Value()/defaults.EphemeralStorageRatio, resource.DecimalSI)
	} else {
		q, es := rules.Size(path.Child("request"), reqSet, "64Mi")
		errs = append(errs, es...)
		request = q
		if len(errs) == 0 && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(path.Child("request"), rules.Quoted(reqSet), fmt.Sprintf("exceeds the limit %s, and a container cannot request more than its limit; lower the request or raise ephemeralStorage.limit", limit.String())))
		}
	}
	return request, limit, errs
}
