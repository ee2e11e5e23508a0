package decide

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/clonerbac"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/stall"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

// PoolClone returns a worker DataVolume of this pool that finished cloning
// this golden, or nil. Matching on both labels, not a name prefix, keeps pool
// md0 from counting a sibling md0-gpu's disks.
func PoolClone(p pool.Pool, img pool.Image, dvs []cdiv1.DataVolume) *cdiv1.DataVolume {
	goldenHash := labels.GoldenHash(img.GoldenNamespace, img.GoldenName)
	for i := range dvs {
		dv := &dvs[i]
		if dv.Labels[labels.Pool] == p.Hash() && dv.Labels[labels.Golden] == goldenHash && dv.Status.Phase == cdiv1.Succeeded {
			return dv
		}
	}
	return nil
}

// PoolClassOf is the class a pool's next clone lands on: the one known
// without reading the cluster (prepare), else the class its cloned disk of
// this golden was bound on, else today's default. Keeping the default its
// disks were made on means moving the default annotation rolls no pool.
func PoolClassOf(known *pool.Class, clone *cdiv1.DataVolume, pvcs []corev1.PersistentVolumeClaim, def storageclass.Choice) pool.Class {
	if known != nil {
		return *known
	}
	if clone != nil {
		claim := clone.Name
		if clone.Status.ClaimName != "" {
			claim = clone.Status.ClaimName
		}
		for _, pvc := range pvcs {
			if pvc.Name == claim && pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName != "" {
				return pool.Class{Name: *pvc.Spec.StorageClassName, From: fmt.Sprintf("the pool's cloned disk %s/%s", pvc.Namespace, pvc.Name)}
			}
		}
	}
	return fromDefault(def)
}

// GoldenClassOf is the golden's class: its DataVolume's declared class wins,
// else its PVC's, else today's default.
func GoldenClassOf(dv *cdiv1.DataVolume, pvc *corev1.PersistentVolumeClaim, def storageclass.Choice) pool.Class {
	if dv != nil {
		if sc := declaredClass(dv); sc != "" {
			return pool.Class{Name: sc, From: "the golden DataVolume's spec"}
		}
	}
	if pvc != nil && pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName != "" {
		return pool.Class{Name: *pvc.Spec.StorageClassName, From: "the golden's PVC"}
	}
	return fromDefault(def)
}

func fromDefault(def storageclass.Choice) pool.Class {
	if def.Name == "" {
		return pool.Class{}
	}
	return pool.Class{Name: def.Name, From: "today's default StorageClass (" + def.Annotation + ")", Default: true}
}

func declaredClass(dv *cdiv1.DataVolume) string {
	switch {
	case dv.Spec.Storage != nil && dv.Spec.Storage.StorageClassName != nil:
		return *dv.Spec.Storage.StorageClassName
	case dv.Spec.PVC != nil && dv.Spec.PVC.StorageClassName != nil:
		return *dv.Spec.PVC.StorageClassName
	}
	return ""
}

// goldenStorageOf is the golden's size: its DataVolume's request, else its PVC's.
func goldenStorageOf(dv *cdiv1.DataVolume, pvc *corev1.PersistentVolumeClaim) *resource.Quantity {
	if dv != nil {
		var req corev1.ResourceList
		switch {
		case dv.Spec.Storage != nil:
			req = dv.Spec.Storage.Resources.Requests
		case dv.Spec.PVC != nil:
			req = dv.Spec.PVC.Resources.Requests
		}
		if q, ok := req[corev1.ResourceStorage]; ok {
			return &q
		}
	}
	if pvc != nil {
		if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			return &q
		}
	}
	return nil
}

