// Package config turns the function's Input into a validated Config with
// every default applied: Crossplane never defaults or validates a function
// Input, so an invalid one is a fatal result naming field, value and fix.
package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Config is the Input with defaults applied and quantities parsed once.
type Config struct {
	Mode            v1beta1.Mode
	GoldenNamespace string
	// ExtraGoldenNamespaces are the Input's goldenNamespaces: further
	// namespaces a composite may name as its golden namespace
	// (Config.GoldenNamespaces).
	ExtraGoldenNamespaces []string
	Platform              string
	Arch                  string

	TalosVersion    string
	SchematicID     string
	ImageFactoryURL string
	// InstallerRepository is talos.installerRepository as written, empty
	// when unset: the default depends on each pool's factory, platform and
	// version (talosimage.DefaultInstallerRepository).
	InstallerRepository string
	KubernetesVersion   string

	GoldenStorage       resource.Quantity
	MinimumImageStorage resource.Quantity
	DiskSize            resource.Quantity

	// SupportMatrix overrides: Talos minor to [min, max] Kubernetes minors.
	MatrixReplace bool
	MatrixEntries []MatrixEntry
	// KubernetesReleases are the Input's minor to patch release rows.
	KubernetesReleases map[string]string

	CloneRBACScope v1beta1.CloneRBACScope
	// VMServiceAccount is the service account the worker VMs run as.
	VMServiceAccount string
	// WaitForCloneGrant holds a pool's MachineDeployment until its VMs may clone.
	WaitForCloneGrant bool
	// Usages composes the Crossplane Usages that protect cloned goldens.
	Usages bool
	// AllowHostAssistedCopy lets a clone through that CDI would copy.
	AllowHostAssistedCopy bool
	// HostAssistedCopyClasses are the classes whose pools copy their disks
	// from a golden on another class, sorted.
	HostAssistedCopyClasses []string
	// ReadSnapshotClasses requires the VolumeSnapshotClasses.
	ReadSnapshotClasses bool
	// SnapshotGoldens keeps goldens also as VolumeSnapshots where the
	// StorageProfile prefers them, and clones new disks from those; off
	// without the snapshot API (ReadSnapshotClasses).
	SnapshotGoldens bool
	// MaxWorkerDisks is the largest pool whose disks are read for clone health.
	MaxWorkerDisks int32
	// CloneBudget bounds the clones of one golden in flight per class.
	CloneBudget CloneBudget

	SteadyTTL     time.Duration
	InProgressTTL time.Duration
	// Stall bounds how long an import or a clone may go without moving
	// before it is reported stalled.
	Stall StallBounds

	// ImageFactoryCA is the Input's talos.imageFactoryCA, trimmed.
	ImageFactoryCA string
	// TopologySpread are the Input's scheduling.topologySpreadConstraints.
	TopologySpread []corev1.TopologySpreadConstraint
	// ApplicationLabels is the Input's scheduling.applicationLabels.
	ApplicationLabels bool
	// ClusterAPIVersion is the cluster.x-k8s.io version node pools use.
	ClusterAPIVersion v1beta1.ClusterAPIVersion
	// SyncMachineLabels are the Input's clusterAPI.syncMachineLabels,
	// compiled as the Cluster API manager compiles its flag (regexp.Compile).
	SyncMachineLabels []*regexp.Regexp
	// Join locates a cluster's join facts for the Join bootstrap mode.
	Join Join
	// Requested is what the Input asks of every pool's templates.
	Requested Requested
}

// Requested is the part of the Input, as written and without defaults, that
// enters a pool's templates. A pool's templates are kept while it and the
// pool's own request are unchanged, so a release that changes a default or
// how it renders rolls no worker (nodepool request.go); which fields are
// here is pinned by TestRequestedCoversTheTemplateInputs.
type Requested struct {
	GoldenNamespace  string                    `json:"goldenNamespace,omitempty"`
	Image            v1beta1.ImageOptions      `json:"image,omitempty"`
	Talos            v1beta1.TalosDefaults     `json:"talos,omitempty"`
	DiskSize         string                    `json:"diskSize,omitempty"`
	Join             v1beta1.JoinOptions       `json:"join,omitempty"`
	Scheduling       v1beta1.SchedulingOptions `json:"scheduling,omitempty"`
	TemplateRevision int64                     `json:"templateRevision,omitempty"`
}

