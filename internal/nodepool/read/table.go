package read

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cloneplan"
	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/observed"
	"github.com/cozystack/function-worker-image/internal/required"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// The table of reads: one row per requirement, saying when a call asks for
// it, with which selector, whether it is read from the wire, what it is
// chained on, and how what Crossplane returned becomes the current state.
// Requirements, Chained, RawNames and Read are derived from it, so a
// requirement asked for is read and one not asked for is not, whatever
// Crossplane sent (crossplane render sends what its files hold).

// Input is what a call's reads are decided from: the pool, what its spec
// resolved to, the Input, what it composed and the Reads flags (reads.go),
// all known before Crossplane answers, so both calls of a reconcile ask
// the same.
type Input struct {
	Pool  pool.Pool
	Image pool.Image
	// GoldenBase is the unsuffixed golden of the pool's image, a candidate
	// of a pool of another architecture (goldenchoice.go).
	GoldenBase string
	// InstanceType is the shape's instance type; "" for a pool sized by
	// resources.
	InstanceType string
	// DeclaredClass is spec.storageClass.
	DeclaredClass string
	// Bootstrap is spec.bootstrap.
	Bootstrap *v1alpha1.Bootstrap
	Config    config.Config
	// Composed is what the pool composed, as observed.
	Composed Composed
	Reads    Reads
}

// Current is what the decisions read of the cluster: the required
// resources as typed objects, a Join pool's facts and the running pool of
// the pool's name that another tool made.
type Current struct {
	Required Required
	// Join is the Join mode's facts; nil for a Generate pool.
	Join *JoinPlan
	// Existing is the existing pool to adopt; nil when there is none.
	Existing *Existing
}

// Row is one requirement of the table.
type Row struct {
	Name string
	// When says whether this call asks for it.
	When func(*Input) bool
	// Selector is what it asks for; nil for a chained row (After).
	Selector func(*Input) *fnv1.ResourceSelector
	// Raw rows are read from the wire (compose.Call.Raw), as Structs.
	Raw bool
	// After chains the row on others: it is asked once they resolved.
	After *Chain
	// Read turns what Crossplane returned into the current state; it
	// keeps only the objects the row asked for (crossplane render ignores
	// a requirement's namespace). Nil for a row Peeked.
	Read func(*Current, Fetched)
	// Peeked rows are read by the golden choice in Prepare, through
	// compose.Request.Peek (ChooseGoldenOf), under the same condition.
	Peeked bool
}

// Chain is what a chained row waits for: the rows On, from whose objects
// Selector names what to ask for; nil asks for nothing this call.
type Chain struct {
	On       []string
	Selector func(*Input, required.Resolved) *fnv1.ResourceSelector
}

// Fetched is what Crossplane returned for one row a call asked for.
type Fetched struct {
	In *Input
	// Chained is the selector a chained row asked with; nil otherwise.
	Chained *fnv1.ResourceSelector
	// Objects are a row's objects, Wire a Raw row's.
	Objects []*unstructured.Unstructured
	Wire    []*structpb.Struct
}

// Requirements are the rows this call asks for at once: every row whose
// When holds and that is not chained.
func Requirements(in *Input) required.Selectors {
	sel := required.Selectors{}
	for _, r := range table {
		if r.After == nil && r.When(in) {
			sel[r.Name] = r.Selector(in)
		}
	}
	return sel
}

// Chained are the chained rows this call asks for once got resolved; nil
// when none.
func Chained(in *Input, got required.Resolved) required.Selectors {
	var sel required.Selectors
	for _, r := range table {
		if r.After == nil || !r.When(in) {
			continue
		}
		if s := r.After.Selector(in, got); s != nil {
			if sel == nil {
				sel = required.Selectors{}
			}
			sel[r.Name] = s
		}
	}
	return sel
}

// RawNames are the rows read from the wire: worker DataVolumes and PVCs and
// the golden's clone claims, which grow with the pools
// (observed.WorkerDataVolume, WorkerPVC, CloneClaim).
func RawNames() map[string]bool {
	out := map[string]bool{}
	for _, r := range table {
		if r.Raw {
			out[r.Name] = true
		}
	}
	return out
}

