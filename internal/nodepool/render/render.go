package render

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
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
	"github.com/cozystack/function-worker-image/internal/talosimage"
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

// diskLabels and diskAnnotations mark a worker disk (and the templates that
// make it) with the pool and, on the clone path, the golden. Full names go in
// annotations; labels carry short hashes so that they can be selected.
func diskLabels(p pool.Pool, img pool.Image) map[string]string {
	l := map[string]string{labels.Pool: p.Hash()}
	if img.Source == pool.SourceClone {
		l[labels.Golden] = labels.GoldenHash(img.GoldenNamespace, img.GoldenName)
	}
	return l
}

func diskAnnotations(p pool.Pool, img pool.Image) map[string]string {
	a := map[string]string{labels.AnnPool: p.Ref(), labels.AnnSourceType: string(img.Source)}
	if img.Source == pool.SourceClone {
		a[labels.AnnGolden] = labels.GoldenRef(img.GoldenNamespace, img.GoldenName)
	}
	return a
}

// RenderingLegacyImport is the RenderingRevision from which an HTTP disk
// imports on CDI's legacy path (dataVolumeAnnotations).
const RenderingLegacyImport = 2

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
func dataVolumeAnnotations(p pool.Pool, img pool.Image, rendering int, src DiskSource) map[string]string {
	a := diskAnnotations(p, img)
	if img.Source != pool.SourceClone && rendering >= RenderingLegacyImport {
		a[labels.AnnCDIUsePopulator] = "false"
	}
	if img.Source == pool.SourceClone && src.Copy != nil {
		maps.Copy(a, copyAnnotations(src.Copy))
	}
	return a
}

// RenderMachineTemplate builds the KubevirtMachineTemplate as
// RenderingRevision rendering renders it. storageClass is the resolved class
// ("" leaves the choice to CDI at bind time); src says how a clone disk is
// made: restored from the golden's VolumeSnapshot, named as the golden
// (snapshot.go), a copy of its PVC asked of CDI (copy.go), else a clone of
// its PVC.
func RenderMachineTemplate(p pool.Pool, img pool.Image, s pool.Shape, storageClass string, rendering int, src DiskSource) (MachineTemplate, error) {
	source := &cdiv1.DataVolumeSource{}
	switch {
	case img.Source == pool.SourceClone && src.FromSnapshot:
		source = goldensnapshot.Source(img.GoldenNamespace, img.GoldenName)
	case img.Source == pool.SourceClone:
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
				Name:        pool.DiskTemplateName,
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
						Name:       pool.SystemVolume,
						DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}},
					}}},
				},
				Volumes: []kubevirtv1.Volume{{
					Name:         pool.SystemVolume,
					VolumeSource: kubevirtv1.VolumeSource{DataVolume: &kubevirtv1.DataVolumeSource{Name: pool.DiskTemplateName}},
				}},
			},
		},
	}
	WithGPUs(&vm.Template.Spec, s.GPUs)
	if s.InstanceType != "" {
		vm.Instancetype = &kubevirtv1.InstancetypeMatcher{Kind: pool.InstancetypeKind, Name: s.InstanceType}
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
		TypeMeta: metav1.TypeMeta{APIVersion: pool.InfraAPIVersion, Kind: pool.KindKubevirtMachineTmpl},
		Spec: infrav1.KubevirtMachineTemplateSpec{Template: infrav1.KubevirtMachineTemplateResource{Spec: infrav1.KubevirtMachineSpec{
			VirtualMachineTemplate: infrav1.VirtualMachineTemplateSpec{Spec: vm},
			BootstrapCheckSpec:     infrav1.VirtualMachineBootstrapCheckSpec{CheckStrategy: pool.CheckStrategyNone},
		}}},
	}
	apply(s.VM, p, &kmt.Spec.Template.Spec.VirtualMachineTemplate)
	kmt.ObjectMeta = templateMeta(p, "", diskLabels(p, img), diskAnnotations(p, img))
	name, desired, err := named(p, kmt)
	if err != nil {
		return MachineTemplate{}, err
	}
	kmt.Name = name
	return MachineTemplate{KubevirtMachineTemplate: kmt, Desired: desired}, nil
}

// RenderBootstrapTemplate builds the TalosConfigTemplate. The installer
// follows the resolved image, so a pool on an osImage override upgrades in
// place to the OS it booted, not to the pool default.
// A Join pool (join non-nil) gets the complete worker config as its base
// document, and the same patches.
func RenderBootstrapTemplate(p pool.Pool, img pool.Image, s pool.Shape, nc talosconfig.Node, join *read.JoinPlan) (BootstrapTemplate, error) {
	installer := talosimage.InstallerImage(s.InstallerRepository.Value, img.SchematicID.Value, img.Version.Value)
	patches, err := talosconfig.StrategicPatches(installer, img.Version.Value, s.Mirrors, nc)
	if err != nil {
		return BootstrapTemplate{}, err
	}
	spec := talosconfig.TalosConfigSpec{
		GenerateType:     talosconfig.GenerateTypeWorker,
		TalosVersion:     img.Version.Value,
		StrategicPatches: patches,
	}
	annotations := map[string]string{labels.AnnPool: p.Ref()}
	if join != nil {
		if spec, annotations[pool.AnnJoinBase], err = bootstrapSpec(join, spec, s.MachineVersion); err != nil {
			return BootstrapTemplate{}, err
		}
	}
	tct := &talosconfig.TalosConfigTemplate{
		TypeMeta: metav1.TypeMeta{APIVersion: talosconfig.APIVersion, Kind: talosconfig.KindTalosConfigTemplate},
		Spec:     talosconfig.TalosConfigTemplateSpec{Template: talosconfig.TalosConfigTemplateResource{Spec: spec}},
	}
	tct.ObjectMeta = templateMeta(p, "", map[string]string{labels.Pool: p.Hash()}, annotations)
	name, desired, err := named(p, tct)
	if err != nil {
		return BootstrapTemplate{}, err
	}
	tct.Name = name
	return BootstrapTemplate{TalosConfigTemplate: tct, Desired: desired}, nil
}

// templateMeta is the metadata of a content-named template.
func templateMeta(p pool.Pool, name string, l, a map[string]string) metav1.ObjectMeta {
	ls := map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.ManagedBy: labels.ManagedByValue}
	maps.Copy(ls, l)
	return metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: ls, Annotations: a}
}

// deploymentMeta is the identity of the pool's per-pool Cluster API objects
// (the MachineDeployment and the MachineHealthCheck): named after the
// deployment, labelled with the cluster and the pool.
func deploymentMeta(p pool.Pool) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        p.DeploymentName(),
		Namespace:   p.Namespace,
		Labels:      map[string]string{clusterapi.LabelClusterName: p.Cluster, labels.Pool: p.Hash(), labels.ManagedBy: labels.ManagedByValue},
		Annotations: map[string]string{labels.AnnPool: p.Ref()},
	}
}

// machineSelector selects the pool's Machines by the labels its
// MachineDeployment gives them.
func machineSelector(p pool.Pool) map[string]string {
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
	return hex.EncodeToString(sum[:])[:pool.HashLength], nil
}
