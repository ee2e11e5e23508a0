package capacity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReplicas(t *testing.T) {
	cases := map[string]struct {
		reason string
		sc     *storagev1.StorageClass
		want   int32
	}{
		"NoClass":                    {reason: "Without a class, one copy is all that can be told.", want: 1},
		"OtherProvisioner":           {reason: "Ceph RBD's replication is its pool's, not the class's.", sc: &storagev1.StorageClass{Provisioner: "rbd.csi.ceph.com", Parameters: map[string]string{"placementCount": "3"}}, want: 1},
		"LINSTORDefault":             {reason: "linstor-csi defaults placementCount to 1.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR}, want: 1},
		"LINSTORPrefixed":            {reason: "cozystack's replicated class sets the prefixed key.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"linstor.csi.linbit.com/placementCount": "3"}}, want: 3},
		"LINSTORLegacyCase":          {reason: "linstor-csi matches keys without case, and autoPlace is the legacy name.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"AutoPlace": "2"}}, want: 2},
		"LINSTOREmptyIsOne":          {reason: "An empty count is 1 in linstor-csi.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"placementCount": ""}}, want: 1},
		"LINSTORNodeList":            {reason: "A node list places one diskful copy per node, whatever the count says.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"placementCount": "3", "linstor.csi.linbit.com/nodeList": "a b"}}, want: 2},
		"LINSTOROtherPrefix":         {reason: "Properties in other namespaces (DrbdOptions/...) are no count.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"DrbdOptions/placementCount": "5"}}, want: 1},
		"LINSTORBothNamesInKeyOrder": {reason: "A class setting both names is read in key order, the same on every call: the unprefixed placementCount sorts last.", sc: &storagev1.StorageClass{Provisioner: ProvisionerLINSTOR, Parameters: map[string]string{"linstor.csi.linbit.com/autoPlace": "3", "placementCount": "2"}}, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Repeated: map order must not decide the answer.
			for range 20 {
				if got, _ := Replicas(tc.sc); got != tc.want {
					t.Fatalf("%s\nReplicas() = %d, want %d", tc.reason, got, tc.want)
				}
			}
		})
	}
}

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestOf(t *testing.T) {
	objs := []storagev1.CSIStorageCapacity{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, StorageClassName: "replicated", Capacity: q("100Gi"), MaximumVolumeSize: q("50Gi")},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, StorageClassName: "replicated", Capacity: q("28Gi")},
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, StorageClassName: "other", Capacity: q("1Ti")},
	}
	got := Of("replicated", objs)
	want := Published{Known: true, Free: resource.MustParse("128Gi"), Segments: 2, LargestVolume: resource.MustParse("50Gi")}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("Of(): -want, +got:\n%s", diff)
	}
	if got := Of("unpublished", objs); got.Known {
		t.Errorf("Of() of a class without objects is known: %+v", got)
	}
}

func TestPredict(t *testing.T) {
	disk, golden := resource.MustParse("20Gi"), resource.MustParse("6Gi")
	pub := func(free string) Published { return Published{Known: true, Free: resource.MustParse(free)} }
	cases := map[string]struct {
		reason             string
		starting, replicas int32
		pub                Published
		wantFit            int32
		wantNeed           string
		wantTooLarge       bool
	}{
		"Unknown":       {reason: "Nothing published: everything asked for goes.", starting: 5, replicas: 3, wantFit: 5, wantNeed: "390Gi"},
		"AllFit":        {reason: "5 × (20Gi + 6Gi) × 3 = 390Gi fits in 400Gi.", starting: 5, replicas: 3, pub: pub("400Gi"), wantFit: 5, wantNeed: "390Gi"},
		"SomeFit":       {reason: "200Gi holds two clones of 78Gi.", starting: 5, replicas: 3, pub: pub("200Gi"), wantFit: 2, wantNeed: "390Gi"},
		"NoneFit":       {reason: "Less than one clone's 26Gi is free.", starting: 1, replicas: 1, pub: pub("25Gi"), wantFit: 0, wantNeed: "26Gi"},
		"NothingStarts": {reason: "No clone starts: nothing to fit.", starting: 0, replicas: 3, pub: pub("1Gi"), wantFit: 0, wantNeed: "0"},
		"TooLarge":      {reason: "A disk above every segment's maximumVolumeSize fits nowhere.", starting: 2, replicas: 1, pub: Published{Known: true, Free: resource.MustParse("1Ti"), LargestVolume: resource.MustParse("10Gi")}, wantFit: 0, wantNeed: "52Gi", wantTooLarge: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Predict(tc.starting, disk, golden, tc.replicas, "", tc.pub)
			if p.Fit != tc.wantFit || p.TooLarge != tc.wantTooLarge || p.Need.Cmp(resource.MustParse(tc.wantNeed)) != 0 {
				t.Errorf("%s\nPredict() = fit %d, need %s, too large %t; want fit %d, need %s, too large %t", tc.reason, p.Fit, p.Need.String(), p.TooLarge, tc.wantFit, tc.wantNeed, tc.wantTooLarge)
			}
		})
	}
}
