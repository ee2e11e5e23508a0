package decide

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/nodepool/render"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// KeptTemplate is a running template kept for the pool's unchanged ask
// although this release renders templates differently, or one adopted.
type KeptTemplate struct {
	Kind, Running, Rendered string
	// Revision is the RenderingRevision it was rendered by, 0 when another
	// tool made it.
	Revision int
}

// Stale is a kept template an earlier rendering made, for RenderingCurrent;
// false for one this release renders alike.
func Stale(kind string, u *composed.Unstructured) (KeptTemplate, bool) {
	rev, err := strconv.Atoi(u.GetAnnotations()[pool.AnnRendering])
	if err == nil && rev == render.Rendering {
		return KeptTemplate{}, false
	}
	return KeptTemplate{Kind: kind, Running: u.GetName(), Revision: rev}, true
}

// PinOn pins the pool's Join config on the running bootstrap template u and
// names the facts that changed since it was built.
func PinOn(j *read.JoinPlan, bootstrap string, u *composed.Unstructured) {
	j.Pinned = bootstrap
	was := talosconfig.MachineConfig{}
	if data, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "data"); data != "" {
		// An unreadable document names no fact; the condition still says
		// that the facts changed.
		_ = yaml.Unmarshal([]byte(data), &was)
	}
	j.Changed = read.ChangedFacts(j.Refs, was.Facts(), j.Facts.JoinFacts)
}
