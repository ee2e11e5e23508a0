package render

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	infrav1 "sigs.k8s.io/cluster-api-provider-kubevirt/api/v1alpha1"

	"github.com/cozystack/function-worker-image/internal/goldensnapshot"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// DiskSource is what a new clone template's disk is made from: by default
// a clone of the golden's PVC as CDI plans it.
type DiskSource struct {
	// FromSnapshot restores the golden's VolumeSnapshot (decide/snapshot.go).
	FromSnapshot bool
	// Copy asks CDI for a host-assisted copy of the golden's PVC.
	Copy *read.CopyPath
}

// ClonesPVC reports the default: what Requirements renders.
func (d DiskSource) ClonesPVC() bool { return !d.FromSnapshot && d.Copy == nil }

// copyAnnotations are what a disk template of the copy path carries beside
// diskAnnotations: CDI's cloneType, which asks CDI for the copy, and the
// golden's class, which says on the disk and its template that the copy was
// chosen and from where (copyOf, cloneHealth).
func copyAnnotations(c *read.CopyPath) map[string]string {
	return map[string]string{
		labels.AnnCDICloneType:         string(cdiv1.CloneStrategyHostAssisted),
		labels.AnnCopyFromStorageClass: c.GoldenClass,
	}
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
// A disk on the copy path (decide/copy.go) also carries copyAnnotations; only a
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

// Machine builds the KubevirtMachineTemplate as
// RenderingRevision rendering renders it. storageClass is the resolved class
// ("" leaves the choice to CDI at bind time); src says how a clone disk is
// made: restored from the golden's VolumeSnapshot, named as the golden
// (decide/snapshot.go), a copy of its PVC asked of CDI (decide/copy.go), else a clone of
// its PVC.
func Machine(p pool.Pool, img pool.Image, s pool.Shape, storageClass string, rendering int, src DiskSource) (MachineTemplate, error) {
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