// StallBounds are the Input's polling.stallAfter with defaults applied.
type StallBounds struct {
	Imports, Clones time.Duration
}

// CloneBudget is the Input's cloneBudget with its default applied.
type CloneBudget struct {
	Default int32
	Classes map[string]int32
	// LeakedClaimAfter is how long a clone's claim may stay Pending, Lost or
	// terminating before it is taken for one CDI left behind
	// (clonebudget.CountClaims).
	LeakedClaimAfter time.Duration
}

// For is the budget of clones onto class; 0 is unbounded.
func (b CloneBudget) For(class string) int32 {
	if n, ok := b.Classes[class]; ok {
		return n
	}
	return b.Default
}

// Any reports whether some class has a budget.
func (b CloneBudget) Any() bool {
	if b.Default > 0 {
		return true
	}
	for _, n := range b.Classes {
		if n > 0 {
			return true
		}
	}
	return false
}

// Join is the Input's join options with defaults applied.
type Join struct {
	TalosSecretsSuffix, TalosCASuffix, KubernetesCASuffix, APIServerServiceSuffix string
	DNSServiceNamespace, DNSServiceName                                           string
	ManagementClusterDomain, ClusterDomain                                        string
	PodSubnet, ServiceSubnet                                                      string
	ControlPlaneAPIVersion, ControlPlaneKind                                      string
}

// MatrixEntry is one support-matrix row from the Input.
type MatrixEntry struct {
	Talos, MinKubernetes, MaxKubernetes string
}

// maxWorkerDisksCeiling is the XRD's maximum of cloneHealth.maxWorkerDisks,
// and maxCloneBudget of a clone budget. minLeakedClaimAfter is the shortest
// cloneBudget.leakedClaimAfter: a clone's claim is Pending or Lost for
// seconds while the clone runs, and a bound near that would stop counting
// clones that run.
const (
	maxWorkerDisksCeiling = 10000
	maxCloneBudget        = 10000
	minLeakedClaimAfter   = time.Minute
)

