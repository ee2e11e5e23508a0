package decide

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/talosconfig"
)

// machineTemplate is a KubevirtMachineTemplate spec: an HTTP disk of size,
// and the VM's template spec given.
func machineTemplate(url, size string, vm map[string]any) map[string]any {
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"virtualMachineTemplate": map[string]any{"spec": map[string]any{
			"dataVolumeTemplates": []any{map[string]any{
				"metadata": map[string]any{"name": "disk-system", "annotations": map[string]any{"workerimage.cozystack.io/source-type": "HTTP"}},
				"spec": map[string]any{
					"source":  map[string]any{"http": map[string]any{"url": url}},
					"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": size}}},
				},
			}},
			"template": map[string]any{"spec": vm},
		}},
	}}}}
}

// bootstrapTemplate is a TalosConfigTemplate spec with the patches given.
func bootstrapTemplate(patches ...any) map[string]any {
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"generateType": "worker", "talosVersion": "v1.13.6", "strategicPatches": patches,
	}}}}
}

const (
	url        = "https://factory.talos.dev/image/ce4c/v1.13.6/openstack-amd64.raw.xz"
	oldInstall = "machine:\n  install:\n    image: factory.talos.dev/installer/ce4c:v1.13.6\n"
	newInstall = "machine:\n  install:\n    image: factory.talos.dev/openstack-installer/ce4c:v1.13.6\n"
	kubelet    = "machine:\n  kubelet:\n    extraConfig:\n      kubeReserved:\n        memory: 256Mi\n"
)

