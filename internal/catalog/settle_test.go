package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

func liveDV(url, storage string, class *string, phase cdiv1.DataVolumePhase) *cdiv1.DataVolume {
	dv := &cdiv1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "talos-worker-abc-v1.0.0", Namespace: "cozy-public"},
		Spec:       cdiv1.DataVolumeSpec{Source: &cdiv1.DataVolumeSource{HTTP: &cdiv1.DataVolumeSourceHTTP{URL: url}}, Storage: &cdiv1.StorageSpec{StorageClassName: class}},
		Status:     cdiv1.DataVolumeStatus{Phase: phase},
	}
	if storage != "" {
		dv.Spec.Storage.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(storage)}
	}
	return dv
}

func TestSettle(t *testing.T) {
	const (
		factoryURL = "https://factory.talos.dev/image/abc/v1.0.0/openstack-amd64.raw.xz"
		mirrorURL  = "https://factory.mirror.internal/talos/image/abc/v1.0.0/openstack-amd64.raw.xz"
	)
	repl, local := "replicated", "local"
	// want is the golden the catalog resolves: defaults on a mirror, 8Gi.
	want := Golden{Index: 2, Namespace: "cozy-public", Name: "talos-worker-abc-v1.0.0", SchematicID: "abc", Version: "v1.0.0",
		URL: mirrorURL, Storage: resource.MustParse("8Gi"), StorageText: "8Gi", StorageClass: "replicated"}
	explicitly := func(e explicit, f func(*Golden)) Golden {
		g := want
		g.Explicit = e
		if f != nil {
			f(&g)
		}
		return g
	}
	// madeAsLive is want as a live golden at factoryURL, 6Gi on replicated says it was made.
	madeAsLive := want
	madeAsLive.URL, madeAsLive.Storage, madeAsLive.StorageText = factoryURL, resource.MustParse("6Gi"), "6Gi"

	succeeded := liveDV(factoryURL, "6Gi", &repl, cdiv1.Succeeded)
	failing := liveDV(factoryURL, "6Gi", &repl, cdiv1.ImportInProgress)

	cases := map[string]struct {
		reason  string
		p       planned
		want    planned
		wantErr string
	}{
		"DefaultsChangedKeepASucceededGolden": {
			reason: "A mirror and a larger size set as catalog defaults apply to new goldens; a golden that succeeded keeps its URL and size, and its status says so.",
			p:      planned{Golden: want, Live: succeeded},
			want:   planned{Golden: madeAsLive, Live: succeeded},
		},
		"ExplicitMirrorIsNoConflict": {
			reason: "A mirror serves the same /image/<schematic>/<version>/ path: the entry's own URL on another host is not drift.",
			p:      planned{Golden: explicitly(explicit{URL: true}, nil), Live: succeeded},
			want:   planned{Golden: func() Golden { g := madeAsLive; g.Explicit.URL = true; return g }(), Live: succeeded},
		},
		"EqualQuantitiesAreNoConflict": {
			reason: "6144Mi is 6Gi.",
			p:      planned{Golden: explicitly(explicit{Storage: true}, func(g *Golden) { g.Storage, g.StorageText = resource.MustParse("6144Mi"), "6144Mi" }), Live: succeeded},
			want:   planned{Golden: func() Golden { g := madeAsLive; g.Explicit.Storage = true; return g }(), Live: succeeded},
		},
		"ExplicitSizeContradictsASucceededGolden": {
			reason: "A size written on the entry itself that its golden was not made with is refused, with a fix that can be done.",
			p:      planned{Golden: explicitly(explicit{Storage: true}, nil), Live: succeeded},
			wantErr: `XWorkerImageCatalog "default": images[2].storage is "8Gi", but golden DataVolume cozy-public/talos-worker-abc-v1.0.0 was made with 6Gi and a DataVolume's size cannot change: remove images[2].storage or set it to 6Gi (the golden's size only bounds the pools' diskSize from below). ` +
				`A golden is imported once and its DataVolume's spec is immutable; a catalog-wide default (spec.imageFactoryURL, spec.storage, the Input's) applies to new goldens only, but a value written on the entry itself must match the golden it names`,
		},
		"ExplicitURLOfAnotherImageContradicts": {
			reason: "A URL that names another image than the golden holds is refused, with the credential in neither URL echoed.",
			p:      planned{Golden: explicitly(explicit{URL: true}, nil), Live: liveDV("https://u:secret@old.internal/other/path.raw.xz", "8Gi", &repl, cdiv1.Succeeded)},
			wantErr: `XWorkerImageCatalog "default": images[2].imageFactoryURL makes the source "` + mirrorURL + `", but golden DataVolume cozy-public/talos-worker-abc-v1.0.0 imported another image, "https://REDACTED@old.internal/other/path.raw.xz": remove images[2].imageFactoryURL, or point it at a factory or mirror that serves /image/abc/v1.0.0/. ` +
				`A golden is imported once and its DataVolume's spec is immutable; a catalog-wide default (spec.imageFactoryURL, spec.storage, the Input's) applies to new goldens only, but a value written on the entry itself must match the golden it names`,
		},
		"FailingUnheldGoldenIsRecreatedOnTheMirror": {
			reason: "A golden that never succeeded and that nothing holds has nothing to keep: it is re-created with what the catalog imports now.",
			p:      planned{Golden: want, Live: failing},
			want:   planned{Golden: want, Live: failing, Recreate: true, Changes: []string{"source URL", "size"}},
		},
		"ExplicitValuesOnAnUnheldGoldenRecreateIt": {
			reason: "An explicit value on an entry whose golden never succeeded is no contradiction: the golden is made again.",
			p:      planned{Golden: explicitly(explicit{Storage: true}, func(g *Golden) { g.StorageClass = local }), Live: failing},
			want: planned{Golden: explicitly(explicit{Storage: true}, func(g *Golden) { g.StorageClass = local }), Live: failing, Recreate: true,
				Changes: []string{"source URL", "size", "StorageClass"}},
		},
		"CACredentialsAndChecksumRecreateAnUnheldGolden": {
			reason: "A golden failing for want of a CA or credentials gets them by being made again.",
			p: planned{Golden: func() Golden {
				g := madeAsLive
				g.Import = importSource{CertConfigMap: "workerimage-factory-ca-default", SecretRef: "factory-auth", Checksum: "sha256:00"}
				return g
			}(), Live: failing},
			want: planned{Golden: func() Golden {
				g := madeAsLive
				g.Import = importSource{CertConfigMap: "workerimage-factory-ca-default", SecretRef: "factory-auth", Checksum: "sha256:00"}
				return g
			}(), Live: failing, Recreate: true, Changes: []string{"CA", "credentials", "checksum"}},
		},
		"CAAddedKeepsASucceededGolden": {
			reason: "Adding a CA, credentials or a checksum changes no golden that succeeded.",
			p: planned{Golden: func() Golden {
				g := want
				g.Import = importSource{CertConfigMap: "workerimage-factory-ca-default", SecretRef: "factory-auth"}
				return g
			}(), Live: succeeded},
			want: planned{Golden: madeAsLive, Live: succeeded},
		},
		"UnchangedFailingGoldenIsKept": {
			reason: "A golden whose import would be made the same way is left to CDI's retries.",
			p:      planned{Golden: madeAsLive, Live: failing},
			want:   planned{Golden: madeAsLive, Live: failing},
		},
		"PinnedGoldenIsNeverRecreated": {
			reason: "A template that pins a golden keeps it whatever its state.",
			p:      planned{Golden: want, Live: failing, PinnedBy: []string{"tenant-a/t"}},
			want:   planned{Golden: madeAsLive, Live: failing, PinnedBy: []string{"tenant-a/t"}},
		},
		"RetiringGoldenIsLeftAsItIs": {
			reason: "A golden no longer in the catalog is already rebuilt from its DataVolume.",
			p:      planned{Golden: want, Live: failing, Retiring: true},
			want:   planned{Golden: want, Live: failing, Retiring: true},
		},
		"OlderChartsSpecPVCIsRead": {
			reason: "A golden an older chart made with spec.pvc keeps its size and class as that spec says.",
			p: planned{Golden: want, Live: func() *cdiv1.DataVolume {
				dv := liveDV(factoryURL, "", nil, cdiv1.Succeeded)
				dv.Spec.Storage = nil
				dv.Spec.PVC = &corev1.PersistentVolumeClaimSpec{StorageClassName: &repl, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("6Gi")}}}
				return dv
			}()},
			want: planned{Golden: madeAsLive},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			plan := []planned{tc.p}
			err := settle("default", plan)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("%s\n-want error, +got error:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			got := plan[0]
			ignore := cmpopts.IgnoreFields(planned{}, "Live")
			if diff := cmp.Diff(tc.want, got, ignore, cmpopts.EquateEmpty(), cmp.AllowUnexported(importSource{}, explicit{}), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
