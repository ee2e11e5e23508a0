package config

import (
	"fmt"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/defaults"
)

func TestFromInput(t *testing.T) {
	base := Config{
		GoldenNamespace:     defaults.GoldenNamespace,
		Platform:            "openstack",
		Arch:                "amd64",
		TalosVersion:        defaults.TalosVersion,
		SchematicID:         defaults.TalosSchematicID,
		ImageFactoryURL:     defaults.ImageFactoryURL,
		KubernetesVersion:   defaults.KubernetesVersion,
		GoldenStorage:       resource.MustParse("6Gi"),
		MinimumImageStorage: resource.MustParse("1246Mi"),
		DiskSize:            resource.MustParse("20Gi"),
		CloneRBACScope:      v1beta1.CloneRBACPinningNamespaces,
		VMServiceAccount:    "default",
		WaitForCloneGrant:   true,
		Usages:              true,
		ReadSnapshotClasses: true,
		SnapshotGoldens:     true,
		MaxWorkerDisks:      256,
		CloneBudget:         CloneBudget{Default: 10, LeakedClaimAfter: 10 * time.Minute},
		SteadyTTL:           time.Minute,
		InProgressTTL:       15 * time.Second,
		Stall:               StallBounds{Imports: 30 * time.Minute, Clones: 20 * time.Minute},
		ClusterAPIVersion:   v1beta1.ClusterAPIV1Beta1,
		Join: Join{
			TalosSecretsSuffix: "-talos-secrets", TalosCASuffix: "-talos-ca", KubernetesCASuffix: "-ca",
			DNSServiceNamespace: "kube-system", DNSServiceName: "kube-dns",
			ManagementClusterDomain: "cozy.local", ClusterDomain: "cluster.local",
			PodSubnet: "10.243.0.0/16", ServiceSubnet: "10.95.0.0/16",
			ControlPlaneAPIVersion: "controlplane.cluster.x-k8s.io/v1alpha1", ControlPlaneKind: "KamajiControlPlane",
		},
	}
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	cases := map[string]struct {
		reason  string
		in      v1beta1.Input
		want    Config
		wantErr string
	}{
		"EmptyInputTakesEveryDefault": {reason: "Crossplane never defaults an Input, so the function does.", want: base},
		"InputOverridesDefaults": {
			reason: "Every Input field replaces its default.",
			in: v1beta1.Input{Mode: v1beta1.ModeNodePool, GoldenNamespace: "images", Image: v1beta1.ImageOptions{Platform: "metal", Arch: "arm64"},
				Storage:        v1beta1.StorageOptions{DiskSize: "40Gi"},
				CloneRBAC:      v1beta1.CloneRBACOptions{Scope: v1beta1.CloneRBACAllServiceAccounts, ServiceAccountName: "vm", WaitForGrant: ptr.To(false)},
				Usages:         v1beta1.UsageOptions{Enabled: ptr.To(false)},
				ClonePreflight: v1beta1.ClonePreflightOptions{AllowHostAssistedCopy: true},
				Polling:        v1beta1.PollingOptions{InProgress: &metav1.Duration{Duration: 5 * time.Second}},
				ClusterAPI:     v1beta1.ClusterAPIOptions{Version: v1beta1.ClusterAPIV1Beta2},
				SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{
					{Talos: "v1.15", MinKubernetes: "v1.33", MaxKubernetes: "v1.38"}, {Talos: "v1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.37"}},
					KubernetesReleases: []v1beta1.KubernetesRelease{{Minor: "v1.35", Release: "v1.35.7"}}},
				Join: v1beta1.JoinOptions{APIServerServiceSuffix: ptr.To("-apiserver"), ClusterDomain: "tenant.local"}},
			want: with(func(c *Config) {
				c.Mode, c.GoldenNamespace, c.Platform, c.Arch = v1beta1.ModeNodePool, "images", "metal", "arm64"
				c.DiskSize = resource.MustParse("40Gi")
				c.CloneRBACScope = v1beta1.CloneRBACAllServiceAccounts
				c.VMServiceAccount, c.WaitForCloneGrant, c.Usages, c.AllowHostAssistedCopy = "vm", false, false, true
				c.InProgressTTL = 5 * time.Second
				c.ClusterAPIVersion = v1beta1.ClusterAPIV1Beta2
				c.MatrixEntries = []MatrixEntry{{"v1.14", "v1.32", "v1.37"}, {"v1.15", "v1.33", "v1.38"}}
				c.KubernetesReleases = map[string]string{"v1.35": "v1.35.7"}
				c.Join.APIServerServiceSuffix, c.Join.ClusterDomain = "-apiserver", "tenant.local"
				// As written: what the pools ask for, no default in it.
				c.Requested = Requested{GoldenNamespace: "images", Image: v1beta1.ImageOptions{Platform: "metal", Arch: "arm64"}, DiskSize: "40Gi",
					Join: v1beta1.JoinOptions{APIServerServiceSuffix: ptr.To("-apiserver"), ClusterDomain: "tenant.local"}}
			}),
		},
		"TemplateRevisionIsRequested": {reason: "The Input's templateRevision is part of every pool's request.", in: v1beta1.Input{TemplateRevision: 2},
			want: with(func(c *Config) { c.Requested.TemplateRevision = 2 })},
		"NegativeTemplateRevisionIsRefused": {reason: "A counter is never negative.", in: v1beta1.Input{TemplateRevision: -1},
			wantErr: `input: templateRevision: Invalid value: -1: is not a revision between 0 and 1000000000; bump it by one to render the templates with the running release of the function`},
		"UnknownClusterAPIVersionIsRefused": {reason: "A contract the function cannot write is refused, not written as v1beta1.", in: v1beta1.Input{ClusterAPI: v1beta1.ClusterAPIOptions{Version: "v1"}}, wantErr: `input: clusterAPI.version: Unsupported value: "v1": supported values: "v1beta1", "v1beta2"`},
		"UnknownModeIsRefused":              {reason: "A typo in mode must not silently fall back.", in: v1beta1.Input{Mode: "Pool"}, wantErr: `input: mode: Invalid value: "Pool": is not one of Catalog, TenantCluster or NodePool; omit it to infer the mode from the composite's kind`},
		"BadNamespaceIsRefused":             {reason: "The golden namespace is a namespace name.", in: v1beta1.Input{GoldenNamespace: "cozy public"}, wantErr: `input: goldenNamespace: Invalid value: "cozy public": is not a namespace name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); set the namespace of the golden DataVolumes, or omit it for cozy-public`},
		"BadTalosVersionIsRefused":          {reason: "Defaults are validated like user values.", in: v1beta1.Input{Talos: v1beta1.TalosDefaults{Version: "latest"}}, wantErr: `input: talos.version: Invalid value: "latest": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"BadServiceAccountIsRefused": {reason: "The VM service account is bound by name; an invalid name would bind nobody.", in: v1beta1.Input{CloneRBAC: v1beta1.CloneRBACOptions{ServiceAccountName: "VM SA"}},
			wantErr: `input: cloneRBAC.serviceAccountName: Invalid value: "VM SA": is not a ServiceAccount name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name the account the worker VMs run as (default "default")`},
		"KubernetesVersionWithJunkSuffixIsRefused": {reason: "A junk suffix once passed a prefix check here and broke every pool the tenant cluster composed; the one Kubernetes-version rule refuses it.", in: v1beta1.Input{Talos: v1beta1.TalosDefaults{KubernetesVersion: "v1.35junk"}},
			wantErr: `input: talos.kubernetesVersion: Invalid value: "v1.35junk": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"KubernetesVersionWithLeadingZeroIsRefused": {reason: "v1.035 is not how Kubernetes names a minor.", in: v1beta1.Input{Talos: v1beta1.TalosDefaults{KubernetesVersion: "v1.035"}},
			wantErr: `input: talos.kubernetesVersion: Invalid value: "v1.035": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"SnapshotGoldensOff": {reason: "snapshotGoldens.enabled: false keeps every golden a PVC only.", in: v1beta1.Input{SnapshotGoldens: v1beta1.SnapshotGoldenOptions{Enabled: ptr.To(false)}},
			want: with(func(c *Config) { c.SnapshotGoldens = false })},
		"NoSnapshotAPITurnsSnapshotGoldensOff": {reason: "Without the snapshot API the default turns off with it, rather than requiring a kind the cluster lacks.", in: v1beta1.Input{ClonePreflight: v1beta1.ClonePreflightOptions{ReadVolumeSnapshotClasses: ptr.To(false)}},
			want: with(func(c *Config) { c.ReadSnapshotClasses, c.SnapshotGoldens = false, false })},
		"SnapshotGoldensWithoutTheSnapshotAPIAreRefused": {reason: "Asking for both is a contradiction, named with both fields.", in: v1beta1.Input{SnapshotGoldens: v1beta1.SnapshotGoldenOptions{Enabled: ptr.To(true)}, ClonePreflight: v1beta1.ClonePreflightOptions{ReadVolumeSnapshotClasses: ptr.To(false)}},
			wantErr: `input: snapshotGoldens.enabled: Invalid value: true: needs the snapshot.storage.k8s.io API, which clonePreflight.readVolumeSnapshotClasses: false says the cluster does not serve; set one of them to the other's value`},
		"MaxWorkerDisksOverride": {reason: "cloneHealth.maxWorkerDisks replaces the default; 0 turns the disk reads off.", in: v1beta1.Input{CloneHealth: v1beta1.CloneHealthOptions{MaxWorkerDisks: ptr.To[int32](0)}}, want: with(func(c *Config) { c.MaxWorkerDisks = 0 })},
		"CloneBudgetPerClass": {reason: "cloneBudget.storageClasses overrides the default per class; 0 is unbounded.", in: v1beta1.Input{CloneBudget: v1beta1.CloneBudgetOptions{Default: ptr.To[int32](0), StorageClasses: map[string]int32{"replicated": 5}}},
			want: with(func(c *Config) {
				c.CloneBudget = CloneBudget{Classes: map[string]int32{"replicated": 5}, LeakedClaimAfter: 10 * time.Minute}
			})},
		"LeakedClaimAfter": {reason: "cloneBudget.leakedClaimAfter replaces the 10m a clone's claim may stay Pending, Lost or terminating.", in: v1beta1.Input{CloneBudget: v1beta1.CloneBudgetOptions{LeakedClaimAfter: &metav1.Duration{Duration: 30 * time.Minute}}},
			want: with(func(c *Config) { c.CloneBudget.LeakedClaimAfter = 30 * time.Minute })},
		"LeakedClaimAfterBelowAMinuteIsRefused": {reason: "A bound near the seconds a running clone's claim is Pending or Lost would stop counting clones that run.", in: v1beta1.Input{CloneBudget: v1beta1.CloneBudgetOptions{LeakedClaimAfter: &metav1.Duration{Duration: 30 * time.Second}}},
			wantErr: `input: cloneBudget.leakedClaimAfter: Invalid value: "30s": must be at least 1m0s: a claim CDI runs a clone through is Pending or Lost for seconds while the clone runs, and one that stays so longer is no longer counted against the budget (default 10m0s)`},
		"NegativeCloneBudgetIsRefused": {reason: "A budget is a count, named with its class.", in: v1beta1.Input{CloneBudget: v1beta1.CloneBudgetOptions{StorageClasses: map[string]int32{"replicated": -1}}},
			wantErr: `input: cloneBudget.storageClasses[replicated]: Invalid value: -1: must be from 0 (unbounded) to 10000: it is how many worker disks of one golden may clone at once onto a StorageClass (default 10)`},
		"CloneBudgetOfNoClassIsRefused": {reason: "A key that is no StorageClass name would never match.", in: v1beta1.Input{CloneBudget: v1beta1.CloneBudgetOptions{StorageClasses: map[string]int32{"Fast SSD": 3}}},
			wantErr: `input: cloneBudget.storageClasses[Fast SSD]: Invalid value: "Fast SSD": is not a StorageClass name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		"HostAssistedCopyClassesPerClass": {reason: "clonePreflight.hostAssistedCopy.storageClasses lists the classes whose pools copy from a golden on another class, kept sorted.", in: v1beta1.Input{ClonePreflight: v1beta1.ClonePreflightOptions{HostAssistedCopy: v1beta1.HostAssistedCopyOptions{StorageClasses: []string{"local", "lvm"}}}},
			want: with(func(c *Config) { c.HostAssistedCopyClasses = []string{"local", "lvm"} })},
		"HostAssistedCopyOfNoClassIsRefused": {reason: "An entry that is no StorageClass name would never match a pool.", in: v1beta1.Input{ClonePreflight: v1beta1.ClonePreflightOptions{HostAssistedCopy: v1beta1.HostAssistedCopyOptions{StorageClasses: []string{"Local SSD"}}}},
			wantErr: `input: clonePreflight.hostAssistedCopy.storageClasses[0]: Invalid value: "Local SSD": is not a StorageClass name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		"HostAssistedCopyClassListedTwiceIsRefused": {reason: "The list is a set; a class written twice is a typo to point at.", in: v1beta1.Input{ClonePreflight: v1beta1.ClonePreflightOptions{HostAssistedCopy: v1beta1.HostAssistedCopyOptions{StorageClasses: []string{"local", "local"}}}},
			wantErr: `input: clonePreflight.hostAssistedCopy.storageClasses[1]: Invalid value: "local": is listed twice (also clonePreflight.hostAssistedCopy.storageClasses[0]); list each class once`},
		"NegativeMaxWorkerDisksIsRefused": {reason: "A negative bound is refused, naming the field and the default.", in: v1beta1.Input{CloneHealth: v1beta1.CloneHealthOptions{MaxWorkerDisks: ptr.To[int32](-1)}},
			wantErr: `input: cloneHealth.maxWorkerDisks: Invalid value: -1: must be from 0 to 10000; it is how many worker disks a pool reads for its CloneHealthy condition (default 256, about what fits in the 4 MiB default --max-recv-message-size with room to spare)`},
		"ZeroDiskSizeIsRefused": {reason: "A disk must have a size.", in: v1beta1.Input{Storage: v1beta1.StorageOptions{DiskSize: "0"}}, wantErr: `input: storage.diskSize: Invalid value: "0": is not a positive quantity such as 20Gi`},
		"AbsurdSizeIsRefused":   {reason: "A size apimachinery would render as another size must not reach a disk.", in: v1beta1.Input{Storage: v1beta1.StorageOptions{GoldenStorage: "1000000000000000000000"}}, wantErr: `input: storage.goldenStorage: Invalid value: "1000000000000000000000": is larger than 1Pi, the largest size accepted; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as 6Gi`},
		"TinyTTLIsRefused":      {reason: "A sub-second TTL would hammer the API server.", in: v1beta1.Input{Polling: v1beta1.PollingOptions{Steady: &metav1.Duration{Duration: time.Millisecond}}}, wantErr: `input: polling.steady: Invalid value: "1ms": must be at least 1s; it is how long Crossplane waits before calling the function again`},
		"DuplicateMatrixRowIsRefused": {reason: "Two rows for one Talos minor are ambiguous.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{
			{Talos: "v1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.37"}, {Talos: "v1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.36"}}}},
			wantErr: `input: supportMatrix.entries[1].talos: Invalid value: "v1.14": is listed twice (also supportMatrix.entries[0]); keep one row per Talos minor`},
		"MatrixRowWithPatchIsRefused":   {reason: "A row naming a patch would never match a minor.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{{Talos: "v1.14.0", MinKubernetes: "v1.32", MaxKubernetes: "v1.37"}}}}, wantErr: `input: supportMatrix.entries[0].talos: Invalid value: "v1.14.0": is not a Talos minor such as v1.13; a support-matrix row names a minor, without patch, suffix or leading zeros`},
		"MatrixRowMinAboveMaxIsRefused": {reason: "A row whose min is above its max matches nothing.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{{Talos: "v1.14", MinKubernetes: "v1.37", MaxKubernetes: "v1.32"}}}}, wantErr: `input: supportMatrix.entries[0].minKubernetes: Invalid value: "v1.37": is above maxKubernetes v1.32, so the row matches no Kubernetes minor; swap them`},
		"MatrixRowWithSuffixIsRefused":  {reason: "A suffix never matches.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{{Talos: "v1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.37-rc"}}}}, wantErr: `input: supportMatrix.entries[0].maxKubernetes: Invalid value: "v1.37-rc": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"StallBoundsOverride": {reason: "polling.stallAfter replaces each bound on its own.", in: v1beta1.Input{Polling: v1beta1.PollingOptions{StallAfter: v1beta1.StallAfterOptions{Imports: &metav1.Duration{Duration: 2 * time.Hour}}}},
			want: with(func(c *Config) { c.Stall.Imports = 2 * time.Hour })},
		"StallBoundBelowAMinuteIsRefused": {reason: "A bound below CDI's own progress updates would report healthy clones as stalled.", in: v1beta1.Input{Polling: v1beta1.PollingOptions{StallAfter: v1beta1.StallAfterOptions{Clones: &metav1.Duration{Duration: 30 * time.Second}}}},
			wantErr: `input: polling.stallAfter.clones: Invalid value: "30s": must be at least 1m; it is how long an import or a clone may go without its phase, progress or restart count changing before it is reported stalled`},
		"TinyInProgressTTLIsRefused": {reason: "The message names the one field that is wrong.", in: v1beta1.Input{Polling: v1beta1.PollingOptions{InProgress: &metav1.Duration{Duration: 0}}}, wantErr: `input: polling.inProgress: Invalid value: "0s": must be at least 1s; it is how long Crossplane waits before calling the function again`},
		"BadFactoryURLIsRefused":     {reason: "The one URL grammar: no userinfo.", in: v1beta1.Input{Talos: v1beta1.TalosDefaults{ImageFactoryURL: "https://user@factory.talos.dev"}}, wantErr: `input: talos.imageFactoryURL: Invalid value: "https://REDACTED@factory.talos.dev": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"ReleaseOfAnotherMinorIsRefused": {reason: "A v1.35 pool must not run a v1.34 release the matrix never checked.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{KubernetesReleases: []v1beta1.KubernetesRelease{{Minor: "v1.35", Release: "v1.34.9"}}}},
			wantErr: `input: supportMatrix.kubernetesReleases[0].release: Invalid value: "v1.34.9": is not a release of minor v1.35; name a v1.35.PATCH release`},
		"DuplicateReleaseRowIsRefused": {reason: "Two releases for one minor are ambiguous.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{KubernetesReleases: []v1beta1.KubernetesRelease{{Minor: "v1.35", Release: "v1.35.6"}, {Minor: "v1.35", Release: "v1.35.7"}}}},
			wantErr: `input: supportMatrix.kubernetesReleases[1].minor: Invalid value: "v1.35": is listed twice; keep one release per Kubernetes minor`},
		"JoinSubnetWithHostBitsIsRefused": {reason: "The workers' pod network must be written as the control plane writes it.", in: v1beta1.Input{Join: v1beta1.JoinOptions{PodSubnet: "10.243.1.0/16"}},
			wantErr: `input: join.podSubnet: Invalid value: "10.243.1.0/16": has host bits set; write the network 10.243.0.0/16`},
		"JoinSuffixEndingInDashIsRefused": {reason: "The Secret name would end in -.", in: v1beta1.Input{Join: v1beta1.JoinOptions{TalosCASuffix: ptr.To("-ca-")}},
			wantErr: `input: join.talosCASuffix: Invalid value: "-ca-": is not a name suffix such as -talos-secrets: lowercase letters, digits and -, at most 63 characters, not ending in -; it is appended to the cluster's name`},
		"SyncMachineLabelsAreCompiled": {reason: "The manager's patterns, compiled as Cluster API compiles them.", in: v1beta1.Input{ClusterAPI: v1beta1.ClusterAPIOptions{SyncMachineLabels: []string{`^example\.com/.*`}}},
			want: with(func(c *Config) { c.SyncMachineLabels = []*regexp.Regexp{regexp.MustCompile(`^example\.com/.*`)} })},
		"BadSyncMachineLabelIsRefused": {reason: "A pattern the manager could not start with is refused at its index.", in: v1beta1.Input{ClusterAPI: v1beta1.ClusterAPIOptions{SyncMachineLabels: []string{"ok", "(unclosed"}}},
			wantErr: "input: clusterAPI.syncMachineLabels[1]: Invalid value: \"(unclosed\": is not a regular expression Cluster API can compile (error parsing regexp: missing closing ): `(unclosed`); write it as given to the manager's --additional-sync-machine-labels, e.g. ^example\\.com/.*"},
		"BadMatrixVersionIsRefused": {reason: "Rows hold minors.", in: v1beta1.Input{SupportMatrix: &v1beta1.SupportMatrix{Entries: []v1beta1.SupportMatrixEntry{{Talos: "1.14", MinKubernetes: "v1.32", MaxKubernetes: "v1.37"}}}},
			wantErr: `input: supportMatrix.entries[0].talos: Invalid value: "1.14": is not a Talos minor such as v1.13; a support-matrix row names a minor, without patch, suffix or leading zeros`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if os.Getenv("PRINT_WANT") != "" {
				_, err := FromInput(&tc.in, time.Minute)
				fmt.Printf("%s\t%v\n", name, err)
			}
			got, err := FromInput(&tc.in, time.Minute)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }), cmp.Comparer(func(a, b *regexp.Regexp) bool { return a.String() == b.String() })); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestModeFor(t *testing.T) {
	cases := map[string]struct {
		cfg  Config
		kind string
		want v1beta1.Mode
	}{
		"CatalogKind":      {kind: "XWorkerImageCatalog", want: v1beta1.ModeCatalog},
		"TenantKind":       {kind: "XTenantCluster", want: v1beta1.ModeTenantCluster},
		"PoolKind":         {kind: "XNodePool", want: v1beta1.ModeNodePool},
		"ExplicitModeWins": {cfg: Config{Mode: v1beta1.ModeCatalog}, kind: "XNodePool", want: v1beta1.ModeCatalog},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ModeFor(tc.cfg, tc.kind)
			if err != nil || got != tc.want {
				t.Errorf("ModeFor(%q) = %q, %v; want %q", tc.kind, got, err, tc.want)
			}
		})
	}
}

func TestCopiesOnto(t *testing.T) {
	c := Config{HostAssistedCopyClasses: []string{"local", "lvm"}}
	cases := map[string]struct {
		reason string
		class  string
		want   bool
	}{
		"ListedClassCopies":    {reason: "A listed class copies from a golden on another class.", class: "lvm", want: true},
		"UnlistedClassDoesNot": {reason: "Any other class keeps the StorageClassMismatch hold.", class: "replicated"},
		"NoClassNeverCopies":   {reason: "A pool whose class is unknown has nothing to match.", class: ""},
		"PrefixIsNoMatch":      {reason: "Names match whole.", class: "loc"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, c.CopiesOnto(tc.class)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