// GateOnGolden holds a new clone template until its golden is ready: a
// worker cloned from an importing golden waits with it, from a failed one
// forever, while the hold keeps the running workers. A pool with a finished
// clone of it is never held.
func GateOnGolden(p pool.Pool, img pool.Image, st cdistate.State, dv *cdiv1.DataVolume, cloned bool) *Hold {
	if cloned || st.Ready() {
		return nil
	}
	golden := img.GoldenRef()
	switch st.Kind {
	case cdistate.Missing:
		return &Hold{Reason: ReasonGoldenMissing, Message: msgGoldenMissing(p, golden, img)}
	case cdistate.Failed, cdistate.Permanent:
		// CDI will not get a Permanent golden any further either: both
		// need someone to act (cdistate, docs/cdi-behaviour.md).
		return &Hold{Reason: ReasonGoldenFailed, Message: msgGoldenFailed(p, golden, st, goldenImport(img, dv))}
	case cdistate.Failing:
		return &Hold{Reason: ReasonGoldenFailing, Message: msgGoldenFailing(p, golden, img, st, goldenImport(img, dv))}
	}
	// The catalog's verdict, while the golden is where it stalled
	// (internal/stall): the pool reads the golden, not the catalog.
	if dv != nil {
		if mark, ok := stall.MarkOf(dv.Annotations[labels.AnnImportStalled], dv); ok {
			return &Hold{Reason: ReasonGoldenStalled, Message: msgGoldenStalled(p, golden, st, mark, goldenImport(img, dv))}
		}
	}
	progress := ""
	if st.Progress != "" {
		progress = ", " + st.Progress
	}
	return &Hold{Reason: ReasonGoldenImporting, Message: msgGoldenImporting(p, golden, img, st, progress)}
}

// goldenImport is what a fix for the golden's import names: its image, and
// what its DataVolume imports with (nil before it exists).
func goldenImport(img pool.Image, dv *cdiv1.DataVolume) cdistate.Golden {
	g := cdistate.Golden{Namespace: img.GoldenNamespace, Name: img.GoldenName, SchematicID: img.SchematicID.Value, Version: img.Version.Value}
	if dv != nil && dv.Spec.Source != nil && dv.Spec.Source.HTTP != nil {
		h := dv.Spec.Source.HTTP
		g.URL, g.CertConfigMap, g.SecretRef, g.SecretExtraHeaders = h.URL, h.CertConfigMap, h.SecretRef, h.SecretExtraHeaders
	}
	return g
}

// GateOnStorageClass holds a clone across StorageClasses: there CDI falls
// back to a host-assisted copy over the pod network or leaves the clone to
// the CSI driver, which can hang. A pool that already cloned is held too:
// its next clone would still cross classes.
func GateOnStorageClass(p pool.Pool, img pool.Image, poolClass, goldenClass pool.Class) *Hold {
	if poolClass.Name == "" || goldenClass.Name == "" || poolClass.Name == goldenClass.Name {
		return nil
	}
	detail := ""
	for _, c := range []struct {
		side string
		c    pool.Class
	}{{"the pool's", poolClass}, {"the golden's", goldenClass}} {
		if c.c.Default {
			detail += fmt.Sprintf(" %s empty storageClass was resolved to %q, %s, the class CDI binds a disk that names none on.", upperFirst(c.side), c.c.Name, c.c.From)
		}
	}
	return &Hold{Reason: ReasonStorageClassMismatch, Message: msgStorageClassMismatch(p, img, poolClass, goldenClass, detail)}
}

// gateOnArchitecture holds a clone template whose golden is of another
// architecture than the pool's: a worker would boot a disk its CPU cannot
// run. A pool with a finished clone of it is never held.
func gateOnArchitecture(p pool.Pool, img pool.Image, c read.GoldenChoice, cloned bool) *Hold {
	if cloned || !c.Missing {
		return nil
	}
	return &Hold{Reason: ReasonGoldenMissing, Message: msgGoldenArchitectureMissing(p, img, c)}
}

// GateOnSize holds a worker disk smaller than its golden, which CDI refuses.
func GateOnSize(p pool.Pool, img pool.Image, diskSize resource.Quantity, goldenStorage *resource.Quantity) *Hold {
	if goldenStorage == nil || diskSize.Cmp(*goldenStorage) >= 0 {
		return nil
	}
	return &Hold{Reason: ReasonDiskTooSmall, Message: msgDiskTooSmall(p, img, diskSize, goldenStorage)}
}

