package nodepool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/internal/clusterapi"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
)

// Names inside the VM template. CAPK prefixes each DataVolume template name
// with the machine name, so every worker gets its own disk-system disk.
const (
	diskTemplateName = "disk-system"
	systemVolume     = "system"
	// hashLength hex characters of sha256 name a template: 40 bits make an
	// accidental collision between two revisions of one pool negligible.
	hashLength = 10
	// instancetypeKind is the cluster-wide KubeVirt instance type kind.
	instancetypeKind = "VirtualMachineClusterInstancetype"
	// checkStrategyNone: Talos has no SSH for CAPK's bootstrap sentinel check.
	checkStrategyNone = "none"
)

// machineTemplate and bootstrapTemplate are a rendered template and its
// desired form, canonicalised once (named).
type machineTemplate struct {
	*infrav1.KubevirtMachineTemplate
	Desired *composed.Unstructured
}

type bootstrapTemplate struct {
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
func named(p pool, obj any) (string, *composed.Unstructured, error) {
	u, err := compose.ToDesired(obj, templateShape...)
	if err != nil {
		return "", nil, fmt.Errorf("cannot hash template spec: %w", err)
	}
	// encoding/json writes map keys sorted: the canonical bytes.
	b, err := json.Marshal(u.Object["spec"])
	if err != nil {
		return "", nil, fmt.Errorf("cannot hash template spec: %w", err)
	}
	sum := sha256.Sum256(b)
	name := p.DeploymentName() + "-" + hex.EncodeToString(sum[:])[:hashLength]
	u.SetName(name)
	return name, u, nil
}

// diskLabels and diskAnnotations mark a worker disk (and the templates that
// make it) with the pool and, on the clone path, the golden. Full names go in
// annotations; labels carry short hashes so that they can be selected.
func diskLabels(p pool, img image) map[string]string {
	l := map[string]string{labels.Pool: p.Hash()}
	if img.Source == SourceClone {
		l[labels.Golden] = labels.GoldenHash(img.GoldenNamespace, img.GoldenName)
	}
	return l
}

func diskAnnotations(p pool, img image) map[string]string {
	a := map[string]string{labels.AnnPool: p.Ref(), labels.AnnSourceType: string(img.Source)}
	if img.Source == SourceClone {
		a[labels.AnnGolden] = labels.GoldenRef(img.GoldenNamespace, img.GoldenName)
	}
	return a
}

// renderingLegacyImport is the RenderingRevision from which an HTTP disk
// imports on CDI's legacy path (dataVolumeAnnotations).
const renderingLegacyImport = 2

// dataVolumeAnnotations are the worker disk's: diskAnnotations, and from
// renderingLegacyImport on, usePopulator: "false" on an HTTP disk, as the
// chart's disks carry it (cozystack 7b7686096): CDI's populator path imports
// into a prime PVC and then rebinds its PV to the worker's claim, which
// LINSTOR's CSI driver answers with ClaimMisbound; the legacy path writes
// the worker's claim itself. A clone never carries it: "false" takes CDI
// off its clone populator, the only path on which it plans CSI clones and
// snapshots (cloneplan), onto a host-assisted copy.
//
// A disk on the copy path (copy.go) also carries copyAnnotations; only a
// template this release renders is on it.
func dataVolumeAnnotations(p pool, img image, rendering int, src diskSource) map[string]string {
	a := diskAnnotations(p, img)
	if img.Source != SourceClone && rendering >= renderingLegacyImport {
		a[labels.AnnCDIUsePopulator] = "false"
	}
	if img.Source == SourceClone && src.Copy != nil {
		maps.Copy(a, copyAnnotations(src.Copy))
	}
	return a
}

// renderMachineTemplate builds the KubevirtMachineTemplate as
// RenderingRevision rendering renders it. storageClass is the resolved class
// ("" leaves the choice to CDI at bind time); src says how a clone disk is
// made: restored from the golden's VolumeSnapshot, named as the golden
// (snapshot.go), a copy of its PVC asked of CDI (copy.go), else a clone of
// its PVC.
func renderMachineTemplate(p pool, img image, s shape, storageClass string, rendering int, src diskSource) (machineTemplate, error) {
	source := &cdiv1.DataVolumeSource{}
	switch {
	case img.Source == SourceClone && src.FromSnapshot:
		source = goldensnapshot.Source(img.GoldenNamespace, img.GoldenName)
	case img.Source == SourceClone:
		source.PVC = &cdiv1.DataVolumeSourcePVC{Namespace: img.GoldenNamespace, Name: img.GoldenName}
	default:
		source.HTTP = &cdiv1.DataVolumeSourceHTTP{URL: img.URL}
	}
	storage := &cdiv1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceStorage: s.DiskSize},
	}}
	if storageClass != "" {
		storage.StorageClassName = &storageClass
	}

	runStrategy := kubevirtv1.RunStrategyAlways
	// External eviction hands node drains to Cluster API, which replaces the
	// Machine instead of KubeVirt live-migrating or killing the VM.
	eviction := kubevirtv1.EvictionStrategyExternal
	vm := kubevirtv1.VirtualMachineSpec{
		RunStrategy: &runStrategy,
		DataVolumeTemplates: []kubevirtv1.DataVolumeTemplateSpec{{
			ObjectMeta: metav1.ObjectMeta{
				Name:        diskTemplateName,
				Labels:      diskLabels(p, img),
				Annotations: dataVolumeAnnotations(p, img, rendering, src),
			},
			Spec: cdiv1.DataVolumeSpec{Source: source, Storage: storage},
		}},
		Template: &kubevirtv1.VirtualMachineInstanceTemplateSpec{
			Spec: kubevirtv1.VirtualMachineInstanceSpec{
				EvictionStrategy: &eviction,
				Domain: kubevirtv1.DomainSpec{
					Devices: kubevirtv1.Devices{Disks: []kubevirtv1.Disk{{
						Name:       systemVolume,
						DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}},
					}}},
				},
				Volumes: []kubevirtv1.Volume{{
					Name:         systemVolume,
					VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: diskTemplateName}},
				}},
			},
		},
	}
	withGPUs(&vm.Template.Spec, s.GPUs)
	if s.InstanceType != "" {
		vm.Instancetype = &kubevirtv1.InstancetypeMatcher{Kind: instancetypeKind, Name: s.InstanceType}
	} else {
		if s.Cores > 0 {
			vm.Template.Spec.Domain.CPU = &kubevirtv1.CPU{Cores: s.Cores}
		}
		if s.Memory != nil {
			mem := s.Memory.DeepCopy()
			vm.Template.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: &mem}
		}
	}

	kmt := &infrav1.KubevirtMachineTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: InfraAPIVersion, Kind: KindKubevirtMachineTmpl},
		Spec: infrav1.KubevirtMachineTemplateSpec{Template: infrav1.KubevirtMachineTemplateResource{Spec: infrav1.KubevirtMachineSpec{
			VirtualMachineTemplate: infrav1.VirtualMachineTemplateSpec{Spec: vm},
			BootstrapCheckSpec:     infrav1.VirtualMachineBootstrapCheckSpec{CheckStrategy: checkStrategyNone},
		}}},
	}
	s.VM.apply(p, &kmt.Spec.Template.Spec.VirtualMachineTemplate)
	kmt.ObjectMeta = templateMeta(p, "", diskLabels(p, img), diskAnnotations(p, img))
	name, desired, err := named(p, kmt)
	if err != nil {
		return machineTemplate{}, err
	}
	kmt.Name = name
	return machineTemplate{KubevirtMachineTemplate: kmt, Desired: desired}, nil
}