// FromInput validates in and applies defaults; steadyTTL is the TTL when
// the Input sets none.
func FromInput(in *v1beta1.Input, steadyTTL time.Duration) (Config, error) {
	c := Config{
		Mode:                  in.Mode,
		GoldenNamespace:       or(in.GoldenNamespace, defaults.GoldenNamespace),
		Platform:              or(in.Image.Platform, defaults.ImagePlatform),
		Arch:                  or(in.Image.Arch, defaults.ImageArch),
		TalosVersion:          or(in.Talos.Version, defaults.TalosVersion),
		SchematicID:           or(in.Talos.SchematicID, defaults.TalosSchematicID),
		ImageFactoryURL:       or(in.Talos.ImageFactoryURL, defaults.ImageFactoryURL),
		InstallerRepository:   in.Talos.InstallerRepository,
		KubernetesVersion:     or(in.Talos.KubernetesVersion, defaults.KubernetesVersion),
		CloneRBACScope:        in.CloneRBAC.Scope,
		VMServiceAccount:      or(in.CloneRBAC.ServiceAccountName, defaults.VMServiceAccount),
		WaitForCloneGrant:     in.CloneRBAC.WaitForGrant == nil || *in.CloneRBAC.WaitForGrant,
		Usages:                in.Usages.Enabled == nil || *in.Usages.Enabled,
		AllowHostAssistedCopy: in.ClonePreflight.AllowHostAssistedCopy,
		ReadSnapshotClasses:   in.ClonePreflight.ReadVolumeSnapshotClasses == nil || *in.ClonePreflight.ReadVolumeSnapshotClasses,
		SnapshotGoldens:       in.SnapshotGoldens.Enabled == nil || *in.SnapshotGoldens.Enabled,
		MaxWorkerDisks:        defaults.MaxWorkerDisks,
		CloneBudget:           CloneBudget{Default: defaults.CloneBudget, LeakedClaimAfter: defaults.LeakedClaimAfter},
		SteadyTTL:             steadyTTL,
		InProgressTTL:         15 * time.Second,
		Stall:                 StallBounds{Imports: defaults.ImportStallAfter, Clones: defaults.CloneStallAfter},
	}
	var errs field.ErrorList
	if n := in.CloneHealth.MaxWorkerDisks; n != nil {
		if *n < 0 || *n > maxWorkerDisksCeiling {
			errs = append(errs, field.Invalid(field.NewPath("cloneHealth", "maxWorkerDisks"), *n, fmt.Sprintf("must be from 0 to %d; it is how many worker disks a pool reads for its CloneHealthy condition (default %d, about what fits in the 4 MiB default --max-recv-message-size with room to spare)", maxWorkerDisksCeiling, defaults.MaxWorkerDisks)))
		} else {
			c.MaxWorkerDisks = *n
		}
	}
	errs = append(errs, c.CloneBudget.from(in.CloneBudget)...)
	var ce field.ErrorList
	c.HostAssistedCopyClasses, ce = copyClasses(in.ClonePreflight.HostAssistedCopy.StorageClasses)
	errs = append(errs, ce...)
	if !c.ReadSnapshotClasses {
		// Without the snapshot API there is nothing to keep a golden as.
		if in.SnapshotGoldens.Enabled != nil && *in.SnapshotGoldens.Enabled {
			errs = append(errs, field.Invalid(field.NewPath("snapshotGoldens", "enabled"), true, "needs the snapshot.storage.k8s.io API, which clonePreflight.readVolumeSnapshotClasses: false says the cluster does not serve; set one of them to the other's value"))
		}
		c.SnapshotGoldens = false
	}
	switch c.Mode {
	case "", v1beta1.ModeCatalog, v1beta1.ModeTenantCluster, v1beta1.ModeNodePool:
	default:
		errs = append(errs, field.Invalid(field.NewPath("mode"), rules.Quoted(string(c.Mode)), "is not one of Catalog, TenantCluster or NodePool; omit it to infer the mode from the composite's kind"))
	}
	switch c.CloneRBACScope {
	case "":
		c.CloneRBACScope = v1beta1.CloneRBACPinningNamespaces
	case v1beta1.CloneRBACPinningNamespaces, v1beta1.CloneRBACAllServiceAccounts:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("cloneRBAC", "scope"), rules.Quoted(string(c.CloneRBACScope)), []string{string(v1beta1.CloneRBACPinningNamespaces), string(v1beta1.CloneRBACAllServiceAccounts)}))
	}
	errs = append(errs, rules.Namespace(field.NewPath("goldenNamespace"), c.GoldenNamespace, "set the namespace of the golden DataVolumes, or omit it for "+defaults.GoldenNamespace)...)
	for i, ns := range in.GoldenNamespaces {
		errs = append(errs, rules.Namespace(field.NewPath("goldenNamespaces").Index(i), ns, "name a namespace a catalog keeps goldens in")...)
	}
	if len(in.GoldenNamespaces) > 0 {
		c.ExtraGoldenNamespaces = slices.Clone(in.GoldenNamespaces)
	}
	errs = append(errs, rules.ServiceAccount(field.NewPath("cloneRBAC", "serviceAccountName"), c.VMServiceAccount, fmt.Sprintf("name the account the worker VMs run as (default %q)", defaults.VMServiceAccount))...)
	errs = append(errs, rules.PathSegment(field.NewPath("image", "platform"), c.Platform)...)
	errs = append(errs, rules.PathSegment(field.NewPath("image", "arch"), c.Arch)...)
	errs = append(errs, rules.TalosVersion(field.NewPath("talos", "version"), c.TalosVersion)...)
	errs = append(errs, rules.SchematicPath(field.NewPath("talos", "schematicID"), c.SchematicID)...)
	errs = append(errs, rules.FactoryURL(field.NewPath("talos", "imageFactoryURL"), c.ImageFactoryURL)...)
	if c.InstallerRepository != "" {
		errs = append(errs, rules.InstallerRepository(field.NewPath("talos", "installerRepository"), c.InstallerRepository)...)
	}
	errs = append(errs, rules.KubernetesMinor(field.NewPath("talos", "kubernetesVersion"), c.KubernetesVersion)...)

	var e field.ErrorList
	c.GoldenStorage, e = rules.Size(field.NewPath("storage", "goldenStorage"), or(in.Storage.GoldenStorage, defaults.GoldenStorage), defaults.GoldenStorage)
	errs = append(errs, e...)
	c.MinimumImageStorage, e = rules.Size(field.NewPath("storage", "minimumImageStorage"), or(in.Storage.MinimumImageStorage, defaults.MinimumImageStorage), defaults.MinimumImageStorage)
	errs = append(errs, e...)
	c.DiskSize, e = rules.Size(field.NewPath("storage", "diskSize"), or(in.Storage.DiskSize, defaults.DiskSize), defaults.DiskSize)
	errs = append(errs, e...)

	if in.Polling.Steady != nil {
		c.SteadyTTL = in.Polling.Steady.Duration
	}
	if in.Polling.InProgress != nil {
		c.InProgressTTL = in.Polling.InProgress.Duration
	}
	errs = append(errs, rules.PollingInterval(field.NewPath("polling", "steady"), c.SteadyTTL)...)
	errs = append(errs, rules.PollingInterval(field.NewPath("polling", "inProgress"), c.InProgressTTL)...)
	if d := in.Polling.StallAfter.Imports; d != nil {
		c.Stall.Imports = d.Duration
		errs = append(errs, rules.StallBound(field.NewPath("polling", "stallAfter", "imports"), d.Duration)...)
	}
	if d := in.Polling.StallAfter.Clones; d != nil {
		c.Stall.Clones = d.Duration
		errs = append(errs, rules.StallBound(field.NewPath("polling", "stallAfter", "clones"), d.Duration)...)
	}

	for i, c := range in.Scheduling.TopologySpreadConstraints {
		errs = append(errs, rules.TopologySpread(field.NewPath("scheduling", "topologySpreadConstraints").Index(i), c)...)
	}
	c.TopologySpread = in.Scheduling.TopologySpreadConstraints
	c.ApplicationLabels = in.Scheduling.ApplicationLabels
	c.ImageFactoryCA, e = rules.CABundle(field.NewPath("talos", "imageFactoryCA"), in.Talos.ImageFactoryCA)
	errs = append(errs, e...)

	if m := in.SupportMatrix; m != nil {
		c.MatrixReplace = m.Replace
		seen := map[string]int{}
		for i, e := range m.Entries {
			path := field.NewPath("supportMatrix", "entries").Index(i)
			errs = append(errs, rules.SupportMatrixRow(path, e.Talos, e.MinKubernetes, e.MaxKubernetes)...)
			if first, dup := seen[e.Talos]; dup {
				errs = append(errs, field.Invalid(path.Child("talos"), rules.Quoted(e.Talos), fmt.Sprintf("is listed twice (also supportMatrix.entries[%d]); keep one row per Talos minor", first)))
				continue
			}
			seen[e.Talos] = i
			c.MatrixEntries = append(c.MatrixEntries, MatrixEntry{Talos: e.Talos, MinKubernetes: e.MinKubernetes, MaxKubernetes: e.MaxKubernetes})
		}
		sort.Slice(c.MatrixEntries, func(i, j int) bool { return c.MatrixEntries[i].Talos < c.MatrixEntries[j].Talos })
		for i, r := range m.KubernetesReleases {
			path := field.NewPath("supportMatrix", "kubernetesReleases").Index(i)
			errs = append(errs, rules.KubernetesReleaseRow(path, r.Minor, r.Release)...)
			if _, dup := c.KubernetesReleases[r.Minor]; dup {
				errs = append(errs, field.Invalid(path.Child("minor"), rules.Quoted(r.Minor), "is listed twice; keep one release per Kubernetes minor"))
				continue
			}
			if c.KubernetesReleases == nil {
				c.KubernetesReleases = map[string]string{}
			}
			c.KubernetesReleases[r.Minor] = r.Release
		}
	}
	c.ClusterAPIVersion = v1beta1.ClusterAPIVersion(or(string(in.ClusterAPI.Version), string(v1beta1.ClusterAPIV1Beta1)))
	switch c.ClusterAPIVersion {
	case v1beta1.ClusterAPIV1Beta1, v1beta1.ClusterAPIV1Beta2:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("clusterAPI", "version"), rules.Quoted(string(c.ClusterAPIVersion)), []string{string(v1beta1.ClusterAPIV1Beta1), string(v1beta1.ClusterAPIV1Beta2)}))
	}
	for i, p := range in.ClusterAPI.SyncMachineLabels {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("clusterAPI", "syncMachineLabels").Index(i), rules.Quoted(p), fmt.Sprintf("is not a regular expression Cluster API can compile (%v); write it as given to the manager's --additional-sync-machine-labels, e.g. ^example\\.com/.*", err)))
			continue
		}
		c.SyncMachineLabels = append(c.SyncMachineLabels, re)
	}
	errs = append(errs, rules.TemplateRevision(field.NewPath("templateRevision"), in.TemplateRevision)...)
	c.Requested = Requested{
		GoldenNamespace: in.GoldenNamespace, Image: in.Image, Talos: in.Talos, DiskSize: in.Storage.DiskSize,
		Join: in.Join, Scheduling: in.Scheduling, TemplateRevision: in.TemplateRevision,
	}
	var je field.ErrorList
	c.Join, je = joinFromInput(in.Join)
	errs = append(errs, je...)
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("input: %s", rules.Message(errs))
	}
	return c, nil
}

