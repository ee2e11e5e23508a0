package tenantcluster

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// maxNameLength is the limit of a DNS-1123 label. <cluster>-<pool> names the
// XNodePool, and the node pool mode names its MachineDeployment after it, so
// the pair must fit in one label.
const maxNameLength = validation.DNS1123LabelMaxLength

// validate returns every problem of spec, one clause each, cluster fields
// first and then pools in name order, so a user fixes them in one pass and
// the fatal message is the same on every call. cluster is the composite's
// name; the pools' names are built from it.
func validate(cluster string, spec v1alpha1.TenantClusterSpec) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// spec.version is a minor, never a patch: Talos picks the patch of the
	// Kubernetes it installs.
	if v := spec.Version; v != "" && rules.KubernetesMinor(field.NewPath("spec", "version"), v) != nil {
		add("spec.version %q is not a Kubernetes minor such as v1.35; set the minor the tenant cluster runs, Talos picks the patch", v)
	}
	if ns := spec.GoldenNamespace; ns != "" {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			add("spec.goldenNamespace %q is not a namespace name (%s); set the namespace that holds the golden DataVolumes, or omit it for the platform default", ns, errs[0])
		}
	}
	// The class is copied into every pool that names none: refuse it once,
	// here, rather than in each XNodePool.
	if err := rules.CheckStorageClass("spec.storageClass", spec.StorageClass); err != nil {
		problems = append(problems, err.Error())
	}
	problems = append(problems, checkFields([]fieldCheck{
		{"spec.talos.version", spec.Talos.Version, talosimage.ValidateVersion},
		{"spec.talos.schematicID", spec.Talos.SchematicID, talosimage.ValidateSchematicID},
		{"spec.talos.imageFactoryURL", spec.Talos.ImageFactoryURL, talosimage.ValidateFactoryURL},
		{"spec.talos.installerRepository", spec.Talos.InstallerRepository, talosimage.ValidateInstallerRepository},
	})...)

	for _, name := range sortedPoolNames(spec.NodePools) {
		problems = append(problems, validatePool(cluster, name, spec.NodePools[name])...)
	}
	return problems
}

// validatePool checks what the cluster can name better than the pool would:
// the pool's name, and the fields of its shape that are wrong whatever the
// cluster around them.
func validatePool(cluster, name string, p v1alpha1.PoolShape) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		add("spec.nodePools: pool name %q is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit); rename the pool, its name becomes part of the XNodePool and MachineDeployment names", name)
	} else if full := nodePoolName(cluster, name); len(full) > maxNameLength {
		room := maxNameLength - len(cluster) - 1
		if room < 1 {
			add("spec.nodePools: pool %q would be named %q, %d characters, more than %d; the cluster name %q leaves no room for a pool name, so recreate the cluster under a shorter name", name, full, len(full), maxNameLength, cluster)
		} else {
			add("spec.nodePools: pool %q would be named %q, %d characters, more than %d; shorten the pool name to at most %d characters", name, full, len(full), maxNameLength, room)
		}
	}

	// The pool's shape is checked with the node pool's own checks, so the
	// bounds and the messages are the same whichever composite carries it.
	var replicas any
	if p.Replicas != nil {
		replicas = *p.Replicas
	}
	var cpu, memory string
	if p.Resources != nil {
		cpu, memory = p.Resources.CPU, p.Resources.Memory
	}
	for _, err := range []error{
		rules.CheckReplicas(poolField(name, "replicas"), replicas),
		rules.CheckDiskSize(poolField(name, "diskSize"), p.DiskSize),
		rules.CheckCPU(poolField(name, "resources.cpu"), cpu),
		rules.CheckMemory(poolField(name, "resources.memory"), memory),
		rules.CheckStorageClass(poolField(name, "storageClass"), p.StorageClass),
	} {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	if p.OSImage == nil {
		return problems
	}
	if p.OSImage.Builtin != nil && p.OSImage.Factory != nil {
		add("%s sets both builtin and factory; keep builtin to clone the catalog's golden image, or factory to import it over HTTP, not both", poolField(name, "osImage"))
	}
	var checks []fieldCheck
	if b := p.OSImage.Builtin; b != nil {
		checks = append(checks,
			fieldCheck{poolField(name, "osImage.builtin.schematicID"), b.SchematicID, talosimage.ValidateSchematicID},
			fieldCheck{poolField(name, "osImage.builtin.version"), b.Version, talosimage.ValidateVersion})
	}
	if f := p.OSImage.Factory; f != nil {
		checks = append(checks,
			fieldCheck{poolField(name, "osImage.factory.schematicID"), f.SchematicID, talosimage.ValidateSchematicID},
			fieldCheck{poolField(name, "osImage.factory.version"), f.Version, talosimage.ValidateVersion},
			fieldCheck{poolField(name, "osImage.factory.imageFactoryURL"), f.ImageFactoryURL, talosimage.ValidateFactoryURL})
	}
	problems = append(problems, checkFields(checks)...)
	return problems
}

// fieldCheck validates one optional Talos image field with its talosimage
// validator.
type fieldCheck struct {
	field, value string
	check        func(string) error
}

// checkFields runs checks in order. An omitted field is not checked: it takes
// a default that has already been validated (the cluster's, else the Input's).
func checkFields(checks []fieldCheck) []string {
	var problems []string
	for _, c := range checks {
		if c.value == "" {
			continue
		}
		if err := c.check(c.value); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", c.field, err))
		}
	}
	return problems
}

// poolField is the path of a field of one pool, as the user wrote it.
func poolField(pool, field string) string {
	if field == "" {
		return "spec.nodePools." + pool
	}
	return "spec.nodePools." + pool + "." + field
}

func sortedPoolNames(pools map[string]v1alpha1.PoolShape) []string {
	names := make([]string, 0, len(pools))
	for n := range pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