func TestUnrecordedDiffs(t *testing.T) {
	disk := map[string]any{"domain": map[string]any{"devices": map[string]any{"disks": []any{map[string]any{"name": "system", "disk": map[string]any{"bus": "virtio"}}}}}}
	laterDisk := map[string]any{
		"domain": map[string]any{
			"devices":   map[string]any{"disks": []any{map[string]any{"name": "system", "disk": map[string]any{"bus": "virtio", "pciAddress": "0000:07:00.0"}}}},
			"resources": map[string]any{"limits": map[string]any{"ephemeral-storage": "2Gi"}},
		},
		"networks": []any{map[string]any{"name": "default", "pod": map[string]any{}}},
	}
	cases := map[string]struct {
		reason            string
		kind              string
		running, rendered map[string]any
		want              []string
	}{
		"SameSpecLaterVMDetails": {
			reason:   "A later rendering adds VM details (a PCI address, an ephemeral-storage limit, the pod network) to a template the first release made for the same spec: kept.",
			kind:     pool.KindKubevirtMachineTmpl,
			running:  machineTemplate(url, "20Gi", disk),
			rendered: machineTemplate(url, "20Gi", laterDisk),
		},
		"DiskSizeChanged": {
			reason:   "The owner asked for another disk size: a value the running template holds differs, so the pool rolls.",
			kind:     pool.KindKubevirtMachineTmpl,
			running:  machineTemplate(url, "20Gi", disk),
			rendered: machineTemplate(url, "30Gi", laterDisk),
			want:     []string{`spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates[0].spec.storage.resources.requests.storage: is "20Gi", this pool renders "30Gi"`},
		},
		"ImageChanged": {
			reason:   "The owner asked for another Talos version: the disk's URL differs.",
			kind:     pool.KindKubevirtMachineTmpl,
			running:  machineTemplate(url, "20Gi", disk),
			rendered: machineTemplate("https://factory.talos.dev/image/ce4c/v1.13.7/openstack-amd64.raw.xz", "20Gi", disk),
			want:     []string{`spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates[0].spec.source.http.url: is "https://factory.talos.dev/image/ce4c/v1.13.6/openstack-amd64.raw.xz", this pool renders "https://factory.talos.dev/image/ce4c/v1.13.7/openstack-amd64.raw.xz"`},
		},
		"DiskSourceSwitched": {
			reason:  "The owner switched from an HTTP import to a golden clone: the HTTP source the running template holds is gone.",
			kind:    pool.KindKubevirtMachineTmpl,
			running: machineTemplate(url, "20Gi", disk),
			rendered: func() map[string]any {
				m := machineTemplate(url, "20Gi", disk)
				dv := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["virtualMachineTemplate"].(map[string]any)["spec"].(map[string]any)["dataVolumeTemplates"].([]any)[0].(map[string]any)
				dv["spec"].(map[string]any)["source"] = map[string]any{"pvc": map[string]any{"namespace": "cozy-public", "name": "talos-worker"}}
				return m
			}(),
			want: []string{`spec.template.spec.virtualMachineTemplate.spec.dataVolumeTemplates[0].spec.source.http: is {"url":"https://factory.talos.dev/image/ce4c/v1.13.6/openstack-amd64.raw.xz"}, this pool renders absent`},
		},
		"SameSpecLaterInstallerFlavourAndReservations": {
			reason:   "A later release derives the installer's flavour from the disk's platform and adds the kubelet reservations: the same Talos build, kept.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall),
			rendered: bootstrapTemplate(newInstall, kubelet),
		},
		"InstallerHostFromTheFactory": {
			reason:   "A later release takes the installer's host from the factory the disk comes from: the same build, kept.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall),
			rendered: bootstrapTemplate("machine:\n  install:\n    image: factory.example.com/openstack-installer/ce4c:v1.13.6\n"),
		},
		"InstallerBuildChanged": {
			reason:   "Another schematic or Talos version is another build: the pool rolls.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall),
			rendered: bootstrapTemplate("machine:\n  install:\n    image: factory.talos.dev/openstack-installer/ce4c:v1.13.7\n"),
			want:     []string{`spec.template.spec.config.machineConfig.machine.install.image: is "ce4c:v1.13.6", this pool renders "ce4c:v1.13.7"`},
		},
		"CustomInstallerRepositoryChanged": {
			reason:   "An installer that is no Image Factory installer is compared whole: the owner's repository is an ask.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate("machine:\n  install:\n    image: registry.example.com/talos/custom:v1.13.6\n"),
			rendered: bootstrapTemplate("machine:\n  install:\n    image: registry.example.com/talos/other:v1.13.6\n"),
			want:     []string{`spec.template.spec.config.machineConfig.machine.install.image: is "registry.example.com/talos/custom:v1.13.6", this pool renders "registry.example.com/talos/other:v1.13.6"`},
		},
		"MirrorsAsDocuments": {
			reason:   "Talos 1.12 reads registry mirrors as RegistryMirrorConfig documents: the same mirrors in the other form, kept.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall + "  registries:\n    mirrors:\n      docker.io:\n        endpoints:\n        - https://mirror.example.com\n"),
			rendered: bootstrapTemplate(newInstall, kubelet, "apiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n- url: https://mirror.example.com\n"),
		},
		"MirrorChanged": {
			reason:   "Another mirror endpoint is the owner's change: the pool rolls.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall + "  registries:\n    mirrors:\n      docker.io:\n        endpoints:\n        - https://mirror.example.com\n"),
			rendered: bootstrapTemplate(newInstall, "apiVersion: v1alpha1\nkind: RegistryMirrorConfig\nname: docker.io\nendpoints:\n- url: https://other.example.com\n"),
			want:     []string{`spec.template.spec.config.machineConfig.machine.registries.mirrors.docker.io.endpoints[0]: is "https://mirror.example.com", this pool renders "https://other.example.com"`},
		},
		"MirrorRemoved": {
			reason:   "The owner dropped the mirror: the running config holds one the rendering does not.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall + "  registries:\n    mirrors:\n      docker.io:\n        endpoints:\n        - https://mirror.example.com\n"),
			rendered: bootstrapTemplate(newInstall),
			want:     []string{`spec.template.spec.config.machineConfig.machine.registries: is {"mirrors":{"docker.io":{"endpoints":["https://mirror.example.com"]}}}, this pool renders absent`},
		},
		"NodeLabelChanged": {
			reason:   "A node label Talos writes changed value: the pool rolls.",
			kind:     talosconfig.KindTalosConfigTemplate,
			running:  bootstrapTemplate(oldInstall, "machine:\n  nodeLabels:\n    tier: gold\n"),
			rendered: bootstrapTemplate(newInstall, "machine:\n  nodeLabels:\n    tier: silver\n"),
			want:     []string{`spec.template.spec.config.machineConfig.machine.nodeLabels.tier: is "gold", this pool renders "silver"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := UnrecordedDiffs(tc.kind, tc.running, tc.rendered)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