// joinFromInput applies the join defaults (cozystack's names) and checks
// every value; a suffix is a pointer, as "" (the cluster's name) is explicit.
func joinFromInput(in v1beta1.JoinOptions) (Join, field.ErrorList) {
	suffix := func(v *string, def string) string {
		if v == nil {
			return def
		}
		return *v
	}
	j := Join{
		TalosSecretsSuffix:      suffix(in.TalosSecretsSuffix, defaults.JoinTalosSecretsSuffix),
		TalosCASuffix:           suffix(in.TalosCASuffix, defaults.JoinTalosCASuffix),
		KubernetesCASuffix:      suffix(in.KubernetesCASuffix, defaults.JoinKubernetesCASuffix),
		APIServerServiceSuffix:  suffix(in.APIServerServiceSuffix, defaults.JoinAPIServerServiceSuffix),
		DNSServiceNamespace:     or(in.DNSServiceNamespace, defaults.JoinDNSServiceNamespace),
		DNSServiceName:          or(in.DNSServiceName, defaults.JoinDNSServiceName),
		ManagementClusterDomain: or(in.ManagementClusterDomain, defaults.JoinManagementClusterDomain),
		ClusterDomain:           or(in.ClusterDomain, defaults.JoinClusterDomain),
		PodSubnet:               or(in.PodSubnet, defaults.JoinPodSubnet),
		ServiceSubnet:           or(in.ServiceSubnet, defaults.JoinServiceSubnet),
		ControlPlaneAPIVersion:  or(in.ControlPlaneAPIVersion, defaults.JoinControlPlaneAPIVersion),
		ControlPlaneKind:        or(in.ControlPlaneKind, defaults.JoinControlPlaneKind),
	}
	p := field.NewPath("join")
	var errs field.ErrorList
	errs = append(errs, rules.NameSuffix(p.Child("talosSecretsSuffix"), j.TalosSecretsSuffix)...)
	errs = append(errs, rules.NameSuffix(p.Child("talosCASuffix"), j.TalosCASuffix)...)
	errs = append(errs, rules.NameSuffix(p.Child("kubernetesCASuffix"), j.KubernetesCASuffix)...)
	errs = append(errs, rules.NameSuffix(p.Child("apiServerServiceSuffix"), j.APIServerServiceSuffix)...)
	errs = append(errs, rules.Namespace(p.Child("dnsServiceNamespace"), j.DNSServiceNamespace, "name the namespace of the management cluster's DNS Service, or omit it for "+defaults.JoinDNSServiceNamespace)...)
	errs = append(errs, rules.ObjectNameLabel(p.Child("dnsServiceName"), j.DNSServiceName, "a Service name", "name the management cluster's DNS Service, or omit it for "+defaults.JoinDNSServiceName)...)
	errs = append(errs, rules.DNSDomain(p.Child("managementClusterDomain"), j.ManagementClusterDomain)...)
	errs = append(errs, rules.DNSDomain(p.Child("clusterDomain"), j.ClusterDomain)...)
	errs = append(errs, rules.Subnet(p.Child("podSubnet"), j.PodSubnet)...)
	errs = append(errs, rules.Subnet(p.Child("serviceSubnet"), j.ServiceSubnet)...)
	errs = append(errs, rules.APIVersionKind(p, "controlPlaneAPIVersion", "controlPlaneKind", j.ControlPlaneAPIVersion, j.ControlPlaneKind)...)
	return j, errs
}

