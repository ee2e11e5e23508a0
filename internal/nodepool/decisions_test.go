package nodepool

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // CAPK v0.11.2 speaks the v1beta1 contract; CAPI v1.11 still serves it.

	fnresource "github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/defaults"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/matrix"
	"github.com/cozystack/function-worker-image/internal/nodepool/decide"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/poolspec"
	"github.com/cozystack/function-worker-image/internal/stall"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

var fxPoolID = pool.Pool{Namespace: fxNamespace, Cluster: fxCluster, Name: fxPool}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestSourceTypeOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		os     *v1alpha1.OSImage
		want   pool.SourceType
	}{
		"OmittedImports":      {reason: "No osImage imports over HTTP.", want: pool.SourceHTTP},
		"EmptyImports":        {reason: "osImage: {} imports over HTTP.", os: &v1alpha1.OSImage{}, want: pool.SourceHTTP},
		"EmptyFactoryImports": {reason: "factory: {} imports over HTTP.", os: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{}}, want: pool.SourceHTTP},
		"EmptyBuiltinClones":  {reason: "builtin: {} is selected by presence and clones.", os: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}, want: pool.SourceClone},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolveOSImage(v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: tc.os}}, testConfig(t)).Source); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResolveOSImage(t *testing.T) {
	goldenName := "talos-worker-" + defaults.TalosSchematicID + "-" + defaults.TalosVersion
	cases := map[string]struct {
		reason    string
		spec      v1alpha1.NodePoolSpec
		want      pool.Image
		wantField string // the field an invalid spec is refused at
	}{
		"OmittedUsesInputDefaultsOverHTTP": {
			reason: "Without osImage and spec.talos the Input's defaults are imported over HTTP.",
			want: pool.Image{
				Source:      pool.SourceHTTP,
				SchematicID: pool.Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:     pool.Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:  pool.Setting{Value: defaults.ImageFactoryURL, Field: "Input talos.imageFactoryURL"},
				Arch:        pool.Setting{Value: "amd64", Field: "Input image.arch"},
				URL:         "https://factory.talos.dev/image/" + defaults.TalosSchematicID + "/" + defaults.TalosVersion + "/openstack-amd64.raw.xz",
			},
		},
		"FactoryOverridesEachField": {
			reason: "factory fields override spec.talos, each on its own.",
			spec: v1alpha1.NodePoolSpec{
				Talos:     v1alpha1.Talos{Version: "v1.13.2"},
				PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{SchematicID: "abc", ImageFactoryURL: "http://mirror.local/"}}},
			},
			want: pool.Image{
				Source:      pool.SourceHTTP,
				SchematicID: pool.Setting{Value: "abc", Field: "spec.osImage.factory.schematicID"},
				Version:     pool.Setting{Value: "v1.13.2", Field: "spec.talos.version"},
				FactoryURL:  pool.Setting{Value: "http://mirror.local/", Field: "spec.osImage.factory.imageFactoryURL"},
				Arch:        pool.Setting{Value: "amd64", Field: "Input image.arch"},
				URL:         "http://mirror.local/image/abc/v1.13.2/openstack-amd64.raw.xz",
			},
		},
		"BuiltinLocatesGoldenInGoldenNamespace": {
			reason: "builtin: {} clones the golden for the default pair from the golden namespace.",
			spec:   v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}},
			want: pool.Image{
				Source:          pool.SourceClone,
				SchematicID:     pool.Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:         pool.Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:      pool.Setting{Value: defaults.ImageFactoryURL, Field: "Input talos.imageFactoryURL"},
				Arch:            pool.Setting{Value: "amd64", Field: "Input image.arch"},
				GoldenNamespace: defaults.GoldenNamespace,
				GoldenName:      goldenName,
			},
		},
		"BuiltinIgnoresBadFactoryURL": {
			reason: "A clone renders no HTTP source, so a malformed factory URL does not block it (the installer derivation checks it when it reads it).",
			spec: v1alpha1.NodePoolSpec{
				Talos:     v1alpha1.Talos{ImageFactoryURL: "not a url"},
				PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}},
			},
			want: pool.Image{
				Source:          pool.SourceClone,
				SchematicID:     pool.Setting{Value: defaults.TalosSchematicID, Field: "Input talos.schematicID"},
				Version:         pool.Setting{Value: defaults.TalosVersion, Field: "Input talos.version"},
				FactoryURL:      pool.Setting{Value: "not a url", Field: "spec.talos.imageFactoryURL"},
				Arch:            pool.Setting{Value: "amd64", Field: "Input image.arch"},
				GoldenNamespace: defaults.GoldenNamespace,
				GoldenName:      goldenName,
			},
		},
		"BadFactoryURLOnHTTPPathIsFatal": {
			reason:    "spec.talos.imageFactoryURL is validated on the HTTP path.",
			spec:      v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{ImageFactoryURL: "not a url"}},
			wantField: "spec.talos.imageFactoryURL",
		},
		"BothMembersIsFatal": {
			reason:    "builtin and factory together is refused.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}, Factory: &v1alpha1.FactoryImage{}}}},
			wantField: "spec.osImage",
		},
		"BadSchematicNamesFieldAndValue": {
			reason:    "An invalid schematic is fatal, naming the field it came from.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{SchematicID: "Bad/ID"}}}},
			wantField: "spec.osImage.builtin.schematicID",
		},
		"MinorOnlyVersionIsFatal": {
			reason:    "A minor-only Talos version has no Image Factory artifact.",
			spec:      v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{Version: "v1.13"}},
			wantField: "spec.talos.version",
		},
		"BadFactoryMemberURLIsFatal": {
			reason:    "The factory member's URL is validated.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Factory: &v1alpha1.FactoryImage{ImageFactoryURL: "https://x/$(id)"}}}},
			wantField: "spec.osImage.factory.imageFactoryURL",
		},
		"BadGoldenNamespaceIsFatal": {
			reason:    "The golden namespace must be a namespace name.",
			spec:      v1alpha1.NodePoolSpec{GoldenNamespace: "Cozy_Public", PoolShape: v1alpha1.PoolShape{OSImage: &v1alpha1.OSImage{Builtin: &v1alpha1.BuiltinImage{}}}},
			wantField: "spec.goldenNamespace",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if refusedAt(t, tc.reason, tc.spec, tc.wantField) {
				return
			}
			got := resolveOSImage(tc.spec, testConfig(t))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResolveShape(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	cases := map[string]struct {
		reason    string
		spec      v1alpha1.NodePoolSpec
		check     func(pool.Shape) any
		want      any
		wantField string // the field an invalid spec is refused at
	}{
		"DefaultsToInstanceTypeAndDiskSize": {
			reason: "Neither instanceType nor resources: the default instance type; diskSize defaults to 20Gi.",
			check:  func(s pool.Shape) any { return []string{s.InstanceType, s.DiskSize.String(), s.MachineVersion} },
			want:   []string{defaults.InstanceType, "20Gi", "v1.35.6"},
		},
		"KubernetesReleaseIsRefused": {
			reason:    "spec.version is a minor, for a pool as for a cluster and as the XRD says: Talos picks the patch.",
			spec:      v1alpha1.NodePoolSpec{Version: "v1.34.3"},
			wantField: "spec.version",
		},
		"ResourcesSizeTheVM": {
			reason: "resources give whole cores and guest memory.",
			spec:   v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "4", Memory: "8Gi"}}},
			check: func(s pool.Shape) any {
				return []string{s.InstanceType, resource.NewQuantity(int64(s.Cores), resource.DecimalSI).String(), s.Memory.String()}
			},
			want: []string{"", "4", "8Gi"},
		},
		"InstanceTypeAndResourcesIsFatal": {
			reason:    "KubeVirt takes the size from one place.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{InstanceType: "u1.large", Resources: &v1alpha1.Resources{Memory: "4Gi"}}},
			wantField: "spec.resources",
		},
		"FractionalCPUIsFatal": {
			reason:    "VM cores are whole.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "500m", Memory: "4Gi"}}},
			wantField: "spec.resources.cpu",
		},
		"NegativeReplicasIsFatal": {
			reason:    "Replicas cannot be negative.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Replicas: i32(-1)}},
			wantField: "spec.replicas",
		},
		"ThousandReplicasIsTheMost": {
			reason: "1000 workers is the largest pool accepted.",
			spec:   v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Replicas: i32(1000)}},
			check:  func(s pool.Shape) any { return s.Replicas },
			want:   int32(1000),
		},
		"MoreThanThousandReplicasIsFatal": {
			reason:    "A pool of more than 1000 workers is a typo more often than a fleet.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Replicas: i32(1001)}},
			wantField: "spec.replicas",
		},
		"BadDiskSizeIsFatal": {
			reason:    "diskSize must be a quantity.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{DiskSize: "twenty"}},
			wantField: "spec.diskSize",
		},
		"ZeroDiskSizeIsFatal": {
			reason:    "A disk must have a size.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{DiskSize: "0"}},
			wantField: "spec.diskSize",
		},
		"OnePebibyteDiskIsTheLargest": {
			reason: "1Pi is the largest worker disk accepted.",
			spec:   v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{DiskSize: "1Pi"}},
			check:  func(s pool.Shape) any { return s.DiskSize.String() },
			want:   "1Pi",
		},
		"AbsurdDiskSizeIsFatal": {
			reason:    "apimachinery writes 1000000000000000000000 back as 1; the size must be refused, not provisioned as another.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{DiskSize: "1000000000000000000000"}},
			wantField: "spec.diskSize",
		},
		"AbsurdMemoryIsFatal": {
			reason:    "Guest memory is bounded the same way as the disk.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Resources: &v1alpha1.Resources{Memory: "1e30"}}},
			wantField: "spec.resources.memory",
		},
		"NegativeMemoryIsFatal": {
			reason:    "Guest memory is positive.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Resources: &v1alpha1.Resources{Memory: "-4Gi"}}},
			wantField: "spec.resources.memory",
		},
		"AbsurdCPUIsFatal": {
			reason:    "1e30 cores overflows int64 to 0; it must be refused, not composed as a VM without cores.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{Resources: &v1alpha1.Resources{CPU: "1e30", Memory: "4Gi"}}},
			wantField: "spec.resources.cpu",
		},
		"UppercaseStorageClassIsFatal": {
			reason:    "A class name is a DNS-1123 subdomain; the message says what to write instead.",
			spec:      v1alpha1.NodePoolSpec{PoolShape: v1alpha1.PoolShape{StorageClass: "UPPER case"}},
			wantField: "spec.storageClass",
		},
		"EmptyVersionTakesTheInputDefault": {
			reason: "An XNodePool without spec.version (an XRD without a default) runs the Input's Kubernetes version.",
			check: func(s pool.Shape) any {
				return []string{s.KubernetesVersion.Value, s.KubernetesVersion.Field, s.MachineVersion}
			},
			want: []string{defaults.KubernetesVersion, "Input talos.kubernetesVersion", matrix.BuiltinReleases[defaults.KubernetesVersion]},
		},
		"BadKubernetesVersionIsFatal": {
			reason:    "version must be vX.Y.",
			spec:      v1alpha1.NodePoolSpec{Version: "1.35"},
			wantField: "spec.version",
		},
		"MirrorWithoutEndpointsIsFatal": {
			reason:    "A registry mirror needs an endpoint.",
			spec:      v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {}}}},
			wantField: "spec.talos.registryMirrors[docker.io].endpoints",
		},
		"MirrorEndpointMustBeURL": {
			reason:    "Mirror endpoints are http(s) URLs.",
			spec:      v1alpha1.NodePoolSpec{Talos: v1alpha1.Talos{RegistryMirrors: map[string]v1alpha1.RegistryMirror{"docker.io": {Endpoints: []string{"ftp://x"}}}}},
			wantField: "spec.talos.registryMirrors[docker.io].endpoints[0]",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if refusedAt(t, tc.reason, tc.spec, tc.wantField) {
				return
			}
			got := resolveShapeOf(t, tc.spec, testConfig(t))
			if diff := cmp.Diff(tc.want, tc.check(got)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckSupportMatrix(t *testing.T) {
	sh := func(k8s, talos string) pool.Shape {
		return pool.Shape{KubernetesVersion: pool.Setting{Value: k8s, Field: "spec.version"}, TalosVersion: pool.Setting{Value: talos, Field: "spec.talos.version"}}
	}
	img := func(v, field string) pool.Image { return pool.Image{Version: pool.Setting{Value: v, Field: field}} }
	cases := map[string]struct {
		reason  string
		shape   pool.Shape
		image   pool.Image
		want    compose.Condition
		wantErr string
	}{
		"SupportedPairing": {
			reason: "v1.13 supports v1.35.",
			shape:  sh("v1.35", "v1.13.6"), image: img("v1.13.6", "spec.talos.version"),
			want: compose.Condition{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: "Supported", Message: "Talos v1.13.6 supports Kubernetes v1.35."},
		},
		"UnsupportedViaTalosVersion": {
			reason: "Kubernetes v1.36 on Talos v1.12 is refused, pointing at talos.version.",
			shape:  sh("v1.36", "v1.12.1"), image: img("v1.12.1", "spec.talos.version"),
			wantErr: `XNodePool "tenant-a/demo-md0": spec.talos.version: Kubernetes v1.36 is not supported by Talos v1.12.1 (Talos v1.12 supports v1.30, v1.31, v1.32, v1.33, v1.34, v1.35). Change spec.version or set spec.talos.version to a Talos release that supports it.`,
		},
		"UnsupportedViaOverrideSaysSo": {
			reason: "talos.version is fine but the override is not: the message names the override.",
			shape:  sh("v1.36", "v1.13.6"), image: img("v1.11.2", "spec.osImage.factory.version"),
			wantErr: `XNodePool "tenant-a/demo-md0": spec.osImage.factory.version: Kubernetes v1.36 is not supported by Talos v1.11.2 (Talos v1.11 supports v1.29, v1.30, v1.31, v1.32, v1.33, v1.34). Node pool "tenant-a/demo-md0" reaches this Talos release through spec.osImage.factory.version, not through spec.talos.version. Change spec.version, change spec.osImage.factory.version, or drop the override so the pool follows spec.talos.version.`,
		},
		"PatchOfKubernetesIgnored": {
			reason: "A full Kubernetes release is checked by its minor.",
			shape:  sh("v1.35.2", "v1.13.6"), image: img("v1.13.6", "spec.talos.version"),
			want: compose.Condition{Type: matrix.ConditionType, Status: compose.StatusTrue, Reason: "Supported", Message: "Talos v1.13.6 supports Kubernetes v1.35.2."},
		},
		"UnknownMinorWarns": {
			reason: "A Talos minor without a row passes, reported.",
			shape:  sh("v1.35", "v1.14.0"), image: img("v1.14.0", "spec.talos.version"),
			want: compose.Condition{Type: matrix.ConditionType, Status: compose.StatusUnknown, Reason: "UnknownTalosMinor",
				Message: `Node pool "tenant-a/demo-md0": the support matrix has no row for spec.talos.version v1.14.0, so Kubernetes v1.35 is allowed unchecked. Add the Talos minor to the Input's supportMatrix to have it checked.`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := decide.CheckSupportMatrix(fxPoolID, matrix.FromConfig(testConfig(t)), tc.shape, tc.image)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func dv(phase cdiv1.DataVolumePhase, restarts int32, running corev1.ConditionStatus) *cdiv1.DataVolume {
	d := &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: phase, RestartCount: restarts}}
	if running != "" {
		d.Status.Conditions = []cdiv1.DataVolumeCondition{{Type: cdiv1.DataVolumeRunning, Status: running, Reason: "Error"}}
	}
	return d
}

var fxImage = pool.Image{
	Source: pool.SourceClone, SchematicID: pool.Setting{Value: "abc"}, Version: pool.Setting{Value: "v1.13.6"}, Arch: pool.Setting{Value: "amd64"},
	GoldenNamespace: "cozy-public", GoldenName: "talos-worker-abc-v1.13.6",
}

func TestGateOnGolden(t *testing.T) {
	reasonOf := func(h *decide.Hold) string {
		if h == nil {
			return ""
		}
		return h.Reason
	}
	claimNotValid := &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Conditions: []cdiv1.DataVolumeCondition{
		{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "ErrClaimNotValid", Message: "PVC spec is missing accessMode and no storageClass to choose profile"},
		{Type: cdiv1.DataVolumeReady, Status: corev1.ConditionFalse, Reason: "ErrClaimNotValid", Message: "PVC spec is missing accessMode and no storageClass to choose profile"},
	}}}
	stalledAt := func(progress string) *cdiv1.DataVolume {
		mark := stall.Mark{Fingerprint: stall.Fingerprint{Phase: string(cdiv1.ImportInProgress), Progress: "12.5%"}, After: 30 * time.Minute}
		return &cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{labels.AnnImportStalled: mark.String()}},
			Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, Progress: cdiv1.DataVolumeProgress(progress)}}
	}
	cases := map[string]struct {
		reason string
		// dv is the golden's DataVolume; nil with pvc false is a missing golden.
		dv     *cdiv1.DataVolume
		pvc    bool
		cloned bool
		want   string
	}{
		"ReadyOpens":                  {reason: "A ready golden opens the gate.", dv: dv(cdiv1.Succeeded, 0, "")},
		"PVCOnlyOpens":                {reason: "A PVC no DataVolume owns is a populated source.", pvc: true},
		"MissingHolds":                {reason: "A missing golden holds a pool that never cloned it.", want: decide.ReasonGoldenMissing},
		"ImportingHolds":              {reason: "An importing golden holds.", dv: dv(cdiv1.ImportInProgress, 0, ""), want: decide.ReasonGoldenImporting},
		"FailingHolds":                {reason: "A restart-looping golden holds.", dv: dv(cdiv1.ImportInProgress, 4, corev1.ConditionFalse), want: decide.ReasonGoldenFailing},
		"FailedHolds":                 {reason: "A failed golden holds.", dv: dv(cdiv1.Failed, 0, ""), want: decide.ReasonGoldenFailed},
		"PermanentErrorHoldsAsFailed": {reason: "ErrClaimNotValid with an empty phase never progresses: it is a failure, not an import.", dv: claimNotValid, want: decide.ReasonGoldenFailed},
		"ClonedPoolIgnoresMissing":    {reason: "A pool that cloned is never blocked by a missing golden.", cloned: true},
		"ClonedPoolIgnoresFailed":     {reason: "A pool that cloned is never blocked by a failed golden.", dv: dv(cdiv1.Failed, 0, ""), cloned: true},
		"ClonedPoolIgnoresImporting":  {reason: "A pool that cloned is not blocked by a re-import either.", dv: dv(cdiv1.ImportInProgress, 0, ""), cloned: true},
		"StalledGoldenHoldsAsStalled": {reason: "The catalog marked the golden stalled where it still is: the pool says so, not that no action is needed.", dv: stalledAt("12.5%"), want: decide.ReasonGoldenStalled},
		"StaleMarkHoldsAsImporting":   {reason: "A golden that moved past its mark imports again, whatever the catalog has not dropped yet.", dv: stalledAt("13.0%"), want: decide.ReasonGoldenImporting},
		"ClonedPoolIgnoresStalled":    {reason: "A pool that cloned is not blocked by its golden's later fate.", dv: stalledAt("12.5%"), cloned: true},
		"UnschedulableAfterRestartsHoldsAsImporting": {
			reason: "CDI's restart count never goes down (pkg/controller/util.go setAnnotationsFromPodWithPrefix 312-316): an Unschedulable importer pod after restarts waits for capacity, it is not a restart loop.",
			dv: &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportScheduled, RestartCount: 4, Conditions: []cdiv1.DataVolumeCondition{
				{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "Importer pod cannot be scheduled"}}}},
			want: decide.ReasonGoldenImporting,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var pvc *corev1.PersistentVolumeClaim
			if tc.pvc {
				pvc = &corev1.PersistentVolumeClaim{}
			}
			if diff := cmp.Diff(tc.want, reasonOf(decide.GateOnGolden(fxPoolID, fxImage, cdistate.Of(tc.dv, pvc), tc.dv, tc.cloned))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateMessagesNamePoolGoldenAndFix(t *testing.T) {
	got := decide.GateOnGolden(fxPoolID, fxImage, cdistate.Of(nil, nil), nil, false)
	want := &decide.Hold{Reason: decide.ReasonGoldenMissing, Message: `Node pool "tenant-a/demo-md0" clones golden image "cozy-public/talos-worker-abc-v1.13.6" (schematicID abc, version v1.13.6), which exists neither as a DataVolume nor as a PVC, so the new worker template is held back and the pool's existing resources are kept as they are. Add an entry for this schematicID and version to the XWorkerImageCatalog, or switch the pool to osImage.factory.`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the missing-golden message names the pool, the golden and the fix\n-want, +got:\n%s", diff)
	}
}

func TestGateMessagesSayWhatCDIWillDo(t *testing.T) {
	cases := map[string]struct {
		reason string
		dv     *cdiv1.DataVolume
		want   *decide.Hold
	}{
		"NotFoundSourceNeedsTheCatalogFixed": {
			reason: "A 404 repeats on every importer restart (pkg/importer/http-datasource.go createHTTPReader 403-406), so the hold does not lift by itself.",
			dv: &cdiv1.DataVolume{
				Spec: cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz"}}},
				Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 3, Conditions: []cdiv1.DataVolumeCondition{
					{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Error", Message: "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found"}}}},
			want: &decide.Hold{Reason: decide.ReasonGoldenFailing, Message: `Node pool "tenant-a/demo-md0" clones golden image "cozy-public/talos-worker-abc-v1.13.6", whose import keeps failing (phase ImportInProgress, 3 importer restarts, CDI says Error: "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found"), so the new worker template is held back and the pool's existing resources are kept as they are. The catalog's operator can fix it: https://factory.talos.dev serves no image at /image/abc/v1.13.6/openstack-amd64.raw.xz: check that this factory has schematicID abc and Talos v1.13.6 (an Enterprise or self-hosted factory serves only the schematics it stores, so the public default schematic may not exist there) and correct the schematicID or version of the XWorkerImageCatalog entry for schematicID abc, version v1.13.6, or point the imageFactoryURL of the XWorkerImageCatalog entry for schematicID abc, version v1.13.6 at a factory or mirror that serves it; the catalog re-creates a golden that never succeeded and that nothing clones once its import would be made otherwise, so the change applies without deleting anything by hand; or switch the pool to osImage.factory.`},
		},
		"StalledGoldenSaysWhereAndTheFix": {
			reason: "A golden the catalog found stalled (eight hours at 12.5%: a server that sends no headers holds CDI's importer without a timeout) is not an import that needs no action.",
			dv: &cdiv1.DataVolume{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{labels.AnnImportStalled: `{"phase":"ImportInProgress","progress":"12.5%","after":"30m0s"}`}},
				Spec:       cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz"}}},
				Status:     cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, Progress: "12.5%"}},
			want: &decide.Hold{Reason: decide.ReasonGoldenStalled, Message: `Node pool "tenant-a/demo-md0" clones golden image "cozy-public/talos-worker-abc-v1.13.6", whose import has not moved for at least 30m (the catalog's polling.stallAfter.imports; phase ImportInProgress, 12.5%, 0 importer restarts), so the new worker template is held back and the pool's existing resources are kept as they are. The catalog's operator can fix it: CDI's importer is waiting on https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz, which accepted the connection but sends nothing: the importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check that it serves the image (kubectl -n cozy-public logs -l app=containerized-data-importer), then delete the importer pod so CDI starts a new attempt; or point the imageFactoryURL of the XWorkerImageCatalog entry for schematicID abc, version v1.13.6 (or the catalog's spec.imageFactoryURL) at a mirror that answers: the catalog re-creates a golden that never succeeded and that nothing clones once its import would be made otherwise, so the change applies without deleting anything by hand; or switch the pool to osImage.factory.`},
		},
		"NamedClassNotYetCreatedSaysWhatCDIAwaits": {
			reason: "datavolume/controller-base.go 314-336: CDI creates the PVC once the named class appears.",
			dv: &cdiv1.DataVolume{
				Spec: cdiv1.DataVolumeSpec{Storage: &cdiv1.StorageSpec{StorageClassName: ptr.To("fast")}},
				Status: cdiv1.DataVolumeStatus{Conditions: []cdiv1.DataVolumeCondition{
					{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "ErrClaimNotValid", Message: "PVC spec is missing accessMode and no storageClass to choose profile"}}}},
			want: &decide.Hold{Reason: decide.ReasonGoldenImporting, Message: `Node pool "tenant-a/demo-md0" clones golden image "cozy-public/talos-worker-abc-v1.13.6", which CDI has not started importing (phase <none>, CDI says ErrClaimNotValid: "PVC spec is missing accessMode and no storageClass to choose profile"): CDI waits for StorageClass "fast", named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does. The new worker template is held back until the golden is Succeeded and the pool's existing resources are kept as they are; if that StorageClass is not on its way, correct the golden's storageClass in the XWorkerImageCatalog.`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decide.GateOnGolden(fxPoolID, fxImage, cdistate.Of(tc.dv, nil), tc.dv, false)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPoolClone(t *testing.T) {
	gh := labels.GoldenHash(fxImage.GoldenNamespace, fxImage.GoldenName)
	mk := func(name, poolHash, golden string, phase cdiv1.DataVolumePhase) cdiv1.DataVolume {
		return cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labels.Pool: poolHash, labels.Golden: golden}}, Status: cdiv1.DataVolumeStatus{Phase: phase}}
	}
	cases := map[string]struct {
		reason string
		dvs    []cdiv1.DataVolume
		want   string
	}{
		"NoDisks":              {reason: "No disks, no clone."},
		"SucceededCloneCounts": {reason: "A Succeeded disk of this pool and golden counts.", dvs: []cdiv1.DataVolume{mk("a", fxPoolHash, gh, cdiv1.Succeeded)}, want: "a"},
		"InProgressDoesNot":    {reason: "A clone still in progress does not count.", dvs: []cdiv1.DataVolume{mk("a", fxPoolHash, gh, cdiv1.CloneInProgress)}},
		"OtherGoldenDoesNot":   {reason: "A disk cloned from another golden does not count.", dvs: []cdiv1.DataVolume{mk("a", fxPoolHash, "other", cdiv1.Succeeded)}},
		"OtherPoolDoesNot":     {reason: "A sibling pool's disk does not count.", dvs: []cdiv1.DataVolume{mk("a", "sibling", gh, cdiv1.Succeeded)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if c := decide.PoolClone(fxPoolID, fxImage, tc.dvs); c != nil {
				got = c.Name
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestClonedByMachineSets(t *testing.T) {
	// The pool's composed clone template of the fixture golden, and one of
	// another golden.
	ofGolden := composeOnce(t, map[string]any{"osImage": builtin()}, succeeded, nil)
	kmt, tct := names(t, map[string]any{"osImage": builtin()}, succeeded)
	other := ofGolden[read.MachineTemplateResource(kmt)].Resource.DeepCopy()
	other.SetAnnotations(map[string]string{labels.AnnSourceType: string(pool.SourceClone), labels.AnnGolden: "cozy-public/another-golden"})
	other.SetName("demo-md0-other")
	ofGolden[read.MachineTemplateResource("demo-md0-other")] = fnresource.ObservedComposed{Resource: other}
	obs := read.ReadComposed(ofGolden, "")
	ms := func(name, kmt string, ready int64) clusterv1.MachineSet {
		set, err := read.Templates.ReadMachineSet(readyMachineSet(name, kmt, tct, ready), "")
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	cases := map[string]struct {
		reason string
		sets   []clusterv1.MachineSet
		want   bool
	}{
		"NoMachineSets":          {reason: "No MachineSet, no clone."},
		"ReadyMachineCounts":     {reason: "A ready Machine of a MachineSet on a clone template of this golden booted from a finished clone.", sets: []clusterv1.MachineSet{ms("a", kmt, 1)}, want: true},
		"NoReadyMachineDoesNot":  {reason: "A MachineSet whose Machines are not ready yet proves nothing: KubeVirt starts a VM only once its disks are ready, not the other way round.", sets: []clusterv1.MachineSet{ms("a", kmt, 0)}},
		"OtherGoldenDoesNot":     {reason: "Machines booted from another golden's clones do not count.", sets: []clusterv1.MachineSet{ms("a", "demo-md0-other", 3)}},
		"UncomposedTemplateNot":  {reason: "A template the pool does not compose (a sibling's, or one already retired) says nothing of this golden.", sets: []clusterv1.MachineSet{ms("a", "sibling-template", 3)}},
		"AnyOfSeveralMachineSet": {reason: "One ready MachineSet among several is enough.", sets: []clusterv1.MachineSet{ms("a", "demo-md0-other", 2), ms("b", kmt, 1)}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			img := pool.Image{Source: pool.SourceClone, GoldenNamespace: defaults.GoldenNamespace, GoldenName: fxGolden}
			if diff := cmp.Diff(tc.want, obs.ClonedByMachineSets(img, tc.sets)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestStorageClassResolution(t *testing.T) {
	sc := func(s string) *string { return &s }
	def := storageclass.Choice{Name: "today", Annotation: storageclass.AnnVirtDefault}
	clone := &cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: "disk"}}
	pvcs := []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Namespace: fxNamespace, Name: "disk"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: sc("frozen")}}}
	cases := map[string]struct {
		reason string
		got    pool.Class
		want   pool.Class
	}{
		"PoolKnownClassWins": {
			reason: "A class known without reading the cluster (declared, or the one the pool runs on) is the pool's, even over its disks.",
			got:    decide.PoolClassOf(&pool.Class{Name: "declared", From: "spec.storageClass"}, clone, pvcs, def),
			want:   pool.Class{Name: "declared", From: "spec.storageClass"},
		},
		"PoolFrozenOnClonedDiskClass": {
			reason: "A pool that cloned stays on its disk's class when the default moves.",
			got:    decide.PoolClassOf(nil, clone, pvcs, def),
			want:   pool.Class{Name: "frozen", From: "the pool's cloned disk tenant-a/disk"},
		},
		"PoolWithoutDiskUsesTodaysDefault": {
			reason: "A pool with no class of its own and no disk yet lands on today's default.",
			got:    decide.PoolClassOf(nil, nil, nil, def),
			want:   pool.Class{Name: "today", From: "today's default StorageClass (storageclass.kubevirt.io/is-default-virt-class)", Default: true},
		},
		"NoDefaultNoClass": {
			reason: "With no default there is no class to write.",
			got:    decide.PoolClassOf(nil, nil, nil, storageclass.Choice{}),
			want:   pool.Class{},
		},
		"GoldenDeclaredWinsOverPVC": {
			reason: "The golden DataVolume's declared class wins over its PVC.",
			got:    decide.GoldenClassOf(&cdiv1.DataVolume{Spec: cdiv1.DataVolumeSpec{Storage: &cdiv1.StorageSpec{StorageClassName: sc("spec")}}}, &pvcs[0], def),
			want:   pool.Class{Name: "spec", From: "the golden DataVolume's spec"},
		},
		"GoldenPVCWhenUndeclared": {
			reason: "An undeclared golden is on its PVC's class.",
			got:    decide.GoldenClassOf(&cdiv1.DataVolume{}, &pvcs[0], def),
			want:   pool.Class{Name: "frozen", From: "the golden's PVC"},
		},
		"GoldenDefaultWhenNothingSays": {
			reason: "Without spec or PVC class, the golden is on today's default.",
			got:    decide.GoldenClassOf(&cdiv1.DataVolume{}, nil, def),
			want:   pool.Class{Name: "today", From: "today's default StorageClass (storageclass.kubevirt.io/is-default-virt-class)", Default: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateOnStorageClass(t *testing.T) {
	cases := map[string]struct {
		reason     string
		pool, gold pool.Class
		wantHeld   bool
	}{
		"SameClassOpens":     {reason: "Same class, CSI clone possible.", pool: pool.Class{Name: "a"}, gold: pool.Class{Name: "a"}},
		"EmptyPoolSkips":     {reason: "Nothing to compare when the pool resolves to no class.", gold: pool.Class{Name: "a"}},
		"EmptyGoldenSkips":   {reason: "Nothing to compare when the golden resolves to no class.", pool: pool.Class{Name: "a"}},
		"DifferentClassHold": {reason: "Different classes hold.", pool: pool.Class{Name: "a"}, gold: pool.Class{Name: "b"}, wantHeld: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide.GateOnStorageClass(fxPoolID, fxImage, tc.pool, tc.gold)
			if diff := cmp.Diff(tc.wantHeld, got != nil); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGateOnSize(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	cases := map[string]struct {
		reason string
		disk   string
		golden *resource.Quantity
		want   *decide.Hold
	}{
		"UnknownGoldenSizeSkips": {reason: "No stated golden size, no check.", disk: "1Gi"},
		"EqualPasses":            {reason: "Equal sizes pass.", disk: "6Gi", golden: q("6Gi")},
		"UnitsCompareByValue":    {reason: "Quantities compare by value across units.", disk: "6144Mi", golden: q("6Gi")},
		"SmallerHolds": {
			reason: "A smaller disk holds, giving the minimum.", disk: "5Gi", golden: q("6Gi"),
			want: &decide.Hold{Reason: decide.ReasonDiskTooSmall, Message: `Node pool "tenant-a/demo-md0": spec.diskSize 5Gi is smaller than golden image "cozy-public/talos-worker-abc-v1.13.6" storage 6Gi; a CDI clone target must be at least the source size, so the new worker template is held back. Raise spec.diskSize to 6Gi or larger.`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide.GateOnSize(fxPoolID, fxImage, resource.MustParse(tc.disk), tc.golden)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCloneHealth(t *testing.T) {
	copyDV := func(cloneType string) []cdiv1.DataVolume {
		return []cdiv1.DataVolume{{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{labels.AnnCDICloneType: cloneType}}}}
	}
	workersRead := read.Reads{Workers: true}
	cases := map[string]struct {
		reason string
		dvs    []cdiv1.DataVolume
		reads  *read.Reads
		want   string
	}{
		"HealthyDisks": {reason: "No problem, healthy.", want: "True/NoCloneProblems"},
		"SettledAndHealthyNotRead": {
			reason: "A settled pool whose disks were healthy is reported healthy without reading them.",
			reads:  &read.Reads{}, want: "True/NoCloneProblems",
		},
		"TooManyDisksUnknown": {
			reason: "A pool with more disks than one call can read reports Unknown, never a guess.",
			reads:  &read.Reads{TooManyWorkers: true, WorkerDisks: 900}, want: "Unknown/TooManyWorkerDisks",
		},
		"ConditionCloneWithoutSource": {
			reason: "CDI sets CloneWithoutSource as the reason of Bound and Ready, the phase unchanged; it is reported.",
			dvs: []cdiv1.DataVolume{{ObjectMeta: metav1.ObjectMeta{Name: "d"}, Status: cdiv1.DataVolumeStatus{Phase: cdiv1.Pending, Conditions: []cdiv1.DataVolumeCondition{
				{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "CloneWithoutSource"},
				{Type: cdiv1.DataVolumeReady, Status: corev1.ConditionFalse, Reason: "CloneWithoutSource"},
			}}}},
			want: "False/CloneWithoutSource",
		},
		"CloneTypeCopy": {
			reason: "cloneType copy, which CDI copies from the claim onto the DataVolume, is a host-assisted copy, whatever the fallback reason.",
			dvs:    copyDV("copy"),
			want:   "False/HostAssistedClone",
		},
		"CSICloneIsHealthy": {
			reason: "cloneType csi-clone is the intended path.",
			dvs:    copyDV("csi-clone"),
			want:   "True/NoCloneProblems",
		},
		"SnapshotIsHealthy": {
			reason: "cloneType snapshot is a storage-layer clone too.",
			dvs:    copyDV("snapshot"),
			want:   "True/NoCloneProblems",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rd := workersRead
			if tc.reads != nil {
				rd = *tc.reads
			}
			c := decide.CloneHealth(fxPoolID, fxImage, tc.dvs, nil, rd, 256, fxStallBounds, nil)
			if diff := cmp.Diff(tc.want, string(c.Status)+"/"+c.Reason); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRequirements(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   []string
	}{
		"HTTPPoolReadsDisksAndMachineSets": {
			reason: "An HTTP pool needs no golden and no StorageClasses; its (default) instance type sizes the kubelet reservations. A pool that composes no MachineDeployment yet asks whether one of its name exists, to adopt it.",
			want:   []string{read.ReqExistingDeployment, read.ReqInstancetype, read.ReqMachineSets, read.ReqWorkerDVs},
		},
		"PoolSizedByResourcesReadsNoInstanceType": {
			reason: "A pool sized by resources computes its reservations from them.",
			spec:   map[string]any{"resources": map[string]any{"cpu": "2", "memory": "8Gi"}},
			want:   []string{read.ReqExistingDeployment, read.ReqMachineSets, read.ReqWorkerDVs},
		},
		"ClonePoolAlsoReadsGoldenClassesAndCloneRBAC": {
			reason: "A new clone pool reads the golden and its VolumeSnapshot (snapshot goldens) by name, every StorageClass, what CDI's clone planner decides from (StorageProfiles, VolumeSnapshotClasses, the CDI resource, CDIConfig), the catalogs' clone RBAC by label, its disks and their claims of this golden (whether it already cloned, and on which class), CDI's claims of the golden's running clones (the clone budget) and the published CSIStorageCapacity (the capacity prediction).",
			spec:   map[string]any{"osImage": builtin()},
			want:   []string{read.ReqCDI, read.ReqCDIConfig, read.ReqCloneBindings, read.ReqCloneClaims, read.ReqCloneRoles, read.ReqStorageCapacities, read.ReqExistingDeployment, read.ReqGoldenDataVolume, read.ReqGoldenPVC, read.ReqGoldenSnapshot, read.ReqInstancetype, read.ReqMachineSets, read.ReqSnapshotClasses, read.ReqStorageClasses, read.ReqStorageProfiles, read.ReqWorkerDVs, read.ReqWorkerPVCs},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := composetest.Run(Mode{}, request(t, nodePoolXR(tc.spec), worldFixture{}, nil))
			sel, err := res.Requirements, res.Err
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Keys(sel))
			want := append([]string(nil), tc.want...)
			sortStrings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if g := sel[read.ReqGoldenDataVolume]; g != nil && (g.GetNamespace() != defaults.GoldenNamespace || g.GetMatchName() == "") {
				t.Errorf("%s: the golden is read by name in the golden namespace, got %v", tc.reason, g)
			}
			if b := sel[read.ReqCloneBindings]; b != nil && (b.GetNamespace() != defaults.GoldenNamespace || b.GetMatchLabels().GetLabels()[labels.CloneRBAC] != "true") {
				t.Errorf("%s: the clone RoleBindings are read by label in the golden namespace, got %v", tc.reason, b)
			}
			if d := sel[read.ReqWorkerDVs]; d.GetNamespace() != fxNamespace || d.GetMatchLabels().GetLabels()[labels.Pool] != fxPoolHash {
				t.Errorf("%s: worker disks are read by pool label in the pool namespace, got %v", tc.reason, d)
			}
		})
	}
}

// An invalid spec is fatal from the first call, with the message Compose
// gives: asking for a golden named after invalid values would ask for
// nothing, and both calls read the spec through the same edge.
func TestRequirementsOfAnInvalidSpecIsFatalAsCompose(t *testing.T) {
	xr := nodePoolXR(map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "bad"}}})
	r := request(t, xr, worldFixture{}, nil)
	c := Mode{}.Prepare(r.Request)
	_, err := c.Requirements()
	out := c.Compose(r.Required, r.Raw)
	if err == nil || out.Fatal == nil || err.Error() != out.Fatal.Error() {
		t.Errorf("Requirements and Compose refuse the spec alike:\nRequirements: %v\nCompose:      %v", err, out.Fatal)
	}
}

func TestRequirementsWithoutNamespaceIsFatal(t *testing.T) {
	xr := nodePoolXR(nil)
	xr.SetNamespace("")
	err := composetest.Run(Mode{}, request(t, xr, worldFixture{}, nil)).Err
	want := `XNodePool "demo-md0": metadata.namespace: Required value: an XNodePool has no namespace and no crossplane.io/claim-namespace label; create it in the tenant namespace (or through a claim) so its MachineDeployment and templates have a namespace to live in`
	if diff := cmp.Diff(want, errString(err)); diff != "" {
		t.Errorf("a pool with nowhere to live cannot be composed\n-want, +got:\n%s", diff)
	}
}

// refusedAt validates spec as readPool does (the pool's own rules) and
// checks it is refused at wantField, or accepted when wantField is empty. It
// reports whether the spec was refused.
func refusedAt(t *testing.T, reason string, spec v1alpha1.NodePoolSpec, wantField string) bool {
	t.Helper()
	spec.ClusterName = fxPoolID.Cluster
	_, errs := poolspec.NodePool(field.NewPath("spec"), spec, fxPoolID.Name, testConfig(t))
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	switch {
	case wantField == "" && len(errs) > 0:
		t.Fatalf("%s\nrefused: %v", reason, errs)
	case wantField != "" && !slices.Contains(got, wantField):
		t.Fatalf("%s\nwant it refused at %s, got %v", reason, wantField, errs)
	}
	return len(errs) > 0
}
