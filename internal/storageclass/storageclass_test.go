package storageclass

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func class(name string, ageDays int, ann ...string) storagev1.StorageClass {
	a := map[string]string{}
	for i := 0; i+1 < len(ann); i += 2 {
		a[ann[i]] = ann[i+1]
	}
	return storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{
		Name:              name,
		Annotations:       a,
		CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(ageDays) * 24 * time.Hour)),
	}}
}

func TestDefault(t *testing.T) {
	cases := map[string]struct {
		reason  string
		classes []storagev1.StorageClass
		want    Choice
	}{
		"NoClassesNoDefault": {
			reason: "With no StorageClass there is no default.",
			want:   Choice{},
		},
		"UnannotatedClassesNoDefault": {
			reason:  "Classes without a default annotation are never the default.",
			classes: []storagev1.StorageClass{class("local", 1), class("replicated", 2)},
			want:    Choice{},
		},
		"FalseIsIgnored": {
			reason:  "Only the string \"true\" marks a default.",
			classes: []storagev1.StorageClass{class("local", 1, AnnVirtDefault, "false", AnnDefault, "false")},
			want:    Choice{},
		},
		"VirtDefaultBeatsGADefault": {
			reason: "CDI binds a kubevirt DataVolume to the virtualization default before the GA default.",
			classes: []storagev1.StorageClass{
				class("ga", 5, AnnDefault, "true"),
				class("virt", 1, AnnVirtDefault, "true"),
			},
			want: Choice{Name: "virt", Annotation: AnnVirtDefault},
		},
		"NewestVirtDefaultWins": {
			reason: "Two virtualization defaults: the newest wins.",
			classes: []storagev1.StorageClass{
				class("old", 1, AnnVirtDefault, "true"),
				class("new", 3, AnnVirtDefault, "true"),
			},
			want: Choice{Name: "new", Annotation: AnnVirtDefault},
		},
		"GADefaultWhenNoVirtDefault": {
			reason: "Without a virtualization default the newest GA default wins.",
			classes: []storagev1.StorageClass{
				class("old", 1, AnnDefault, "true"),
				class("new", 2, AnnDefault, "true"),
				class("other", 9),
			},
			want: Choice{Name: "new", Annotation: AnnDefault},
		},
		"BetaOnlyClassIsNoDefault": {
			reason:  "CDI reads only the virt and GA annotations (common/util.go getFallbackStorageClass), so a beta-only class is no default and such a DataVolume gets no PVC.",
			classes: []storagev1.StorageClass{class("beta", 1, AnnBetaDefault, "true")},
			want:    Choice{},
		},
		"BetaOnlyClassNeverDisplacesAnUnmarkedChoice": {
			reason: "With a beta-only class and an unannotated one there is still no default.",
			classes: []storagev1.StorageClass{
				class("beta", 9, AnnBetaDefault, "true"),
				class("plain", 1),
			},
			want: Choice{},
		},
		"NewerBetaNeverDisplacesGA": {
			reason: "CDI reads only the GA annotation, so a newer beta-only class does not displace a GA default.",
			classes: []storagev1.StorageClass{
				class("ga", 1, AnnDefault, "true"),
				class("beta", 9, AnnBetaDefault, "true"),
			},
			want: Choice{Name: "ga", Annotation: AnnDefault},
		},
		"GAFalseOverridesBetaTrue": {
			reason:  "A class whose GA annotation says false is not a default because of its beta annotation.",
			classes: []storagev1.StorageClass{class("mixed", 1, AnnDefault, "false", AnnBetaDefault, "true")},
			want:    Choice{},
		},
		"EqualAgesTieBreakByName": {
			reason: "Equal creation times fall back to name order, independent of list order.",
			classes: []storagev1.StorageClass{
				class("zeta", 1, AnnDefault, "true"),
				class("alpha", 1, AnnDefault, "true"),
			},
			want: Choice{Name: "alpha", Annotation: AnnDefault},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Default(tc.classes)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func BenchmarkDefault(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		classes := make([]storagev1.StorageClass, 0, n)
		for i := range n {
			classes = append(classes, class(fmt.Sprintf("sc-%03d", i), i, AnnBetaDefault, "true"))
		}
		b.Run(fmt.Sprintf("classes=%d", n), func(b *testing.B) {
			for b.Loop() {
				Default(classes)
			}
		})
	}
}

func TestKubernetesDefault(t *testing.T) {
	cases := map[string]struct {
		reason  string
		classes []storagev1.StorageClass
		want    Choice
	}{
		"VirtDefaultIsNotTheKubernetesDefault": {
			reason: "GetStorageClassByNameWithK8sFallback looks up archive content: the virtualization default does not count.",
			classes: []storagev1.StorageClass{
				class("ga", 5, AnnDefault, "true"),
				class("virt", 7, AnnVirtDefault, "true"),
			},
			want: Choice{Name: "ga", Annotation: AnnDefault},
		},
		"OnlyAVirtDefaultIsNone": {
			reason:  "Without a GA default there is none.",
			classes: []storagev1.StorageClass{class("virt", 1, AnnVirtDefault, "true")},
			want:    Choice{},
		},
		"NewestGADefaultWins": {
			reason:  "Two GA defaults: the newest wins, as Kubernetes and CDI pick it.",
			classes: []storagev1.StorageClass{class("old", 1, AnnDefault, "true"), class("new", 3, AnnDefault, "true")},
			want:    Choice{Name: "new", Annotation: AnnDefault},
		},
		"BetaIsNone": {
			reason:  "CDI never reads the beta annotation.",
			classes: []storagev1.StorageClass{class("beta", 1, AnnBetaDefault, "true")},
			want:    Choice{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, KubernetesDefault(tc.classes)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