// ModeFor returns the configured mode, else the one the composite kind implies.
func ModeFor(c Config, kind string) (v1beta1.Mode, error) {
	if c.Mode != "" {
		return c.Mode, nil
	}
	switch kind {
	case v1alpha1.KindWorkerImageCatalog:
		return v1beta1.ModeCatalog, nil
	case v1alpha1.KindTenantCluster:
		return v1beta1.ModeTenantCluster, nil
	case v1alpha1.KindNodePool:
		return v1beta1.ModeNodePool, nil
	}
	return "", fmt.Errorf("cannot infer the mode from composite kind %q: set the Input's mode to Catalog, TenantCluster or NodePool, or use the %s, %s or %s composite", kind, v1alpha1.KindWorkerImageCatalog, v1alpha1.KindTenantCluster, v1alpha1.KindNodePool)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// from reads cloneBudget: each budget from 0 (unbounded) to maxCloneBudget,
// each class a StorageClass name, leakedClaimAfter at least
// minLeakedClaimAfter.
func (b *CloneBudget) from(in v1beta1.CloneBudgetOptions) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("cloneBudget")
	check := func(p *field.Path, n int32) bool {
		if n < 0 || n > maxCloneBudget {
			errs = append(errs, field.Invalid(p, n, fmt.Sprintf("must be from 0 (unbounded) to %d: it is how many worker disks of one golden may clone at once onto a StorageClass (default %d)", maxCloneBudget, defaults.CloneBudget)))
			return false
		}
		return true
	}
	if in.Default != nil && check(path.Child("default"), *in.Default) {
		b.Default = *in.Default
	}
	if d := in.LeakedClaimAfter; d != nil {
		if d.Duration < minLeakedClaimAfter {
			errs = append(errs, field.Invalid(path.Child("leakedClaimAfter"), d.Duration.String(), fmt.Sprintf("must be at least %s: a claim CDI runs a clone through is Pending or Lost for seconds while the clone runs, and one that stays so longer is no longer counted against the budget (default %s)", minLeakedClaimAfter, defaults.LeakedClaimAfter)))
		} else {
			b.LeakedClaimAfter = d.Duration
		}
	}
	for _, class := range slices.Sorted(maps.Keys(in.StorageClasses)) {
		p := path.Child("storageClasses").Key(class)
		for _, msg := range validation.IsDNS1123Subdomain(class) {
			errs = append(errs, field.Invalid(p, class, "is not a StorageClass name: "+msg))
		}
		if n := in.StorageClasses[class]; check(p, n) {
			if b.Classes == nil {
				b.Classes = map[string]int32{}
			}
			b.Classes[class] = n
		}
	}
	return errs
}

