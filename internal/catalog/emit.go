package catalog

import (
	"fmt"
	"slices"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/redact"
	"github.com/cozystack/function-worker-image/internal/stall"
)

// previousStatus is what the last call reported, to find transitions.
type previousStatus struct {
	Goldens    []v1alpha1.GoldenStatus     `json:"goldens"`
	Conditions []compose.ObservedCondition `json:"conditions"`
}

// goldenSignal is a golden's state for the metrics.
func goldenSignal(p planned) compose.GoldenSignal {
	if p.Raw != nil {
		return compose.GoldenSignal{State: stateUnreadable, Retiring: p.Retiring}
	}
	if p.Stalled {
		return compose.GoldenSignal{State: stateStalled, Retiring: p.Retiring}
	}
	return compose.GoldenSignal{State: string(cdistate.Of(p.Live, nil).Kind), Retiring: p.Retiring}
}

// stateUnreadable and stateStalled are the metrics' states of a golden that
// cannot be read, and of one whose import has not moved for
// polling.stallAfter.imports.
const (
	stateUnreadable = "Unreadable"
	stateStalled    = ReasonStalled
)

// emit turns the plan into the Output.
func emit(xrName, goldenNamespace string, plan []planned, obs observedState, prev previousStatus, cfg config.Config, grants grantees, ca string) compose.Output {
	out := compose.Output{Resources: map[fresource.Name]*fresource.DesiredComposed{}}
	statuses := make([]v1alpha1.GoldenStatus, 0, len(plan))
	inProgress := false
	keptReady := map[fresource.Name]fresource.Ready{}
	for _, p := range plan {
		snapshot := desiredSnapshot(p)
		st := statusOf(p, snapshot)
		if p.Arch != cfg.Arch || p.Explicit.Arch {
			// A catalog of the Input's architecture alone reports none.
			st.Architecture = p.Arch
		}
		statuses = append(statuses, st)
		out.Signals.Goldens = append(out.Signals.Goldens, goldenSignal(p))
		ready := fresource.ReadyFalse
		if st.Ready || p.Retiring {
			ready = fresource.ReadyTrue
		}
		if p.Raw != nil {
			keptReady[p.Key] = ready
			if _, err := emitSnapshot(out.Resources, p, snapshot); err != nil {
				return compose.Output{Fatal: err}
			}
			continue
		}
		if !p.Retiring {
			// A golden not created yet appears on the next reconcile.
			if s := cdistate.Of(p.Live, nil); s.InProgress() || s.Kind == cdistate.Missing || p.Recreate {
				inProgress = true
			}
		}
		if p.Recreate {
			// Left out, it is deleted; once gone it is composed anew.
			continue
		}
		c, err := desiredGolden(p, obs)
		if err != nil {
			return compose.Output{Fatal: err}
		}
		out.Resources[p.Key] = &fresource.DesiredComposed{Resource: c, Ready: ready}
		waiting, err := emitSnapshot(out.Resources, p, snapshot)
		if err != nil {
			return compose.Output{Fatal: err}
		}
		inProgress = inProgress || waiting
	}

	subjects := clonerbac.AllServiceAccounts()
	if cfg.CloneRBACScope != v1beta1.CloneRBACAllServiceAccounts {
		subjects = clonerbac.VMServiceAccounts(cfg.VMServiceAccount, grants.Namespaces)
	}
	goldenNames := make([]string, 0, len(plan))
	for _, p := range plan {
		goldenNames = append(goldenNames, p.Name)
	}
	binding := clonerbac.Binding(xrName, goldenNamespace, subjects)
	for key, obj := range map[fresource.Name]runtime.Object{
		keyClusterRole: clonerbac.Role(xrName, goldenNames),
		keyRoleBinding: binding,
	} {
		c, err := compose.ToDesired(obj)
		if err != nil {
			return compose.Output{Fatal: fmt.Errorf("cannot compose %s: %w", key, err)}
		}
		ready := fresource.ReadyFalse
		if _, ok := obs.Resources[key]; ok {
			ready = fresource.ReadyTrue
		}
		out.Resources[key] = &fresource.DesiredComposed{Resource: c, Ready: ready}
	}
	if err := protectRBAC(out.Resources, xrName, goldenNamespace, plan, obs, cfg.Usages); err != nil {
		return compose.Output{Fatal: err}
	}
	// Pools hold their MachineDeployments until the namespace is bound;
	// check again soon.
	if !sameSubjects(obs.Binding, binding.Subjects) {
		inProgress = true
	}
	keepCA, err := emitFactoryCA(out.Resources, xrName, goldenNamespace, ca, plan)
	if err != nil {
		return compose.Output{Fatal: err}
	}
	// Readable goldens left out were retired by planGoldens or are
	// re-created (settle.go); a CA ConfigMap no longer configured stays
	// while a golden that names it still imports.
	retired := func(n fresource.Name) bool { return n != keyFactoryCA || !keepCA }
	obs.Keep(out.Resources, retired, func(n fresource.Name) fresource.Ready {
		if n == keyFactoryCA {
			return fresource.ReadyTrue
		}
		return keptReady[n]
	})

	out.Status = map[string]any{"goldens": statuses}
	// No new top-level status field: a composite whose XRD predates it
	// (a function upgraded before its configuration) would refuse the
	// status, and nothing else of the catalog would apply. The RoleBinding
	// itself lists what is bound.
	out.Conditions = []compose.Condition{goldensCondition(plan), retiringCondition(plan, grants.Plan.ByUsages)}
	if c, ok := snapshotsCondition(plan); ok {
		out.Conditions = append(out.Conditions, c)
	}
	out.Results = transitions(prev.Goldens, statuses)
	readable, report := compose.ReadableWhenNeeded(fmt.Sprintf("XWorkerImageCatalog %q", xrName), obs.Problems(), prev.Conditions)
	if report {
		out.Conditions = append(out.Conditions, readable)
	}
	if r, ok := compose.Transition(readable, prev.Conditions); ok {
		out.Results = append(out.Results, r)
	}
	if inProgress {
		out.TTL = cfg.InProgressTTL
	}
	return out
}