// GateInput is what the clone gates decide from.
type GateInput struct {
	Pool      pool.Pool
	Image     pool.Image
	DiskSize  resource.Quantity
	GoldenDV  *cdiv1.DataVolume
	GoldenPVC *corev1.PersistentVolumeClaim
	// Golden is cdistate.Of(GoldenDV, GoldenPVC); decideHold reuses it.
	Golden    cdistate.State
	Cloned    bool
	PoolClass pool.Class
	// GoldenClass is resolved by the caller with the same default.
	GoldenClass pool.Class
	// Choice is the golden of the pool's architecture (read/goldenchoice.go).
	Choice read.GoldenChoice
	// Copy is the copy path the Input chose for the pool's class, when its
	// golden is on another (chooseCopy); nil otherwise.
	Copy *read.CopyPath
}

// GateClone runs the clone gates in order: golden readiness, StorageClass,
// size floor; without a golden there is no class or size to compare. A
// pool on the copy path copies across the classes on purpose, so the
// StorageClass gate does not hold it.
func GateClone(in GateInput) *Hold {
	if h := gateOnArchitecture(in.Pool, in.Image, in.Choice, in.Cloned); h != nil {
		return h
	}
	if h := GateOnGolden(in.Pool, in.Image, in.Golden, in.GoldenDV, in.Cloned); h != nil {
		return h
	}
	if in.Golden.Kind == cdistate.Missing {
		return nil
	}
	if in.Copy == nil {
		if h := GateOnStorageClass(in.Pool, in.Image, in.PoolClass, in.GoldenClass); h != nil {
			return h
		}
	}
	return GateOnSize(in.Pool, in.Image, in.DiskSize, goldenStorageOf(in.GoldenDV, in.GoldenPVC))
}

// GateOnCloneGrant holds the MachineDeployment of a pool that has not cloned
// this golden until its VMs may clone it: virt-controller authorizes each
// worker DataVolume as the VM's service account and, refused, records
// UnauthorizedDataVolumeCreate and retries (kubevirt
// pkg/virt-controller/watch/vm/vm.go), so Machines made earlier stall. The
// catalog grants a namespace once a template there pins the golden, hence
// only the deployment waits. A pool that has cloned it is never held.
func GateOnCloneGrant(p pool.Pool, img pool.Image, serviceAccount string, w read.Required, cloned bool) *Hold {
	if cloned || clonerbac.Allows(w.CloneBindings, w.CloneRoles, img.GoldenNamespace, p.Namespace, serviceAccount, img.GoldenName) {
		return nil
	}
	return &Hold{Reason: ReasonCloneNotAuthorized, DeploymentOnly: true, Message: msgCloneNotAuthorized(p, img, serviceAccount)}
}

// gateInputOf is what the clone gates decide a clone template from; zero on
// the HTTP path.
func gateInputOf(in Input, s pool.Shape) GateInput {
	p, img, w := in.Pool, in.Image, in.Required
	if img.Source != pool.SourceClone {
		return GateInput{}
	}
	def := storageclass.Default(w.StorageClasses)
	clone := PoolClone(p, img, w.WorkerDVs)
	g := GateInput{
		Pool: p, Image: img, DiskSize: s.DiskSize,
		GoldenDV: w.GoldenDV, GoldenPVC: w.GoldenPVC, Golden: cdistate.Of(w.GoldenDV, w.GoldenPVC),
		// A ready MachineSet on a template of this golden, or (when the
		// disks were read) a finished clone among them.
		Cloned:      clone != nil || in.Composed.ClonedByMachineSets(img, w.MachineSets),
		PoolClass:   PoolClassOf(in.Known, clone, w.WorkerPVCs, def),
		GoldenClass: GoldenClassOf(w.GoldenDV, w.GoldenPVC, def),
		Choice:      read.CheckedChoice(in.Choice, w.GoldenDV),
	}
	g.Copy = ChooseCopy(in.Config, img, g.Golden, g.PoolClass, g.GoldenClass)
	return g
}

// storageClassOf is the class written into the disk template: the gate's
// pool class on the clone path. An HTTP import has no source class to
// match; the declared class, or none (CDI's default at bind time), keeps the
// template a pure function of the spec.
func storageClassOf(s pool.Shape, img pool.Image, gate GateInput) pool.Class {
	switch {
	case img.Source == pool.SourceClone:
		return gate.PoolClass
	case s.DeclaredClass != "":
		return pool.Class{Name: s.DeclaredClass, From: "spec.storageClass"}
	}
	return pool.Class{}
}
