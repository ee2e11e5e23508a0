package nodepool

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/required"
)

// goldenSnapshotContent asks for the content the golden's snapshot is bound
// to, once the snapshot is read: CDI's planner compares its driver and
// source volume mode with the worker disk's class (clone/planner.go
// computeStrategyForSourceSnapshot).
func (c *call) goldenSnapshotContent(got required.Resolved) required.Selectors {
	if c.img.Source != pool.SourceClone || !c.reads.Clone || !c.r.Config.SnapshotGoldens {
		return nil
	}
	for _, u := range got[read.ReqGoldenSnapshot] {
		if !read.Is(u, c.img.GoldenNamespace, c.img.GoldenName) {
			continue
		}
		name, _, _ := unstructured.NestedString(u.Object, "status", "boundVolumeSnapshotContentName")
		if name == "" {
			return nil
		}
		return required.Selectors{read.ReqGoldenSnapshotContent: required.ByName(goldensnapshot.APIVersion, goldensnapshot.ContentKind, "", name)}
	}
	return nil
}
