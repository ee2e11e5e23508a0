package catalog

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/input/v1beta1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
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
		want    []Golden
		wantErr string
	}{
		"DefaultsApply": {
			reason: "An entry with only schematic and version takes the catalog, then the Input defaults.",
			spec:   v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: sid, Version: "v1.13.6"}}},
			want:   []Golden{{Index: 0, Namespace: "cozy-public", Name: "talos-worker-" + sid + "-v1.13.6", SchematicID: sid, Version: "v1.13.6", URL: url, Storage: resource.MustParse("6Gi"), StorageText: "6Gi"}},
		},
		"EntryOverridesWin": {
			reason: "Per-entry storage, class and factory override the catalog's, and a trailing slash is trimmed.",
			spec: v1alpha1.WorkerImageCatalogSpec{GoldenNamespace: "images", Storage: "4Gi", StorageClass: "replicated", Images: []v1alpha1.CatalogImage{
				{SchematicID: "abc", Version: "v1.12.0", Storage: "8Gi", StorageClass: "fast", ImageFactoryURL: "http://mirror.local/"},
			}},
			want: []Golden{{Index: 0, Namespace: "images", Name: "talos-worker-abc-v1.12.0", SchematicID: "abc", Version: "v1.12.0", URL: "http://mirror.local/image/abc/v1.12.0/openstack-amd64.raw.xz", Storage: resource.MustParse("8Gi"), StorageText: "8Gi", StorageClass: "fast"}},
		},
		"MissingSchematicIsRefused": {
			reason:  "Every entry needs a schematicID.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{Version: "v1.13.6"}}},
			wantErr: `XWorkerImageCatalog "default": images[0].schematicID is empty; set it to an Image Factory schematic ID (64 lowercase hex characters)`,
		},
		"MissingVersionIsRefused": {
			reason:  "Every entry needs a version.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: sid}}},
			wantErr: `XWorkerImageCatalog "default": images[0].version is empty; set it to a Talos release such as v1.13.6`,
		},
		"DuplicateGoldenIsRefused": {
			reason:  "Entries differing only in size or class still collide on the golden name.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0"}, {SchematicID: "abc", Version: "v1.0.0", Storage: "8Gi"}}},
			wantErr: `XWorkerImageCatalog "default": images[1] resolves to the same golden DataVolume "talos-worker-abc-v1.0.0" as images[0]; the name is keyed on (schematicID, version) alone, so a second entry would silently replace the first: drop the duplicate or give it a distinct (schematicID, version)`,
		},
		"StorageBelowImageIsRefused": {
			reason:  "A golden smaller than the raw disk image cannot hold the import.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", Storage: "1Gi"}}},
			wantErr: `XWorkerImageCatalog "default": images[0].storage "1Gi" is smaller than the Talos disk image (1246Mi), so the import would fail; raise it to at least 1246Mi`,
		},
		"NegativeStorageIsRefused": {
			reason:  "A negative quantity parses but is below the floor.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", Storage: "-6Gi"}}},
			wantErr: `XWorkerImageCatalog "default": images[0].storage "-6Gi" is smaller than the Talos disk image (1246Mi), so the import would fail; raise it to at least 1246Mi`,
		},
		"GarbageStorageIsRefused": {
			reason:  "A storage that is no quantity is refused with an example.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Storage: "six gigs", Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0"}}},
			wantErr: `XWorkerImageCatalog "default": spec.storage "six gigs" is not a quantity; write a size such as 6Gi`,
		},
		"BadStorageClassIsRefused": {
			reason:  "A class name must be a DNS subdomain.",
			spec:    v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{{SchematicID: "abc", Version: "v1.0.0", StorageClass: "Fast SSD"}}},
			wantErr: `XWorkerImageCatalog "default": images[0].storageClass "Fast SSD" is not a valid StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass or leave it empty for the cluster default`,
		},
		"BadGoldenNamespaceIsRefused": {
			reason:  "The golden namespace must be a namespace name.",
			spec:    v1alpha1.WorkerImageCatalogSpec{GoldenNamespace: "Cozy_Public"},
			wantErr: `XWorkerImageCatalog "default": spec.goldenNamespace "Cozy_Public" is not a valid namespace name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); set it to an existing namespace such as cozy-public`,
		},
		"AllProblemsAreReportedAtOnce": {
			reason: "An operator fixes the catalog in one pass: every bad entry is named, in order.",
			spec: v1alpha1.WorkerImageCatalogSpec{Images: []v1alpha1.CatalogImage{
				{SchematicID: "abc", Version: "1.0.0"},
				{SchematicID: "abc", Version: "v1.0.0", ImageFactoryURL: "https://x/`id`"},
			}},
			wantErr: `XWorkerImageCatalog "default": images[0].version "1.0.0" is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0); the Image Factory publishes no artifact for anything else; images[1].imageFactoryURL "https://x/` + "`id`" + `" is not a plain http(s) URL; it is interpolated into a DataVolume source URL, so it must carry no whitespace, quotes, $, backtick, <>, {} or |`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := resolveGoldens("default", tc.spec, testConfig(t))
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Errorf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func liveDV(url, storage string, class *string) *cdiv1.DataVolume {
	dv := &cdiv1.DataVolume{Spec: cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: url}}, Storage: &cdiv1.StorageSpec{StorageClassName: class}}}
	if storage != "" {
		dv.Spec.Storage.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(storage)}
	}
	return dv
}

