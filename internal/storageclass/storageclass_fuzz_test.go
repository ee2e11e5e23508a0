package storageclass

import (
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDefault feeds Default three StorageClasses with arbitrary names,
// default-class annotation values and creation times. The answer must not
// depend on list order (CDI's choice does not), must be a class that carries
// the exact value "true" in the annotation it reports, must never be decided
// by the beta annotation (CDI does not read it), and must be empty only when
// no class carries a virt or GA one. Seed corpus: testdata/fuzz/FuzzDefault.
func FuzzDefault(f *testing.F) {
	f.Add("replicated", "true", "", int64(0), "local", "", "true", int64(1), "fast", "TRUE", "true", int64(1))
	f.Add("a", "", "true", int64(5), "b", "", "true", int64(5), "c", "", "", int64(5))
	f.Add("a", " true", "True", int64(-1), "b", "true\n", "yes", int64(0), "c", "1", "false", int64(2))
	f.Add("", "true", "true", int64(0), "", "true", "true", int64(0), "x", "", "", int64(0))
	f.Fuzz(func(t *testing.T, n1, virt1, ga1 string, age1 int64, n2, virt2, ga2 string, age2 int64, n3, beta3, ga3 string, age3 int64) {
		mk := func(name string, age int64, kv ...string) storagev1.StorageClass {
			ann := map[string]string{}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] != "" {
					ann[kv[i]] = kv[i+1]
				}
			}
			return storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann,
				CreationTimestamp: metav1.NewTime(time.Unix(age%(1<<40), 0).UTC())}}
		}
		cs := []storagev1.StorageClass{
			mk(n1, age1, AnnVirtDefault, virt1, AnnDefault, ga1),
			mk(n2, age2, AnnVirtDefault, virt2, AnnDefault, ga2),
			mk(n3, age3, AnnBetaDefault, beta3, AnnDefault, ga3),
		}
		want := Default(cs)
		for _, perm := range [][3]int{{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
			if got := Default([]storagev1.StorageClass{cs[perm[0]], cs[perm[1]], cs[perm[2]]}); got != want {
				t.Fatalf("Default depends on list order: %+v then %+v", want, got)
			}
		}
		any := false
		for _, c := range cs {
			if c.Annotations[AnnVirtDefault] == "true" || c.Annotations[AnnDefault] == "true" {
				any = true
			}
		}
		if want.Name == "" && want.Annotation == "" {
			if any {
				t.Fatalf("no default chosen although a class is marked: %+v", cs)
			}
			return
		}
		if want.Annotation == AnnBetaDefault {
			t.Fatalf("chose %+v by the beta annotation, which CDI never reads", want)
		}
		found := false
		for _, c := range cs {
			if c.Name == want.Name && c.Annotations[want.Annotation] == "true" {
				found = true
			}
		}
		if !found {
			t.Fatalf("chose %+v, which no class marks with \"true\"", want)
		}
	})
}
