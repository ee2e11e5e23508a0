package catalog

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	fresource "github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/cdistate"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
)

const sid = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"

func testConfig(t *testing.T) config.Config {
	t.Helper()
	c, err := config.FromInput(&v1beta1.Input{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestResolveGoldens(t *testing.T) {
	url := "https://factory.talos.dev/image/" + sid + "/v1.13.6/openstack-amd64.raw.xz"
	cases := map[string]struct {
		reason  string
		spec    v1alpha1.WorkerImageCatalogSpec
		made    madeGoldens
		want    []Golden
		wantErr string
	}{
		"ArchitectureNextToExistingGoldenIsSuffixed": {
			reason: "The existing unsuffixed golden was made amd64: it keeps its name, arm64 gets -arm64 and its own URL.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Architectures: []string{"amd64", "arm64"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6"}}},
			made:   madeGoldens{"talos-worker-abc-v1.13.6": {Arch: "amd64"}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", Explicit: explicit{Arch: true}},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-arm64", SchematicID: "abc", Version: "v1.13.6", Arch: "arm64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-arm64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", Explicit: explicit{Arch: true}},
			},
		},
		"ExistingGoldenNamesItsArchitectureNotTheDefault": {
			reason: "The unsuffixed golden was made arm64 before the Input said amd64: arm64 keeps it, the default gets -amd64.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6", Architectures: []string{"amd64", "arm64"}}}},
			made:   madeGoldens{"talos-worker-abc-v1.13.6": {Arch: "arm64"}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-amd64", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", Explicit: explicit{Arch: true}},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "arm64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-arm64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", Explicit: explicit{Arch: true}},
			},
		},
		"EntryArchitecturesOverrideTheCatalogs": {
			reason: "An entry listing arm64 alone makes one arm64 golden, unsuffixed as the first of its list.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Architectures: []string{"amd64"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6", Architectures: []string{"arm64"}}}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "arm64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-arm64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", Explicit: explicit{Arch: true}},
			},
		},
		"SecondClassGetsAHashedGolden": {
			reason: "The same image on replicated and local: the first class's golden is named as ever, the other's hashes its class.",
			spec:   v1alpha1.WorkerImageCatalogSpec{StorageClasses: []string{"replicated", "local"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6"}}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated"},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-amd64-25bf8e1a23", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "local"},
			},
		},
		"ExistingGoldenKeepsItsClassWhenAnotherIsListedFirst": {
			reason: "The unsuffixed golden lives on replicated; listing local first gives local a new golden and moves nothing.",
			spec:   v1alpha1.WorkerImageCatalogSpec{StorageClasses: []string{"local", "replicated"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6"}}},
			made:   madeGoldens{"talos-worker-abc-v1.13.6": {Arch: "amd64", Class: "replicated"}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-amd64-25bf8e1a23", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "local"},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated"},
			},
		},
		"DefaultClassGoldenIsTheFirstClasss": {
			reason: "A golden left to the default class counts as the first listed class's, as it did before classes: it keeps its name.",
			spec:   v1alpha1.WorkerImageCatalogSpec{StorageClasses: []string{"replicated", "local"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6"}}},
			made:   madeGoldens{"talos-worker-abc-v1.13.6": {Arch: "amd64"}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated"},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-amd64-25bf8e1a23", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "local"},
			},
		},
		"ClassAndArchitectureMultiply": {
			reason: "Two architectures on two classes are four goldens, each named on its own.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Architectures: []string{"amd64", "arm64"}, Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6", StorageClasses: []string{"replicated", "local"}}}},
			want: []Golden{
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated", Explicit: explicit{Arch: true}},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-amd64-25bf8e1a23", SchematicID: "abc", Version: "v1.13.6", Arch: "amd64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-amd64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "local", Explicit: explicit{Arch: true}},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-arm64", SchematicID: "abc", Version: "v1.13.6", Arch: "arm64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-arm64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated", Explicit: explicit{Arch: true}},
				{Index: 0, Namespace: "cozy-public", Name: "talos-worker-abc-v1.13.6-arm64-25bf8e1a23", SchematicID: "abc", Version: "v1.13.6", Arch: "arm64", URL: "https://factory.talos.dev/image/abc/v1.13.6/openstack-arm64.raw.xz", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "local", Explicit: explicit{Arch: true}},
			},
		},
		"StorageClassAndStorageClassesAreRefusedTogether": {
			reason:  "Which class was meant cannot be told.",
			spec:    v1alpha1.WorkerImageCatalogSpec{StorageClass: "replicated", StorageClasses: []string{"local"}},
			wantErr: `XWorkerImageCatalog "default": spec.storageClass: Invalid value: "replicated": set storageClass or storageClasses, not both: list "replicated" in spec.storageClasses instead`,
		},
		"EntryClassesAreCheckedAsTheCatalogs": {
			reason:  "An entry's classes are refused as the catalog's are, a listed default class and a duplicate included.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6", StorageClass: "a", StorageClasses: []string{"b", "b", ""}}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].storageClass: Invalid value: "a": set storageClass or storageClasses, not both: list "a" in spec.images[0].storageClasses instead; spec.images[0].storageClasses[1]: Duplicate value: "b"; spec.images[0].storageClasses[2]: Required value: name a StorageClass: the default class is the one storageClass left empty means, and it cannot be listed`,
		},
		"UnsupportedArchitectureIsRefused": {
			reason:  "A golden is imported for a Talos disk architecture only.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.13.6", Architectures: []string{"riscv64"}}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].architectures[0]: Unsupported value: "riscv64": supported values: "amd64", "arm64"`,
		},
		"DefaultsApply": {
			reason: "An entry with only schematic and version takes the catalog, then the Input defaults.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: sid, Version: "v1.13.6"}}},
			want:   []Golden{{Index: 0, Namespace: "cozy-public", Name: "talos-worker-" + sid + "-v1.13.6", SchematicID: sid, Version: "v1.13.6", Arch: "amd64", URL: url, Storage: resource.MustParse("6Gi"), StorageText: "6Gi"}},
		},
		"EntryOverridesWin": {
			reason: "Per-entry storage, class and factory override the catalog's, and a trailing slash is trimmed.",
			spec: v1alpha1.WorkerImageCatalogSpec{GoldenNamespace: "images", Storage: "4Gi", StorageClass: "replicated", Images: []v1alpha1.CatalogImage{
				{SchematicID: "abc", Version: "v1.12.0", Storage: "8Gi", StorageClass: "fast", ImageFactoryURL: "http://mirror.local/"},
			}},
			want: []Golden{{Index: 0, Namespace: "images", Name: "talos-worker-abc-v1.12.0", SchematicID: "abc", Version: "v1.12.0", Arch: "amd64", URL: "http://mirror.local/image/abc/v1.12.0/openstack-amd64.raw.xz", Storage: resource.MustParse("8Gi"), StorageText: "8Gi", StorageClass: "fast", Explicit: explicit{URL: true, Storage: true}}},
		},
		"MissingSchematicIsRefused": {
			reason:  "Every entry needs a schematicID.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{Version: "v1.13.6"}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].schematicID: Required value: set an Image Factory schematic ID (64 lowercase hex characters)`,
		},
		"MissingVersionIsRefused": {
			reason:  "Every entry needs a version.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: sid}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].version: Required value: set a Talos release such as v1.13.6`,
		},
		"DuplicateGoldenIsRefused": {
			reason:  "Entries differing only in size or class still collide on the golden name.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0"}, {SchematicID: "abc", Version: "v1.0.0", Storage: "8Gi"}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[1]: Invalid value: resolves to the same golden DataVolume "talos-worker-abc-v1.0.0" as spec.images[0]: one entry per (schematicID, version) keeps every golden of that image, and a second would silently replace the first: drop the duplicate, listing its classes in the first's storageClasses and its architectures in its architectures`,
		},
		"StorageBelowImageIsRefused": {
			reason:  "A golden smaller than the raw disk image cannot hold the import.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", Storage: "1Gi"}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].storage: Invalid value: "1Gi": is smaller than the Talos disk image (1246Mi), so the import would fail; raise it to at least 1246Mi`,
		},
		"NegativeStorageIsRefused": {
			reason:  "A negative quantity parses but is below the floor.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", Storage: "-6Gi"}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].storage: Invalid value: "-6Gi": is not a positive quantity such as 6Gi`,
		},
		"GarbageStorageIsRefused": {
			reason:  "A storage that is no quantity is refused with an example.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Storage: "six gigs", Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0"}}},
			wantErr: `XWorkerImageCatalog "default": spec.storage: Invalid value: "six gigs": is not a positive quantity such as 6Gi`,
		},
		"BadStorageClassIsRefused": {
			reason:  "A class name must be a DNS subdomain.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", StorageClass: "Fast SSD"}}},
			wantErr: `XWorkerImageCatalog "default": spec.images[0].storageClass: Invalid value: "Fast SSD": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default`,
		},
		"BadGoldenNamespaceIsRefused": {
			reason:  "The golden namespace must be a namespace name.",
			spec:    v1alpha1.WorkerImageCatalogSpec{GoldenNamespace: "Cozy_Public"},
			wantErr: `XWorkerImageCatalog "default": spec.goldenNamespace: Invalid value: "Cozy_Public": is not a namespace name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); set it to an existing namespace such as cozy-public`,
		},
		"AllProblemsAreReportedAtOnce": {
			reason: "An operator fixes the catalog in one pass: every bad entry is named, in order.",
			spec: v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{
				{SchematicID: "abc", Version: "1.0.0"},
				{SchematicID: "abc", Version: "v1.0.0", ImageFactoryURL: "https://x/`id`"},
			}},
			wantErr: "XWorkerImageCatalog \"default\": spec.images[0].version: Invalid value: \"1.0.0\": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else; spec.images[1].imageFactoryURL: Invalid value: \"https://x/`id`\": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := resolveGoldens("default", tc.spec, testConfig(t), tc.made)
			if os.Getenv("PRINT_WANT") != "" {
				fmt.Printf("%s\t%s\n", name, errString(err))
			}
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestGoldensCondition(t *testing.T) {
	g := Golden{Index: 0, Namespace: "cozy-public", Name: "talos-worker-a-v1.0.0", SchematicID: "a", Version: "v1.0.0", Arch: "amd64", URL: "https://factory.talos.dev/image/a/v1.0.0/openstack-amd64.raw.xz", StorageText: "6Gi"}
	withStatus := func(st cdiv1.DataVolumeStatus) []planned {
		return []planned{{Golden: g, Live: &cdiv1.DataVolume{Status: st}}}
	}
	running := func(status corev1.ConditionStatus, reason, msg string) cdiv1.DataVolumeCondition {
		return cdiv1.DataVolumeCondition{Type: cdiv1.DataVolumeRunning, Status: status, Reason: reason, Message: msg}
	}
	claimNotValid := func(msg string) []cdiv1.DataVolumeCondition {
		return []cdiv1.DataVolumeCondition{
			{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "ErrClaimNotValid", Message: msg},
			{Type: cdiv1.DataVolumeReady, Status: corev1.ConditionFalse, Reason: "ErrClaimNotValid", Message: msg},
		}
	}
	cases := map[string]struct {
		reason  string
		goldens []planned
		want    compose.Condition
	}{
		"NotCreatedIsWaiting": {
			reason:  "A golden with no DataVolume yet is on its way.",
			goldens: []planned{{Golden: g}},
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: "0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (not created yet). Pools that clone them wait until they are."},
		},
		"ImportInProgressIsWaitingWithProgress": {
			reason:  "An import in progress is transient.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, Progress: "45.53%"}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: "0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (phase ImportInProgress, 45.53%). Pools that clone them wait until they are."},
		},
		"QuotaIsWaitingAndSaysWhy": {
			reason: "CDI keeps the golden Pending on a quota; the reason is what an operator needs.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.Pending, Conditions: []cdiv1.DataVolumeCondition{
				{Type: cdiv1.DataVolumeBound, Status: corev1.ConditionFalse, Reason: "ErrExceededQuota", Message: "exceeded quota: storage"}}}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: `0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (phase Pending, ErrExceededQuota: "exceeded quota: storage"). Pools that clone them wait until they are.`},
		},
		"RestartLoopIsFailingAndQuotesCDI": {
			reason: "Three restarts with Running=False: the factory is unreachable; CDI's message says how.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 3, Conditions: []cdiv1.DataVolumeCondition{
				running(corev1.ConditionFalse, "Error", "Unable to connect to http data source: 503 Service Unavailable")}}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailing",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 keeps failing to import (phase ImportInProgress, 3 importer restarts, Error: "Unable to connect to http data source: 503 Service Unavailable"): check the importer pod logs in cozy-public and that https://factory.talos.dev/image/a/v1.0.0/openstack-amd64.raw.xz is reachable; the import resumes by itself once an attempt succeeds.`},
		},
		"RestartsWhileRunningAreImporting": {
			reason: "Restarts with the importer running again are progress.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 5, Conditions: []cdiv1.DataVolumeCondition{
				running(corev1.ConditionTrue, "Pod is running", "")}}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: "0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (phase ImportInProgress). Pools that clone them wait until they are."},
		},
		"FailedPhaseIsFailed": {
			reason:  "CDI gave up; without a reason the generic fix applies.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.Failed}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailed",
				Message: "golden DataVolume cozy-public/talos-worker-a-v1.0.0 failed to import (phase Failed): check the importer pod events in cozy-public, then delete the DataVolume so the catalog re-creates it."},
		},
		"NoDefaultClassIsFailedWithTheFix": {
			reason:  "ErrClaimNotValid with an empty phase never resolves by itself; it is reported as failed, quoting CDI, with the catalog-side fix.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Conditions: claimNotValid("PVC spec is missing accessMode and no storageClass to choose profile")}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailed",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 cannot be imported as it stands (phase <none>, ErrClaimNotValid: "PVC spec is missing accessMode and no storageClass to choose profile"): CDI finds no StorageClass for it: mark a class as default with an annotation CDI reads (storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class; CDI ignores the beta annotation), after which CDI retries by itself; or set images[0].storageClass (or spec.storageClass), and the catalog re-creates the golden on it.`},
		},
		"IncompleteStorageProfileIsFailedWithTheFix": {
			reason:  "An empty StorageProfile gives ErrClaimNotValid; the fix is the profile's claimPropertySets.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Conditions: claimNotValid("no accessMode specified in StorageProfile replicated")}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImportFailed",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 cannot be imported as it stands (phase <none>, ErrClaimNotValid: "no accessMode specified in StorageProfile replicated"): the StorageClass's StorageProfile has no usable claimPropertySets: set spec.claimPropertySets (accessModes and volumeMode) on the StorageProfile, or use a class CDI knows; CDI retries by itself once the StorageProfile changes.`},
		},
		"StorageProfileNotYetCreatedIsWaiting": {
			reason:  "A profile CDI has not created yet appears by itself.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Conditions: claimNotValid(`cannot get StorageProfile: storageprofiles.cdi.kubevirt.io "fast" not found`)}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: `0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (phase Pending, ErrClaimNotValid: "cannot get StorageProfile: storageprofiles.cdi.kubevirt.io \"fast\" not found"). Pools that clone them wait until they are.`},
		},
		"ImageTooLargeIsFailedWithTheFix": {
			reason: "The importer fails the same way on every restart; the size is the fix, and the catalog re-creates the golden at it.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 1, Conditions: []cdiv1.DataVolumeCondition{
				running(corev1.ConditionFalse, "Error", "DataVolume too small to contain image")}}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "TooSmall",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 cannot be imported as it stands (phase ImportInProgress, Error: "DataVolume too small to contain image"): the Talos image does not fit 6Gi: raise images[0].storage (or spec.storage); the catalog re-creates a golden that never succeeded and that nothing clones at the new size.`},
		},
		"ImageTooLargeStaysFailedWhileImporterRunsAgain": {
			reason: "CDI reports Running=True with no message while the restarted importer runs (pkg/controller/util.go setAnnotationsFromPodWithPrefix 325-330); the golden's record keeps the report, so it does not flap to Importing.",
			goldens: []planned{{Golden: g, Live: &cdiv1.DataVolume{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{labels.AnnImportPermanentError: cdistate.MessageTooSmall}},
				Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 2, Conditions: []cdiv1.DataVolumeCondition{
					running(corev1.ConditionTrue, "Pod is running", "")}}}}},
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "TooSmall",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 cannot be imported as it stands (phase ImportInProgress, Error: "DataVolume too small to contain image"): the Talos image does not fit 6Gi: raise images[0].storage (or spec.storage); the catalog re-creates a golden that never succeeded and that nothing clones at the new size.`},
		},
		"NotFoundURLNamesTheEntry": {
			reason: "A 404 repeats on every importer restart (pkg/importer/http-datasource.go createHTTPReader 403-406): it does not clear once an attempt succeeds, so the fix is the entry.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 3, Conditions: []cdiv1.DataVolumeCondition{
				running(corev1.ConditionFalse, "Error", "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found")}}),
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "ImageNotFound",
				Message: `golden DataVolume cozy-public/talos-worker-a-v1.0.0 keeps failing to import (phase ImportInProgress, 3 importer restarts, Error: "Unable to connect to http data source: expected status code 200, got 404. Status: 404 Not Found"): https://factory.talos.dev serves no image at /image/a/v1.0.0/openstack-amd64.raw.xz: check that this factory has schematicID a and Talos v1.0.0 (an Enterprise or self-hosted factory serves only the schematics it stores, so the public default schematic may not exist there) and correct images[0].schematicID or version, or point images[0].imageFactoryURL at a factory or mirror that serves it; the catalog re-creates a golden that never succeeded and that nothing clones once its import would be made otherwise, so the change applies without deleting anything by hand.`},
		},
		"NamedClassNotYetCreatedIsWaiting": {
			reason: "CDI re-reconciles a DataVolume with an empty phase when a StorageClass is created (datavolume/controller-base.go 314-336): a named class that appears later is waited for, not failed.",
			goldens: []planned{{Golden: g, Live: &cdiv1.DataVolume{
				Spec:   cdiv1.DataVolumeSpec{Storage: &cdiv1.StorageSpec{StorageClassName: ptr("fast")}},
				Status: cdiv1.DataVolumeStatus{Conditions: claimNotValid("PVC spec is missing accessMode and no storageClass to choose profile")}}}},
			want: compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusFalse, Reason: "Importing",
				Message: `0 of 1 golden images are Succeeded; waiting for cozy-public/talos-worker-a-v1.0.0 (phase Pending, ErrClaimNotValid: "PVC spec is missing accessMode and no storageClass to choose profile"; CDI waits for StorageClass "fast", named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does). Pools that clone them wait until they are.`},
		},
		"SucceededIsReady": {
			reason:  "Ready to clone.",
			goldens: withStatus(cdiv1.DataVolumeStatus{Phase: cdiv1.Succeeded}),
			want:    compose.Condition{Type: ConditionGoldensReady, Status: compose.StatusTrue, Reason: "AllSucceeded", Message: "All golden images (1) are Succeeded."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, goldensCondition(tc.goldens)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// observedGoldens are observed composed resources under golden keys.
func observedGoldens(objs ...map[string]any) map[fresource.Name]fresource.ObservedComposed {
	out := map[fresource.Name]fresource.ObservedComposed{}
	for _, o := range objs {
		u := &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: o}}
		out[goldenKey(u.GetName())] = fresource.ObservedComposed{Resource: u}
	}
	return out
}

