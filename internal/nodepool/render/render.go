package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// MachineTemplate and bootstrapTemplate are a rendered template and its
// desired form, canonicalised once (named).
type MachineTemplate struct {
	*infrav1.KubevirtMachineTemplate
	Desired *composed.Unstructured
}

type BootstrapTemplate struct {
	*talosconfig.TalosConfigTemplate
	Desired *composed.Unstructured
}

// named gives a template (metadata set, name empty) its content name,
// "<cluster>-<pool>-<hash>", the hash covering the whole spec in its
// canonical form, and returns that canonical form with the name set: what
// is applied is exactly what is hashed, and the object is serialised once.
// Templates are immutable, so a change must be a new name; the name being
// a function of content makes re-renders idempotent. compose.Canonical of
// the object holds the canonical spec under "spec" (templateShape's rules
// are by key, not by path), so names are those the spec alone gave.
func named(p pool.Pool, obj any) (string, *composed.Unstructured, error) {
	u, err := compose.ToDesired(obj, TemplateShape...)
	if err != nil {
		return "", nil, fmt.Errorf("cannot hash template spec: %w", err)
	}
	// encoding/json writes map keys sorted: the canonical bytes.
	b, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return "", nil, fmt.Errorf("cannot hash template spec: %w", err)
	}
	sum := sha256.Sum256(b)
	name := p.DeploymentName() + "-" + hex.EncodeToString(sum[:])[:pool.HashLength]
	u.SetName(name)
	return name, u, nil
}

// templateMeta is the metadata of a content-named template.
func templateMeta(p pool.Pool, name string, l, a map[string]string) metav1.ObjectMeta {
	ls := map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.ManagedBy: labels.ManagedByValue}
	maps.Copy(ls, l)
	return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: ls, Annotations: a}
}

// RenderingRevision numbers how this function renders templates. Bump it
// with every change that renders any template differently for the same
// ask (TestRenderingRevisionCoversTheRendering fails until it is), so
// that RenderingCurrent can tell the pools that run an earlier rendering
// without rendering anything for them.
const RenderingRevision = 2

// FirstRendering is the RenderingRevision of the releases that recorded no
// rendering, and of every release before ask records.
const FirstRendering = 1

// renderingRevision is RenderingRevision, a variable so that tests can play
// a later release.
var Rendering = RenderingRevision

// MachineTemplateFrom and bootstrapTemplateFrom are templates this pool
// composes as they already are (kept or adopted), in the typed form too.
func MachineTemplateFrom(u *composed.Unstructured) (MachineTemplate, error) {
	kmt := &infrav1.KubevirtMachineTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, kmt); err != nil {
		return MachineTemplate{}, fmt.Errorf("KubevirtMachineTemplate %s: %w", u.GetName(), err)
	}
	return MachineTemplate{KubevirtMachineTemplate: kmt, Desired: u}, nil
}

func BootstrapTemplateFrom(u *composed.Unstructured) (BootstrapTemplate, error) {
	tct := &talosconfig.TalosConfigTemplate{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tct); err != nil {
		return BootstrapTemplate{}, fmt.Errorf("TalosConfigTemplate %s: %w", u.GetName(), err)
	}
	return BootstrapTemplate{TalosConfigTemplate: tct, Desired: u}, nil
}

// Stamped is u with the request and this release's rendering recorded; the
// name is not touched (it hashes the spec alone, named).
func Stamped(u *composed.Unstructured, ask string) *composed.Unstructured {
	return StampedAt(u, ask, Rendering)
}

// StampedAt is u with the request and the rendering that made it recorded.
func StampedAt(u *composed.Unstructured, ask string, rendering int) *composed.Unstructured {
	out := u.DeepCopy()
	a := out.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[pool.AnnAsk] = ask
	a[pool.AnnRendering] = strconv.Itoa(rendering)
	out.SetAnnotations(a)
	return out
}