// desiredGolden is a golden's desired DataVolume: the one the catalog makes
// for a new golden; for an existing one, the same metadata over the spec it
// lives with, re-emitted as observed, so that no default changed since, no
// field an older release or chart wrote (spec.pvc), and no quantity's
// spelling turns into an update of an immutable spec (settle.go).
func desiredGolden(p planned, obs observedState) (*composed.Unstructured, error) {
	dv := goldenDataVolume(p.Golden)
	if memo := cdistate.Of(p.Live, nil).Remembered(); memo != "" {
		// CDI drops the message on each importer restart; the golden
		// keeps it for cdistate.Of.
		dv.Annotations[labels.AnnImportPermanentError] = memo
	}
	if mark := stallMark(p); mark != "" {
		// The pools that clone it read the golden, not the catalog.
		dv.Annotations[labels.AnnImportStalled] = mark
	}
	c, err := compose.ToDesired(dv, compose.DropZero("spec", "finalCheckpoint"))
	if err != nil {
		return nil, fmt.Errorf("cannot compose golden DataVolume %s/%s: %w", p.Namespace, p.Name, err)
	}
	if u, ok := obs.Resources[p.Key]; ok && p.Live != nil {
		if spec, ok := u.Object["spec"]; ok {
			c.Object["spec"] = runtime.DeepCopyJSONValue(spec)
		}
	}
	return c, nil
}

// emitFactoryCA composes the catalog's CA ConfigMap while it has a CA, and
// reports whether an observed one with no CA configured must stay: a golden
// that names it and has not succeeded still mounts it (CDI's importer pod
// does not start without it: import-controller.go getCertConfigMap).
func emitFactoryCA(into map[fresource.Name]*fresource.DesiredComposed, xrName, namespace, ca string, plan []planned) (bool, error) {
	if ca != "" {
		c, err := compose.ToDesired(factoryCAConfigMap(xrName, namespace, ca))
		if err != nil {
			return false, fmt.Errorf("cannot compose the Image Factory CA ConfigMap: %w", err)
		}
		into[keyFactoryCA] = &fresource.DesiredComposed{Resource: c, Ready: fresource.ReadyTrue}
		return false, nil
	}
	name := factoryCAName(xrName)
	for _, p := range plan {
		if p.Live != nil && p.Import.CertConfigMap == name && !cdistate.Of(p.Live, nil).Ready() {
			return true, nil
		}
	}
	return false, nil
}

// statusOf is the golden's status entry; snapshot is its desiredSnapshot.
func statusOf(p planned, snapshot *snapshotv1.VolumeSnapshot) v1alpha1.GoldenStatus {
	st := v1alpha1.GoldenStatus{
		Name:         p.Name,
		Namespace:    p.Namespace,
		SchematicID:  p.SchematicID,
		Version:      p.Version,
		Storage:      p.StorageText,
		StorageClass: p.StorageClass,
		Source:       redact.Text(p.URL),
		PinnedBy:     p.PinnedBy,
		InUse:        p.InUse,
		Retiring:     p.Retiring,
		Snapshot:     snapshotStatus(p, snapshot),
	}
	switch {
	case p.Raw != nil:
		st.Phase = string(cdiv1.Unknown)
	case p.Live != nil:
		st.Phase = string(p.Live.Status.Phase)
		st.Progress = string(p.Live.Status.Progress)
		st.Ready = cdistate.Of(p.Live, nil).Ready()
	}
	if p.Moved != nil {
		st.Restarts, st.ProgressSince = p.Moved.Restarts, stall.FormatSince(p.Moved.Since)
	}
	st.Reason, st.Message = goldenReason(p)
	return st
}

// sameSubjects reports whether the observed RoleBinding has exactly these subjects.
func sameSubjects(rb *rbacv1.RoleBinding, want []rbacv1.Subject) bool {
	if rb == nil {
		return false
	}
	if len(rb.Subjects) == 0 && len(want) == 0 {
		return true
	}
	return slices.Equal(rb.Subjects, want)
}