// Read is the current state: every row this call asks for, read in the
// table's order; what a row not asked for returned is not read.
func Read(in *Input, got required.Resolved, raw required.Raw) Current {
	c := Current{}
	// What the rows asked for returned, for the chained rows after them.
	asked := make(required.Resolved, len(got))
	for _, r := range table {
		if r.Peeked || !r.When(in) {
			continue
		}
		f := Fetched{In: in}
		if r.After != nil {
			if f.Chained = r.After.Selector(in, asked); f.Chained == nil {
				continue
			}
		}
		if r.Raw {
			f.Wire = raw[r.Name]
		} else {
			f.Objects = got[r.Name]
			asked[r.Name] = f.Objects
		}
		r.Read(&c, f)
	}
	c.sort()
	return c
}

// The rows' conditions.

func always(*Input) bool { return true }

func isClone(in *Input) bool { return in.Image.Source == pool.SourceClone }

// readsClone: a new clone template, gated and pre-flighted (reads.go).
func readsClone(in *Input) bool { return isClone(in) && in.Reads.Clone }

// readsBudget: the pool may start clones (budget.go, capacity.go).
func readsBudget(in *Input) bool { return isClone(in) && in.Reads.Budget }

// readsGolden: the golden's claim and the classes, which the gates and the
// budget read alike.
func readsGolden(in *Input) bool { return isClone(in) && (in.Reads.Clone || in.Reads.Budget) }

func readsGrant(in *Input) bool { return isClone(in) && in.Reads.Grant }

func readsSnapshot(in *Input) bool { return readsClone(in) && in.Config.SnapshotGoldens }

func joins(in *Input) bool {
	return v1alpha1.BootstrapModeOf(in.Bootstrap) == v1alpha1.BootstrapJoin
}

func adopting(in *Input) bool { return in.Composed.Adopting() }

// The rows' selectors.

// golden selects the golden's object of a kind, by name.
func golden(apiVersion, kind string) func(*Input) *fnv1.ResourceSelector {
	return func(in *Input) *fnv1.ResourceSelector {
		return required.ByName(apiVersion, kind, in.Image.GoldenNamespace, in.Image.GoldenName)
	}
}

// every selects every object of a kind, in every namespace: the
// default-class markers are annotations, not labels, and what CDI's clone
// planner decides from is few objects.
func every(apiVersion, kind string) func(*Input) *fnv1.ResourceSelector {
	return func(*Input) *fnv1.ResourceSelector {
		return required.ByLabels(apiVersion, kind, "", map[string]string{})
	}
}

// goldenDV selects a golden DataVolume of the golden namespace, by name.
func goldenDV(name func(*Input) string) func(*Input) *fnv1.ResourceSelector {
	return func(in *Input) *fnv1.ResourceSelector {
		return required.ByName(observed.CDIAPIVersion, observed.KindDataVolume, in.Image.GoldenNamespace, name(in))
	}
}

// joinObject selects a join Secret or Service by the name ref gives it.
func joinObject(kind string, ref func(JoinRefs) (namespace, name string)) func(*Input) *fnv1.ResourceSelector {
	return func(in *Input) *fnv1.ResourceSelector {
		ns, name := ref(JoinRefsOf(in.Pool, in.Config.Join))
		return required.ByName(observed.CoreAPIVersion, kind, ns, name)
	}
}

// isGolden keeps the golden's object of those a row returned.
func isGolden(f Fetched, u *unstructured.Unstructured) bool {
	return Is(u, f.In.Image.GoldenNamespace, f.In.Image.GoldenName)
}

// chainedName keeps the object a chained row asked for by name.
func chainedName(f Fetched, u *unstructured.Unstructured) bool {
	return Is(u, f.Chained.GetNamespace(), f.Chained.GetMatchName())
}

// each reads the objects keep wants (nil: all) with read, and hands a
// readable one to put; an unreadable one is reported.
func each[T any](keep func(Fetched, *unstructured.Unstructured) bool, read func(*unstructured.Unstructured) (T, error), put func(*Current, T)) func(*Current, Fetched) {
	return func(c *Current, f Fetched) {
		for _, u := range f.Objects {
			if keep != nil && !keep(f, u) {
				continue
			}
			v, err := read(u)
			if err != nil {
				c.Required.Unreadable = append(c.Required.Unreadable, err.Error())
				continue
			}
			put(c, v)
		}
	}
}