func dvObject(name, namespace string) map[string]any {
	return map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": name, "namespace": namespace}}
}

func TestPlanGoldens(t *testing.T) {
	inCatalog := Golden{Index: 0, Namespace: "cozy-public", Name: "talos-worker-a-v1.0.0"}
	kmt := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	type planSummary struct {
		Key        fresource.Name
		Name       string
		Live, Raw  bool
		Retiring   bool
		InUse      bool
		PinnedBy   []string
		Unreadable string
	}
	inUseDV := func(name string) map[string]any {
		o := dvObject(name, "cozy-public")
		o["metadata"].(map[string]any)["labels"] = map[string]any{"crossplane.io/in-use": "true"}
		return o
	}
	cases := map[string]struct {
		reason   string
		observed map[fresource.Name]fresource.ObservedComposed
		pins     map[string][]*unstructured.Unstructured
		want     []planSummary
	}{
		"PinnedKeptUnpinnedRetired": {
			reason:   "A golden that left the catalog is kept while a template pins it (pins sorted and de-duplicated) and retired once none does.",
			observed: observedGoldens(dvObject("talos-worker-b-v1.0.0", "cozy-public"), dvObject("talos-worker-c-v1.0.0", "cozy-public")),
			pins:     map[string][]*unstructured.Unstructured{"pins-talos-worker-b-v1.0.0": {kmt("t2", "z"), kmt("t1", "y"), kmt("t1", "y")}, "pins-talos-worker-c-v1.0.0": {}},
			want: []planSummary{
				{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", PinnedBy: []string{}},
				{Key: "golden-talos-worker-b-v1.0.0", Name: "talos-worker-b-v1.0.0", Live: true, Retiring: true, PinnedBy: []string{"t1/y", "t2/z"}},
			},
		},
		"UnreadableGoldenThatLeftIsKeptUnpinned": {
			reason:   "The function never deletes what it cannot read, pinned or not.",
			observed: observedGoldens(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "talos-worker-d-v1.0.0", "namespace": "cozy-public"}}),
			want: []planSummary{
				{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", PinnedBy: []string{}},
				{Key: "golden-talos-worker-d-v1.0.0", Name: "talos-worker-d-v1.0.0", Raw: true, Retiring: true, PinnedBy: []string{}, Unreadable: "it is a v1 ConfigMap, not the cdi.kubevirt.io/v1beta1 DataVolume this function composes there"},
			},
		},
		"UnreadableGoldenInTheCatalogIsKeptNotRecreated": {
			reason: "A golden of the catalog that cannot be read is neither checked for drift nor re-created from the entry: it is kept as observed.",
			observed: observedGoldens(map[string]any{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "talos-worker-a-v1.0.0", "namespace": "cozy-public"},
				"spec": map[string]any{"storage": "6Gi"}}),
			want: []planSummary{{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", Raw: true, PinnedBy: []string{},
				Unreadable: `cannot read DataVolume "cozy-public/talos-worker-a-v1.0.0": cannot restore struct from: string`}},
		},
		"GoldenInUseIsKeptUnpinned": {
			reason:   "A golden that left the catalog and that no template pins, but that carries Crossplane's in-use label (a Usage protects it, even one made by hand), is kept retiring: its delete would be refused, and a refused delete stops the whole composition.",
			observed: observedGoldens(inUseDV("talos-worker-b-v1.0.0"), dvObject("talos-worker-c-v1.0.0", "cozy-public")),
			want: []planSummary{
				{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", PinnedBy: []string{}},
				{Key: "golden-talos-worker-b-v1.0.0", Name: "talos-worker-b-v1.0.0", Live: true, Retiring: true, InUse: true, PinnedBy: []string{}},
			},
		},
		"GoldenInTheCatalogInUseIsMarked": {
			reason:   "A golden of the catalog that carries the in-use label is marked, so that its clone permission is protected as long as it is.",
			observed: observedGoldens(inUseDV("talos-worker-a-v1.0.0")),
			want:     []planSummary{{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", Live: true, InUse: true, PinnedBy: []string{}}},
		},
		"RetiringGoldenStaysUnderTheKeyItWasObservedWith": {
			reason: "A pinned golden whose DataVolume name is not the one its key implies keeps its observed key and its own name: a new key would drop the observed one, which deletes it.",
			observed: map[fresource.Name]fresource.ObservedComposed{
				"golden-talos-worker-b-v1.0.0": {Resource: &composed.Unstructured{Unstructured: unstructured.Unstructured{Object: dvObject("talos-worker-b-renamed", "cozy-public")}}},
			},
			pins: map[string][]*unstructured.Unstructured{"pins-talos-worker-b-v1.0.0": {kmt("t1", "y")}},
			want: []planSummary{
				{Key: "golden-talos-worker-a-v1.0.0", Name: "talos-worker-a-v1.0.0", PinnedBy: []string{}},
				{Key: "golden-talos-worker-b-v1.0.0", Name: "talos-worker-b-renamed", Live: true, Retiring: true, PinnedBy: []string{"t1/y"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := planGoldens([]Golden{inCatalog}, readObserved(tc.observed), tc.pins)
			sum := make([]planSummary, 0, len(got))
			for _, p := range got {
				sum = append(sum, planSummary{Key: p.Key, Name: p.Name, Live: p.Live != nil, Raw: p.Raw != nil, Retiring: p.Retiring, InUse: p.InUse, PinnedBy: p.PinnedBy, Unreadable: errString(p.Unreadable)})
			}
			if diff := cmp.Diff(tc.want, sum); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckNamespace(t *testing.T) {
	in := func(ns string) goldenNamespace { return goldenNamespace{Name: ns, From: "spec.goldenNamespace"} }
	cases := map[string]struct {
		reason   string
		ns       goldenNamespace
		observed map[fresource.Name]fresource.ObservedComposed
		want     string
	}{
		"NoGoldensYet": {
			reason: "A fresh catalog may put its goldens anywhere.",
			ns:     in("golden-images"),
		},
		"GoldensWhereTheyBelong": {
			reason:   "Goldens in the configured namespace are the steady state.",
			ns:       in("cozy-public"),
			observed: observedGoldens(dvObject("talos-worker-a-v1.0.0", "cozy-public")),
		},
		"UnreadableGoldenCountsByItsAnnotation": {
			reason: "A golden observed without a namespace is placed by the golden annotation it carries.",
			ns:     in("golden-images"),
			observed: observedGoldens(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "talos-worker-a-v1.0.0",
				"annotations": map[string]any{"workerimage.cozystack.io/golden": "cozy-public/talos-worker-a-v1.0.0"}}}),
			want: `XWorkerImageCatalog "default": the golden namespace is "golden-images", from spec.goldenNamespace, but the catalog's golden DataVolumes live in "cozy-public" (talos-worker-a-v1.0.0). ` +
				`Composing them in "golden-images" would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. ` +
				`Set the golden namespace back to "cozy-public"; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace "golden-images" and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)`,
		},
		"GoldensInSeveralOldNamespaces": {
			reason:   "Every namespace and golden is named, sorted, so the operator sees what moved.",
			ns:       goldenNamespace{Name: "new", From: "the function Input's goldenNamespace (spec.goldenNamespace is not set)"},
			observed: observedGoldens(dvObject("talos-worker-b-v1.0.0", "old-b"), dvObject("talos-worker-a-v1.0.0", "old-a"), dvObject("talos-worker-c-v1.0.0", "new")),
			want: `XWorkerImageCatalog "default": the golden namespace is "new", from the function Input's goldenNamespace (spec.goldenNamespace is not set), but the catalog's golden DataVolumes live in "old-a" (talos-worker-a-v1.0.0), "old-b" (talos-worker-b-v1.0.0). ` +
				`Composing them in "new" would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. ` +
				`Set the golden namespace back to the namespace its goldens live in; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace "new" and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := errString(checkNamespace("default", tc.ns, readObserved(tc.observed)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTransitions(t *testing.T) {
	prev := []v1alpha1.GoldenStatus{{Name: "a", Namespace: "ns", Phase: "ImportInProgress"}, {Name: "b", Namespace: "ns", Phase: "Succeeded"}, {Name: "c", Namespace: "ns", Phase: "Succeeded"}}
	prev = append(prev, v1alpha1.GoldenStatus{Name: "d", Namespace: "ns", Phase: "Succeeded"})
	next := []v1alpha1.GoldenStatus{{Name: "a", Namespace: "ns", Phase: "Succeeded", Version: "v1.0.0"}, {Name: "b", Namespace: "ns", Phase: "Succeeded", Retiring: true, PinnedBy: []string{"t/x"}}, {Name: "d", Namespace: "ns", Phase: "Succeeded", Retiring: true}}
	want := []compose.Result{
		{Severity: compose.SeverityNormal, Reason: "GoldenImported", Message: "Golden DataVolume ns/a is Succeeded: pools can clone Talos v1.0.0 from it."},
		{Severity: compose.SeverityNormal, Reason: "GoldenRetiring", Message: "Golden DataVolume ns/b left the catalog and is kept while t/x pin it."},
		{Severity: compose.SeverityNormal, Reason: "GoldenRetiring", Message: "Golden DataVolume ns/d left the catalog and is kept while it is in use."},
		{Severity: compose.SeverityNormal, Reason: "GoldenRetired", Message: "Golden DataVolume ns/c is no longer in the catalog and no template pins it: deleted."},
	}
	if diff := cmp.Diff(want, transitions(prev, next)); diff != "" {
		t.Errorf("each transition is one event\n-want, +got:\n%s", diff)
	}
	if got := transitions(next, next); len(got) != 0 {
		t.Errorf("steady state must emit no events, got %v", got)
	}
}

func ptr(s string) *string { return &s }

// TestGoldenKeepsTooSmallRecord: the catalog writes the record cdistate reads,
// while CDI's permanent "too small" state holds, and drops it otherwise.
func TestGoldenKeepsTooSmallRecord(t *testing.T) {
	g := Golden{Index: 0, Namespace: "cozy-public", Name: "talos-worker-a-v1.0.0", SchematicID: "a", Version: "v1.0.0", Arch: "amd64", URL: "https://f/a", Storage: resource.MustParse("6Gi"), StorageText: "6Gi"}
	tooSmall := cdiv1.DataVolumeCondition{Type: cdiv1.DataVolumeRunning, Status: corev1.ConditionFalse, Reason: "Error", Message: cdistate.MessageTooSmall}
	cases := map[string]struct {
		reason string
		live   *cdiv1.DataVolume
		want   string
	}{
		"TooSmallIsRecorded": {
			reason: "pkg/controller/util.go simplifyKnownMessage 406-415: CDI drops this message when it restarts the importer.",
			live:   &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 1, Conditions: []cdiv1.DataVolumeCondition{tooSmall}}},
			want:   cdistate.MessageTooSmall,
		},
		"ImportingCarriesNone": {
			reason: "Nothing to remember while CDI makes progress.",
			live:   &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress}},
		},
		"NewGoldenCarriesNone": {
			reason: "A re-created golden starts without the record.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := emit("catalog", "cozy-public", []planned{{Golden: g, Key: goldenKey(g.Name), Live: tc.live}}, observedState{}, previousStatus{}, testConfig(t), grantees{}, "")
			if out.Fatal != nil {
				t.Fatal(out.Fatal)
			}
			got := out.Resources[goldenKey(g.Name)].Resource.GetAnnotations()[labels.AnnImportPermanentError]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestProtectRBAC(t *testing.T) {
	g := func(name string) Golden { return Golden{Index: 0, Namespace: "cozy-public", Name: name} }
	key := func(name string) fresource.Name {
		return fresource.Name("clone-usage-" + labels.GoldenHash("cozy-public", name))
	}
	plan := []planned{
		{Golden: g("a"), PinnedBy: []string{"t/x"}},
		{Golden: g("b"), InUse: true, Retiring: true},
		{Golden: g("c")},
		{Golden: g("d"), Raw: &composed.Unstructured{}, PinnedBy: []string{"t/y"}},
	}
	cases := map[string]struct {
		reason   string
		plan     []planned
		observed map[fresource.Name]fresource.ObservedComposed
		enabled  bool
		want     map[fresource.Name]fresource.Ready
	}{
		"PinnedAndProtectedGoldensHoldTheBinding": {
			reason:  "A golden a template pins or a Usage protects holds the RoleBinding, and the RoleBinding the ClusterRole; an unpinned golden and one the function cannot read hold nothing. A Usage is ready at once: nothing waits for it.",
			plan:    plan,
			enabled: true,
			observed: map[fresource.Name]fresource.ObservedComposed{
				key("a"): {Resource: composed.New()},
			},
			want: map[fresource.Name]fresource.Ready{key("a"): fresource.ReadyTrue, key("b"): fresource.ReadyTrue, "clone-usage-clusterrole": fresource.ReadyTrue},
		},
		"NothingPinnedNothingHeld": {
			reason:  "With no golden pinned the RBAC needs no Usage, the ClusterRole's neither.",
			plan:    []planned{{Golden: g("c")}},
			enabled: true,
			want:    map[fresource.Name]fresource.Ready{},
		},
		"UsagesOffKeepWhatExists": {
			reason: "With Usages turned off in the Input none is created, and one that exists stays while it is wanted.",
			plan:   plan,
			observed: map[fresource.Name]fresource.ObservedComposed{
				key("a"): {Resource: composed.New()},
			},
			want: map[fresource.Name]fresource.Ready{key("a"): fresource.ReadyTrue},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			into := map[fresource.Name]*fresource.DesiredComposed{}
			if err := protectRBAC(into, "default", "cozy-public", tc.plan, readObserved(tc.observed), tc.enabled); err != nil {
				t.Fatal(err)
			}
			got := map[fresource.Name]fresource.Ready{}
			for k, d := range into {
				got[k] = d.Ready
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
