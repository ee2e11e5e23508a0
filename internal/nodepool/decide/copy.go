package decide

import (
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// ChooseCopy is the copy path of a clone pool whose class the Input lists
// and whose golden exists on another class; nil otherwise. A pool on its
// golden's own class clones as CDI plans it, its fallbacks accepted or not
// by clonePreflight.allowHostAssistedCopy alone.
func ChooseCopy(cfg config.Config, img pool.Image, golden cdistate.State, poolClass, goldenClass pool.Class) *read.CopyPath {
	if img.Source != pool.SourceClone || golden.Kind == cdistate.Missing || goldenClass.Name == "" ||
		poolClass.Name == goldenClass.Name || !cfg.CopiesOnto(poolClass.Name) {
		return nil
	}
	return &read.CopyPath{Class: poolClass.Name, Golden: img.GoldenRef(), GoldenClass: goldenClass.Name}
}

// PredictCopy is what CDI does with a worker disk that asks for a copy:
// the target predictClone builds, with the cloneType it carries.
func PredictCopy(img pool.Image, class string, diskSize resource.Quantity, w read.Required) cloneplan.Plan {
	in := cloneInput(img, class, diskSize, w)
	in.Target.CloneType = cdiv1.CloneStrategyHostAssisted
	return cloneplan.Predict(in)
}

// WorkersTemplate is the machine template the pool's workers are made from
// once this call is applied: the one the plan's deployment names when
// nothing holds it back, else the one the observed deployment runs; nil
// when that is not composed.
func WorkersTemplate(pl Plan) *composed.Unstructured {
	name, _ := pl.Composed.InEffect()
	if pl.Hold == nil {
		name, _ = pl.DeploymentRefs()
	}
	if name == "" {
		return nil
	}
	if name == pl.MachineTemplate.Name {
		return pl.MachineTemplate.Desired
	}
	return pl.Composed.Resources[read.MachineTemplateResource(name)]
}