// CopiesOnto reports whether pools on class copy their disks from a golden
// on another class (clonePreflight.hostAssistedCopy.storageClasses).
func (c Config) CopiesOnto(class string) bool {
	_, found := slices.BinarySearch(c.HostAssistedCopyClasses, class)
	return class != "" && found
}

// copyClasses reads clonePreflight.hostAssistedCopy.storageClasses: each a
// StorageClass name, listed once.
func copyClasses(in []string) ([]string, field.ErrorList) {
	var errs field.ErrorList
	path := field.NewPath("clonePreflight", "hostAssistedCopy", "storageClasses")
	seen := map[string]int{}
	var out []string
	for i, class := range in {
		p := path.Index(i)
		if msgs := validation.IsDNS1123Subdomain(class); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(p, class, "is not a StorageClass name: "+msg))
			}
			continue
		}
		if first, dup := seen[class]; dup {
			errs = append(errs, field.Invalid(p, class, fmt.Sprintf("is listed twice (also %s); list each class once", path.Index(first))))
			continue
		}
		seen[class] = i
		out = append(out, class)
	}
	slices.Sort(out)
	return out, errs
}

// GoldenNamespaces are the namespaces a composite may name as its golden
// namespace, sorted: the Input's goldenNamespace, cozy-public (the default
// the composites' schema writes into every composite that names none) and
// the Input's goldenNamespaces. A tenant writes its pools' goldenNamespace;
// the platform decides which namespaces hold goldens.
func (c Config) GoldenNamespaces() []string {
	out := append([]string{c.GoldenNamespace, defaults.GoldenNamespace}, c.ExtraGoldenNamespaces...)
	slices.Sort(out)
	return slices.Compact(out)
}