// renderBootstrapTemplate builds the TalosConfigTemplate. The installer
// follows the resolved image, so a pool on an osImage override upgrades in
// place to the OS it booted, not to the pool default.
// A Join pool (join non-nil) gets the complete worker config as its base
// document, and the same patches.
func renderBootstrapTemplate(p pool, img image, s shape, nc talosconfig.Node, join *joinPlan) (bootstrapTemplate, error) {
	installer := talosimage.InstallerImage(s.InstallerRepository.Value, img.SchematicID.Value, img.Version.Value)
	patches, err := talosconfig.StrategicPatches(installer, img.Version.Value, s.Mirrors, nc)
	if err != nil {
		return bootstrapTemplate{}, err
	}
	spec := talosconfig.TalosConfigSpec{
		GenerateType:     talosconfig.GenerateTypeWorker,
		TalosVersion:     img.Version.Value,
		StrategicPatches: patches,
	}
	annotations := map[string]string{labels.AnnPool: p.Ref()}
	if join != nil {
		if spec, annotations[AnnJoinBase], err = join.bootstrapSpec(spec, s.MachineVersion); err != nil {
			return bootstrapTemplate{}, err
		}
	}
	tct := &talosconfig.TalosConfigTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate},
		Spec:     talosconfig.TalosConfigTemplateSpec{Template: talosconfig.TalosConfigTemplateResource{Spec: spec}},
	}
	tct.ObjectMeta = templateMeta(p, "", map[string]string{labels.Pool: p.Hash()}, annotations)
	name, desired, err := named(p, tct)
	if err != nil {
		return bootstrapTemplate{}, err
	}
	tct.Name = name
	return bootstrapTemplate{TalosConfigTemplate: tct, Desired: desired}, nil
}

// templateMeta is the metadata of a content-named template.
func templateMeta(p pool, name string, l, a map[string]string) metav1.ObjectMeta {
	ls := map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.ManagedBy: labels.ManagedByValue}
	maps.Copy(ls, l)
	return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: ls, Annotations: a}
}

// deploymentMeta is the identity of the pool's per-pool Cluster API objects
// (the MachineDeployment and the MachineHealthCheck): named after the
// deployment, labelled with the cluster and the pool.
func (p pool) deploymentMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        p.DeploymentName(),
		Namespace:   p.Namespace,
		Labels:      map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.Pool: p.Hash(), labels.ManagedBy: labels.ManagedByValue},
		Annotations: map[string]string{labels.AnnPool: p.Ref()},
	}
}

// machineSelector selects the pool's Machines by the labels its
// MachineDeployment gives them.
func (p pool) machineSelector() map[string]string {
	return map[string]string{clusterapi.LabelClusterName: p.Cluster, clusterapi.LabelDeploymentName: p.DeploymentName()}
}

// joinBase is the hash of a Join template apart from the facts: its spec
// with every fact replaced by a placeholder, and the pool's factsRevision.
// Two templates of a pool with the same base differ in facts alone, which
// never rolls the workers by itself (see pinFacts).
func joinBase(spec talosconfig.TalosConfigSpec, revision int64) (string, error) {
	m, err := compose.Canonical(struct {
		Spec     talosconfig.TalosConfigSpec `json:"spec"`
		Revision int64                       `json:"revision"`
	}{spec, revision}, compose.DropEmpty())
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("cannot hash the Talos worker config: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLength], nil
}
