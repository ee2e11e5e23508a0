// Package config turns the function's Input into a validated Config with every
// default applied. Crossplane never installs, defaults or validates a function
// Input, so this is where that happens; an invalid Input is a fatal result
// naming the field, the value and the fix.
package config

import (
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Config is the Input with defaults applied and quantities parsed once.
type Config struct {
	Mode            v1beta1.Mode
	GoldenNamespace string
	Platform        string
	Arch            string

	TalosVersion    string
	SchematicID     string
	ImageFactoryURL string
	// InstallerRepository is the Input's talos.installerRepository as
	// written, empty when it sets none: the default is not one repository but
	// the factory's installer for each pool's factory, platform and version,
	// which the node pool derives (talosimage.DefaultInstallerRepository).
	InstallerRepository string
	KubernetesVersion   string

	GoldenStorage       resource.Quantity
	MinimumImageStorage resource.Quantity
	DiskSize            resource.Quantity

	// SupportMatrix overrides: Talos minor to [min, max] Kubernetes minors.
	MatrixReplace bool
	MatrixEntries []MatrixEntry

	CloneRBACScope v1beta1.CloneRBACScope
	// VMServiceAccount is the service account the worker VMs run as.
	VMServiceAccount string
	// WaitForCloneGrant holds a pool's MachineDeployment until its VM service
	// account may clone the golden.
	WaitForCloneGrant bool
	// Usages composes the Crossplane Usages that protect cloned goldens.
	Usages bool
	// AllowHostAssistedCopy lets a clone template through when CDI would
	// copy it over the pod network.
	AllowHostAssistedCopy bool
	// ReadSnapshotClasses requires the VolumeSnapshotClasses.
	ReadSnapshotClasses bool

	SteadyTTL     time.Duration
	InProgressTTL time.Duration
}

// MatrixEntry is one support-matrix row from the Input.
type MatrixEntry struct {
	Talos, MinKubernetes, MaxKubernetes string
}

// FromInput validates in and applies defaults. steadyTTL is the server's
// default TTL, used when the Input sets none.
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
		SteadyTTL:             steadyTTL,
		InProgressTTL:         15 * time.Second,
	}
	switch c.Mode {
	case "", v1beta1.ModeCatalog, v1beta1.ModeTenantCluster, v1beta1.ModeNodePool:
	default:
		return Config{}, fmt.Errorf("input: mode %q is not one of Catalog, TenantCluster or NodePool; omit it to infer the mode from the composite's kind", c.Mode)
	}
	switch c.CloneRBACScope {
	case "":
		c.CloneRBACScope = v1beta1.CloneRBACPinningNamespaces
	case v1beta1.CloneRBACPinningNamespaces, v1beta1.CloneRBACAllServiceAccounts:
	default:
		return Config{}, fmt.Errorf("input: cloneRBAC.scope %q is not PinningNamespaces or AllServiceAccounts", c.CloneRBACScope)
	}
	if err := validateDNSLabel("goldenNamespace", c.GoldenNamespace); err != nil {
		return Config{}, err
	}
	if err := validateServiceAccountName("cloneRBAC.serviceAccountName", c.VMServiceAccount); err != nil {
		return Config{}, err
	}
	if err := validatePathSegment("image.platform", c.Platform); err != nil {
		return Config{}, err
	}
	if err := validatePathSegment("image.arch", c.Arch); err != nil {
		return Config{}, err
	}
	for _, check := range []struct {
		field string
		err   error
	}{
		{"talos.version", talosimage.ValidateVersion(c.TalosVersion)},
		{"talos.schematicID", talosimage.ValidateSchematicID(c.SchematicID)},
		{"talos.imageFactoryURL", talosimage.ValidateFactoryURL(c.ImageFactoryURL)},
	} {
		if check.err != nil {
			return Config{}, fmt.Errorf("input: %s: %w", check.field, check.err)
		}
	}
	if c.InstallerRepository != "" {
		if err := talosimage.ValidateInstallerRepository(c.InstallerRepository); err != nil {
			return Config{}, fmt.Errorf("input: talos.installerRepository: %w", err)
		}
	}
	if rules.KubernetesMinor(field.NewPath("talos", "kubernetesVersion"), c.KubernetesVersion) != nil {
		return Config{}, fmt.Errorf("input: talos.kubernetesVersion %q is not a Kubernetes minor such as v1.35", c.KubernetesVersion)
	}

	var err error
	if c.GoldenStorage, err = quantity("storage.goldenStorage", in.Storage.GoldenStorage, defaults.GoldenStorage); err != nil {
		return Config{}, err
	}
	if c.MinimumImageStorage, err = quantity("storage.minimumImageStorage", in.Storage.MinimumImageStorage, defaults.MinimumImageStorage); err != nil {
		return Config{}, err
	}
	if c.DiskSize, err = quantity("storage.diskSize", in.Storage.DiskSize, defaults.DiskSize); err != nil {
		return Config{}, err
	}

	if in.Polling.Steady != nil {
		c.SteadyTTL = in.Polling.Steady.Duration
	}
	if in.Polling.InProgress != nil {
		c.InProgressTTL = in.Polling.InProgress.Duration
	}
	if c.SteadyTTL < time.Second || c.InProgressTTL < time.Second {
		return Config{}, fmt.Errorf("input: polling.steady %s and polling.inProgress %s must each be at least 1s", c.SteadyTTL, c.InProgressTTL)
	}

	if m := in.SupportMatrix; m != nil {
		c.MatrixReplace = m.Replace
		seen := map[string]bool{}
		for i, e := range m.Entries {
			for _, v := range []struct{ field, value string }{
				{"talos", e.Talos}, {"minKubernetes", e.MinKubernetes}, {"maxKubernetes", e.MaxKubernetes},
			} {
				if _, _, ok := talosimage.MinorNumbers(v.value); !ok || len(v.value) > 16 {
					return Config{}, fmt.Errorf("input: supportMatrix.entries[%d].%s %q is not a minor version such as v1.13", i, v.field, v.value)
				}
			}
			if seen[e.Talos] {
				return Config{}, fmt.Errorf("input: supportMatrix.entries[%d].talos %q is listed twice; keep one row per Talos minor", i, e.Talos)
			}
			seen[e.Talos] = true
			c.MatrixEntries = append(c.MatrixEntries, MatrixEntry{Talos: e.Talos, MinKubernetes: e.MinKubernetes, MaxKubernetes: e.MaxKubernetes})
		}
		sort.Slice(c.MatrixEntries, func(i, j int) bool { return c.MatrixEntries[i].Talos < c.MatrixEntries[j].Talos })
	}
	return c, nil
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

// MaximumStorage bounds every size the function accepts. It is far above any
// disk a Talos worker or golden needs, and far below the sizes (around 1e21
// bytes) that apimachinery no longer renders as the quantity that was asked
// for ("1000000000000000000000" canonicalises to "1").
var MaximumStorage = resource.MustParse("1Pi")

func quantity(field, v, def string) (resource.Quantity, error) {
	v = or(v, def)
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return resource.Quantity{}, fmt.Errorf("input: %s %q is not a positive quantity such as %s", field, v, def)
	}
	if q.Cmp(MaximumStorage) > 0 {
		return resource.Quantity{}, fmt.Errorf("input: %s %q is larger than %s; write a size such as %s", field, v, MaximumStorage.String(), def)
	}
	return q, nil
}