// sized sizes a list once before read appends to it: a StorageClass is
// ~1 KB as a Go value, and appending every class to a growing slice copied
// them all several times.
func sized[T any](list func(*Current) *[]T, read func(*Current, Fetched)) func(*Current, Fetched) {
	return func(c *Current, f Fetched) {
		if n := len(f.Objects) + len(f.Wire); n > 0 {
			*list(c) = make([]T, 0, n)
		}
		read(c, f)
	}
}

// table is every requirement of a pool. MachineSets, few and telling which
// templates are in use, are read always; worker disks on the HTTP path too,
// since a pool that moved off a golden still has clone disks.
var table = []Row{
	{
		Name: ReqMachineSets, When: always,
		Selector: func(in *Input) *fnv1.ResourceSelector {
			return required.ByLabels(clusterapi.APIVersion(in.Config.ClusterAPIVersion), clusterapi.KindMachineSet, in.Pool.Namespace, map[string]string{clusterapi.LabelDeploymentName: in.Pool.DeploymentName()})
		},
		Read: sized(func(c *Current) *[]clusterv1.MachineSet { return &c.Required.MachineSets }, func(c *Current, f Fetched) {
			p := f.In.Pool
			for _, u := range f.Objects {
				if u.GetNamespace() != p.Namespace || u.GetLabels()[clusterapi.LabelDeploymentName] != p.DeploymentName() {
					continue
				}
				ms, err := Templates.ReadMachineSet(u, f.In.Config.ClusterAPIVersion)
				if err != nil {
					c.Required.Unreadable = append(c.Required.Unreadable, err.Error())
					continue
				}
				c.Required.MachineSets = append(c.Required.MachineSets, ms)
			}
		}),
	},
	{
		// What the kubelet reservations are computed from.
		Name: ReqInstancetype, When: func(in *Input) bool { return in.InstanceType != "" },
		Selector: func(in *Input) *fnv1.ResourceSelector {
			return required.ByName(InstancetypeAPIVersion, pool.InstancetypeKind, "", in.InstanceType)
		},
		Read: each(func(f Fetched, u *unstructured.Unstructured) bool { return u.GetName() == f.In.InstanceType },
			typed[instancetypev1beta1.VirtualMachineClusterInstancetype](InstancetypeAPIVersion, pool.InstancetypeKind),
			func(c *Current, it *instancetypev1beta1.VirtualMachineClusterInstancetype) {
				c.Required.Instancetype = it
			}),
	},
	{
		// Not their PVCs: the DataVolumes carry what cloneHealth reads.
		Name: ReqWorkerDVs, Raw: true, When: func(in *Input) bool { return in.Reads.Workers },
		Selector: func(in *Input) *fnv1.ResourceSelector {
			return required.ByLabels(observed.CDIAPIVersion, observed.KindDataVolume, in.Pool.Namespace, map[string]string{labels.Pool: in.Pool.Hash()})
		},
		Read: sized(func(c *Current) *[]cdiv1.DataVolume { return &c.Required.WorkerDVs }, func(c *Current, f Fetched) {
			// The pool's hash is a digest of its identity: computed once,
			// not per object read.
			poolHash := f.In.Pool.Hash()
			for _, s := range f.Wire {
				// Identity, labels, the annotations clone health reads and
				// the status, and nothing else of ~6 KB.
				dv, err := observed.WorkerDataVolume(s, WorkerDVAnnotations...)
				switch {
				case err != nil:
					c.Required.Unreadable = append(c.Required.Unreadable, err.Error())
				case dv.Namespace == f.In.Pool.Namespace && dv.Labels[labels.Pool] == poolHash:
					c.Required.WorkerDVs = append(c.Required.WorkerDVs, dv)
				}
			}
		}),
	},
	{
		// The claims of this golden's disks: the class a clone was bound on.
		Name: ReqWorkerPVCs, Raw: true, When: func(in *Input) bool { return isClone(in) && in.Reads.DiskClass },
		Selector: func(in *Input) *fnv1.ResourceSelector {
			img := in.Image
			return required.ByLabels(observed.CoreAPIVersion, observed.KindPVC, in.Pool.Namespace, map[string]string{labels.Pool: in.Pool.Hash(), labels.Golden: labels.GoldenHash(img.GoldenNamespace, img.GoldenName)})
		},
		Read: func(c *Current, f Fetched) {
			poolHash := f.In.Pool.Hash()
			for _, s := range f.Wire {
				pvc, err := observed.WorkerPVC(s)
				switch {
				case err != nil:
					c.Required.Unreadable = append(c.Required.Unreadable, err.Error())
				case pvc.Namespace == f.In.Pool.Namespace && pvc.Labels[labels.Pool] == poolHash:
					c.Required.WorkerPVCs = append(c.Required.WorkerPVCs, pvc)
				}
			}
		},
	},
	{
		Name: ReqGoldenDataVolume, When: readsClone,
		Selector: golden(observed.CDIAPIVersion, observed.KindDataVolume),
		Read:     each(isGolden, observed.DataVolume, func(c *Current, dv *cdiv1.DataVolume) { c.Required.GoldenDV = dv }),
	},
	{
		Name: ReqGoldenPVC, When: readsGolden,
		Selector: golden(observed.CoreAPIVersion, observed.KindPVC),
		Read:     each(isGolden, observed.PVC, func(c *Current, pvc *corev1.PersistentVolumeClaim) { c.Required.GoldenPVC = pvc }),
	},
	{
		Name: ReqStorageClasses, When: readsGolden,
		Selector: every(observed.StorageAPIVersion, observed.KindStorageClass),
		Read: sized(func(c *Current) *[]storagev1.StorageClass { return &c.Required.StorageClasses },
			each(nil, observed.StorageClass, func(c *Current, sc *storagev1.StorageClass) {
				c.Required.StorageClasses = append(c.Required.StorageClasses, *sc)
			})),
	},
	{
		// What the clones about to start are compared with (capacity.go).
		Name: ReqStorageCapacities, When: readsBudget,
		Selector: every(observed.StorageAPIVersion, pool.KindCSIStorageCapacity),
		Read: sized(func(c *Current) *[]storagev1.CSIStorageCapacity { return &c.Required.StorageCapacities },
			each(nil, typed[storagev1.CSIStorageCapacity](observed.StorageAPIVersion, pool.KindCSIStorageCapacity), func(c *Current, sc *storagev1.CSIStorageCapacity) {
				c.Required.StorageCapacities = append(c.Required.StorageCapacities, *sc)
			})),
	},
	{
		// CDI's claims of the clones of this golden that run now: they
		// carry the target disk's labels (budget.go).
		Name: ReqCloneClaims, Raw: true, When: readsBudget,
		Selector: func(in *Input) *fnv1.ResourceSelector {
			img := in.Image
			return required.ByLabels(observed.CoreAPIVersion, observed.KindPVC, img.GoldenNamespace, map[string]string{labels.Golden: labels.GoldenHash(img.GoldenNamespace, img.GoldenName)})
		},
		Read: func(c *Current, f Fetched) {
			poolHash := f.In.Pool.Hash()
			for _, s := range f.Wire {
				pvc, err := observed.CloneClaim(s)
				switch {
				case err != nil:
					c.Required.Unreadable = append(c.Required.Unreadable, err.Error())
				case IsCloneClaim(pvc, f.In.Image.GoldenNamespace, poolHash):
					c.Required.CloneClaims = append(c.Required.CloneClaims, pvc)
				}
			}
		},
	},
	{
		Name: ReqStorageProfiles, When: readsClone,
		Selector: every(observed.CDIAPIVersion, observed.KindStorageProfile),
		Read: each(nil, observed.StorageProfile, func(c *Current, sp *cdiv1.StorageProfile) {
			c.Required.Clone.Profiles = append(c.Required.Clone.Profiles, *sp)
		}),
	},
	{
		Name: ReqSnapshotClasses, When: func(in *Input) bool { return readsClone(in) && in.Config.ReadSnapshotClasses },
		Selector: every(observed.SnapshotAPIVersion, observed.KindVolumeSnapshotClass),
		Read: each(nil, observed.VolumeSnapshotClass, func(c *Current, vsc cloneplan.VolumeSnapshotClass) {
			c.Required.Clone.SnapshotClasses = append(c.Required.Clone.SnapshotClasses, vsc)
		}),
	},
	{
		Name: ReqCDI, When: readsClone,
		Selector: every(observed.CDIAPIVersion, observed.KindCDI),
		Read: func(c *Current, f Fetched) {
			// One CDI resource runs a cluster; should there be more, the
			// first by name decides, whatever order they came in.
			cdiName := ""
			each(nil, observed.CDI, func(c *Current, cdi *cdiv1.CDI) {
				if cdiName == "" || cdi.Name < cdiName {
					c.Required.Clone.Override, cdiName = cdi.Spec.CloneStrategyOverride, cdi.Name
				}
			})(c, f)
		},
	},
	{
		Name: ReqCDIConfig, When: readsClone,
		Selector: every(observed.CDIAPIVersion, observed.KindCDIConfig),
		Read: each(nil, observed.CDIConfig, func(c *Current, cfg *cdiv1.CDIConfig) {
			if cfg.Status.FilesystemOverhead != nil {
				c.Required.Clone.Overhead = cfg.Status.FilesystemOverhead
			}
		}),
	},
	{
		// The golden's VolumeSnapshot, by its name (snapshot.go).
		Name: ReqGoldenSnapshot, When: readsSnapshot,
		Selector: golden(goldensnapshot.APIVersion, goldensnapshot.Kind),
		Read: each(isGolden, typed[snapshotv1.VolumeSnapshot](goldensnapshot.APIVersion, goldensnapshot.Kind), func(c *Current, vs *snapshotv1.VolumeSnapshot) {
			c.Required.GoldenSnapshot = vs
		}),
	},
	{
		// The content the golden's snapshot is bound to, once the snapshot
		// is read: CDI's planner compares its driver and source volume
		// mode with the worker disk's class (clone/planner.go
		// computeStrategyForSourceSnapshot).
		Name: ReqGoldenSnapshotContent, When: readsSnapshot,
		After: &Chain{On: []string{ReqGoldenSnapshot}, Selector: goldenSnapshotContent},
		Read: each(chainedName, typed[snapshotv1.VolumeSnapshotContent](goldensnapshot.APIVersion, goldensnapshot.ContentKind), func(c *Current, vsc *snapshotv1.VolumeSnapshotContent) {
			c.Required.GoldenSnapshotContent = vsc
		}),
	},
	{
		// The golden PVC's bound PersistentVolume, when the pre-flight
		// needs its CSI driver (GoldenVolumeToRead), once the claim and
		// the classes are read.
		Name: ReqGoldenPV, When: readsClone,
		After: &Chain{On: []string{ReqGoldenPVC, ReqStorageClasses}, Selector: goldenVolume},
		Read:  each(chainedName, observed.PV, func(c *Current, pv *corev1.PersistentVolume) { c.Required.GoldenPV = pv }),
	},
	{
		// The catalogs' clone RBAC in the golden namespace, by its label.
		Name: ReqCloneBindings, When: readsGrant,
		Selector: func(in *Input) *fnv1.ResourceSelector {
			return required.ByLabels(pool.RbacAPIVersion, pool.KindRoleBinding, in.Image.GoldenNamespace, map[string]string{labels.CloneRBAC: "true"})
		},
		Read: each(func(f Fetched, u *unstructured.Unstructured) bool {
			return u.GetNamespace() == f.In.Image.GoldenNamespace
		},
			typed[rbacv1.RoleBinding](pool.RbacAPIVersion, pool.KindRoleBinding),
			func(c *Current, rb *rbacv1.RoleBinding) {
				c.Required.CloneBindings = append(c.Required.CloneBindings, *rb)
			}),
	},
	{
		Name: ReqCloneRoles, When: readsGrant,
		Selector: func(*Input) *fnv1.ResourceSelector {
			return required.ByLabels(pool.RbacAPIVersion, pool.KindClusterRole, "", map[string]string{labels.CloneRBAC: "true"})
		},
		Read: each(nil, typed[rbacv1.ClusterRole](pool.RbacAPIVersion, pool.KindClusterRole), func(c *Current, cr *rbacv1.ClusterRole) {
			c.Required.CloneRoles = append(c.Required.CloneRoles, *cr)
		}),
	},
	{
		// The KubeVirt CRs, read together: the first by namespace and name
		// decides (ReadKubeVirt).
		Name: ReqKubeVirt, When: func(in *Input) bool { return in.Reads.KubeVirt },
		Selector: every(KubeVirtAPIVersion, KindKubeVirt),
		Read: func(c *Current, f Fetched) {
			var unreadable []string
			c.Required.KubeVirt, unreadable = ReadKubeVirt(f.Objects)
			c.Required.Unreadable = append(c.Required.Unreadable, unreadable...)
		},
	},
	// A pool of another architecture asks for both candidates by name
	// (goldenchoice.go).
	{
		Name: reqArchGolden, Peeked: true, When: func(in *Input) bool { return OtherArch(in.Image, in.Config) },
		Selector: goldenDV(func(in *Input) string { return in.GoldenBase + "-" + in.Image.Arch.Value }),
	},
	{
		Name: reqArchGoldenBase, Peeked: true, When: func(in *Input) bool { return OtherArch(in.Image, in.Config) },
		Selector: goldenDV(func(in *Input) string { return in.GoldenBase }),
	},
	{
		// A pool that declares its class asks for its class's golden.
		Name: reqClassGolden, Peeked: true, When: func(in *Input) bool { return isClone(in) && in.DeclaredClass != "" },
		Selector: goldenDV(func(in *Input) string { return ClassGoldenName(in.Image, in.DeclaredClass) }),
	},
	// A Join pool's facts, each by name: a Join pool needs nothing else,
	// and nothing of another cluster (join.go).
	{
		Name: ReqJoinTalosSecrets, When: joins,
		Selector: joinObject(kindSecret, func(r JoinRefs) (string, string) { return r.Namespace, r.TalosSecrets }),
		Read:     func(c *Current, f Fetched) { j := c.join(f.In); j.Facts.readTalosSecrets(j.Refs, f.Objects) },
	},
	{
		Name: ReqJoinTalosCA, When: joins,
		Selector: joinObject(kindSecret, func(r JoinRefs) (string, string) { return r.Namespace, r.TalosCA }),
		Read: func(c *Current, f Fetched) {
			j := c.join(f.In)
			j.Facts.TalosCA = j.Facts.cert(f.Objects, j.Refs.Namespace, j.Refs.TalosCA, keyTalosCA)
		},
	},
	{
		Name: ReqJoinKubernetesCA, When: joins,
		Selector: joinObject(kindSecret, func(r JoinRefs) (string, string) { return r.Namespace, r.KubernetesCA }),
		Read: func(c *Current, f Fetched) {
			j := c.join(f.In)
			j.Facts.KubernetesCA = j.Facts.cert(f.Objects, j.Refs.Namespace, j.Refs.KubernetesCA, keyKubernetesCA)
		},
	},
	{
		Name: ReqJoinAPIServer, When: joins,
		Selector: joinObject(kindService, func(r JoinRefs) (string, string) { return r.Namespace, r.APIServer }),
		Read: func(c *Current, f Fetched) {
			j := c.join(f.In)
			j.Facts.APIServerIP = j.Facts.serviceIP(f.Objects, j.Refs.Namespace, j.Refs.APIServer)
		},
	},
	{
		Name: ReqJoinDNS, When: joins,
		Selector: joinObject(kindService, func(r JoinRefs) (string, string) { return r.DNSNamespace, r.DNSName }),
		Read: func(c *Current, f Fetched) {
			j := c.join(f.In)
			j.Facts.DNSIP = j.Facts.serviceIP(f.Objects, j.Refs.DNSNamespace, j.Refs.DNSName)
		},
	},
	{
		Name: ReqControlPlane, When: joins,
		Selector: func(in *Input) *fnv1.ResourceSelector {
			r := JoinRefsOf(in.Pool, in.Config.Join)
			return required.ByName(r.ControlPlaneAPIVersion, r.ControlPlaneKind, r.Namespace, r.Cluster)
		},
		Read: func(c *Current, f Fetched) { j := c.join(f.In); j.Facts.readControlPlane(j.Refs, f.Objects) },
	},
	// Adoption (adopt.go): an existing MachineDeployment of the pool's name,
	// then the templates it runs on.
	{
		Name: ReqExistingDeployment, When: adopting,
		Selector: func(in *Input) *fnv1.ResourceSelector {
			return required.ByName(clusterapi.APIVersion(in.Config.ClusterAPIVersion), clusterapi.KindMachineDeployment, in.Pool.Namespace, in.Pool.DeploymentName())
		},
		Read: func(c *Current, f Fetched) {
			if md := existingDeployment(f.In.Pool, f.Objects); md != nil {
				c.Existing = existingOf(md)
			}
		},
	},
	existingTemplateRow(ReqExistingMachine, pool.InfraAPIVersion, pool.KindKubevirtMachineTmpl,
		func(e *Existing) (*string, **unstructured.Unstructured) { return &e.MachineName, &e.Machine }),
	existingTemplateRow(ReqExistingBootstrap, talosconfig.APIVersion, talosconfig.KindTalosConfigTemplate,
		func(e *Existing) (*string, **unstructured.Unstructured) { return &e.BootstrapName, &e.Bootstrap }),
}