func TestDetectDrift(t *testing.T) {
	repl := "replicated"
	g := Golden{Index: 2, Namespace: "cozy-public", Name: "talos-worker-abc-v1.0.0", SchematicID: "abc", Version: "v1.0.0", URL: "https://f/a", Storage: resource.MustParse("6Gi"), StorageText: "6Gi", StorageClass: "replicated"}
	cases := map[string]struct {
		reason string
		live   *cdiv1.DataVolume
		want   string
	}{
		"UnchangedEntryIsNoDrift":       {"The golden matches its entry.", liveDV("https://f/a", "6Gi", &repl), ""},
		"EqualQuantitiesAreNoDrift":     {"6144Mi is 6Gi.", liveDV("https://f/a", "6144Mi", &repl), ""},
		"UnsetLiveFieldsAreNotCompared": {"A field the live golden does not set cannot have drifted.", liveDV("", "", nil), ""},
		"EveryChangedFieldIsListed":     {"URL, storage and class are each reported old -> new.", liveDV("https://g/a", "4Gi", ptr("local")), `XWorkerImageCatalog "default": images[2] (abc, v1.0.0) changed after its golden DataVolume cozy-public/talos-worker-abc-v1.0.0 was created: source URL "https://g/a" -> "https://f/a", storage "4Gi" -> "6Gi", storageClass "local" -> "replicated". A DataVolume spec is immutable, so the golden cannot be changed in place: revert the entry, or add a NEW entry with a different (schematicID, version), move the pools onto it, then remove the old entry (its golden is kept while any pool still pins it)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := detectDrift("default", []Golden{g}, map[string]*cdiv1.DataVolume{g.Name: tc.live})
			if diff := cmp.Diff(tc.want, errString(err)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
	t.Run("ClearedClassIsDrift", func(t *testing.T) {
		g2 := g
		g2.StorageClass = ""
		err := detectDrift("default", []Golden{g2}, map[string]*cdiv1.DataVolume{g.Name: liveDV("https://f/a", "6Gi", &repl)})
		if err == nil || !strings.Contains(err.Error(), `storageClass "replicated" -> ""`) {
			t.Errorf("clearing the class of an existing golden must be drift, got %v", err)
		}
	})
}

func TestClassify(t *testing.T) {
	running := func(status corev1.ConditionStatus) []cdiv1.DataVolumeCondition {
		return []cdiv1.DataVolumeCondition{{Type: cdiv1.DataVolumeRunning, Status: status}}
	}
	cases := map[string]struct {
		reason string
		dv     *cdiv1.DataVolume
		want   state
	}{
		"NotCreatedIsPending":       {"No DataVolume yet.", nil, statePending},
		"NoPhaseIsPending":          {"CDI has not reconciled it yet.", &cdiv1.DataVolume{}, statePending},
		"ImportInProgressImporting": {"An import in progress is transient.", &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress}}, stateImporting},
		"SucceededIsSucceeded":      {"Ready to clone.", &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.Succeeded}}, stateSucceeded},
		"FailedIsFailed":            {"CDI gave up.", &cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.Failed}}, stateFailed},
		"RestartLoopIsFailing": {"Three restarts with Running=False means the factory is unreachable.",
			&cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 3, Conditions: running(corev1.ConditionFalse)}}, stateFailing},
		"RestartsWhileRunningAreImporting": {"Restarts with the importer running again are progress.",
			&cdiv1.DataVolume{Status: cdiv1.DataVolumeStatus{Phase: cdiv1.ImportInProgress, RestartCount: 5, Conditions: running(corev1.ConditionTrue)}}, stateImporting},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := classify(tc.dv); got != tc.want {
				t.Errorf("%s\nclassify() = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestPlanGoldens(t *testing.T) {
	inCatalog := Golden{Index: 0, Namespace: "cozy-public", Name: "talos-worker-a-v1.0.0"}
	mk := func(name string) *cdiv1.DataVolume {
		return &cdiv1.DataVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "cozy-public"}}
	}
	pinned, unpinned := mk("talos-worker-b-v1.0.0"), mk("talos-worker-c-v1.0.0")
	raw := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "talos-worker-d-v1.0.0", "namespace": "cozy-public"}}}
	kmt := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	got := planGoldens([]Golden{inCatalog},
		liveGoldens{ByName: map[string]*cdiv1.DataVolume{pinned.Name: pinned, unpinned.Name: unpinned}, Unreadable: map[string]*unstructured.Unstructured{"talos-worker-d-v1.0.0": raw}},
		map[string][]*unstructured.Unstructured{"pins-talos-worker-b-v1.0.0": {kmt("t2", "z"), kmt("t1", "y"), kmt("t1", "y")}, "pins-talos-worker-c-v1.0.0": {}})
	names := make([]string, 0, len(got))
	for _, p := range got {
		names = append(names, p.Name)
	}
	want := []string{"talos-worker-a-v1.0.0", "talos-worker-b-v1.0.0", "talos-worker-d-v1.0.0"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("a pinned golden and an unreadable one are kept, an unpinned one is retired\n-want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"t1/y", "t2/z"}, got[1].PinnedBy); diff != "" || !got[1].Retiring {
		t.Errorf("pins are sorted and de-duplicated, and the golden is retiring\n-want, +got:\n%s", diff)
	}
}

func TestTransitions(t *testing.T) {
	prev := []GoldenStatus{{Name: "a", Namespace: "ns", Phase: "ImportInProgress"}, {Name: "b", Namespace: "ns", Phase: "Succeeded"}, {Name: "c", Namespace: "ns", Phase: "Succeeded"}}
	next := []GoldenStatus{{Name: "a", Namespace: "ns", Phase: "Succeeded", Version: "v1.0.0"}, {Name: "b", Namespace: "ns", Phase: "Succeeded", Retiring: true, PinnedBy: []string{"t/x"}}}
	want := []compose.Result{
		{Severity: compose.SeverityNormal, Reason: "GoldenImported", Message: "Golden DataVolume ns/a is Succeeded: pools can clone Talos v1.0.0 from it."},
		{Severity: compose.SeverityNormal, Reason: "GoldenRetiring", Message: "Golden DataVolume ns/b left the catalog and is kept while t/x pin it."},
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