// goldenVolume asks for the golden PVC's bound PersistentVolume when the
// pre-flight needs its CSI driver (GoldenVolumeToRead).
func goldenVolume(in *Input, got required.Resolved) *fnv1.ResourceSelector {
	var pvc *corev1.PersistentVolumeClaim
	for _, u := range got[ReqGoldenPVC] {
		if Is(u, in.Image.GoldenNamespace, in.Image.GoldenName) {
			// An unreadable claim is reported by its row.
			pvc, _ = observed.PVC(u)
		}
	}
	// Only the classes' names matter here; their row decodes them.
	classes := make([]storagev1.StorageClass, 0, len(got[ReqStorageClasses]))
	for _, u := range got[ReqStorageClasses] {
		classes = append(classes, storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}})
	}
	name := GoldenVolumeToRead(pvc, classes)
	if name == "" {
		return nil
	}
	return required.ByName(observed.CoreAPIVersion, observed.KindPV, "", name)
}

// goldenSnapshotContent asks for the content the golden's snapshot is bound
// to.
func goldenSnapshotContent(in *Input, got required.Resolved) *fnv1.ResourceSelector {
	for _, u := range got[ReqGoldenSnapshot] {
		if !Is(u, in.Image.GoldenNamespace, in.Image.GoldenName) {
			continue
		}
		name, _, _ := unstructured.NestedString(u.Object, "status", "boundVolumeSnapshotContentName")
		if name == "" {
			return nil
		}
		return required.ByName(goldensnapshot.APIVersion, goldensnapshot.ContentKind, "", name)
	}
	return nil
}

// join is the Join plan the join rows read into, made by the first.
func (c *Current) join(in *Input) *JoinPlan {
	if c.Join == nil {
		refs := JoinRefsOf(in.Pool, in.Config.Join)
		c.Join = &JoinPlan{Refs: refs, Config: in.Config.Join, Revision: in.Bootstrap.FactsRevision}
	}
	return c.Join
}

// sort puts what the rows read in the order the decisions rely on.
func (c *Current) sort() {
	c.Required.sort()
	if c.Join != nil {
		c.Join.Facts.sort()
	}
}

// existingTemplateRow is the chained row of one template the existing
// MachineDeployment runs on: asked by the name the deployment points at,
// read into the field of Existing that field names.
func existingTemplateRow(name, apiVersion, kind string, field func(*Existing) (*string, **unstructured.Unstructured)) Row {
	return Row{
		Name: name, When: adopting,
		After: &Chain{On: []string{ReqExistingDeployment}, Selector: func(in *Input, got required.Resolved) *fnv1.ResourceSelector {
			md := existingDeployment(in.Pool, got[ReqExistingDeployment])
			if md == nil {
				return nil
			}
			ref, _ := field(existingOf(md))
			if *ref == "" {
				return nil
			}
			return required.ByName(apiVersion, kind, in.Pool.Namespace, *ref)
		}},
		Read: func(c *Current, f Fetched) {
			if e := c.Existing; e != nil {
				ref, obj := field(e)
				*obj = lastOf(f.Objects, f.In.Pool.Namespace, *ref)
			}
		},
	}
}

// existingOf is the existing pool's template names, as its deployment
// points at them.
func existingOf(md *unstructured.Unstructured) *Existing {
	e := &Existing{Deployment: md}
	e.MachineName, e.BootstrapName = refsOf(md)
	return e
}
