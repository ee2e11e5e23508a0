package harness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

func TestSurplusMachines(t *testing.T) {
	now := time.Now()
	l := &Ledger{lives: map[ObjectKey][]*Life{}}
	add := func(kind, ns, name string, baseline, gone bool, uids ...types.UID) {
		k := ObjectKey{Kind: kind, Namespace: ns, Name: name}
		for _, uid := range uids {
			life := &Life{UID: uid, Baseline: baseline, Seen: now}
			if gone {
				life.Gone = now.Add(time.Second)
			}
			l.lives[k] = append(l.lives[k], life)
		}
	}
	const ns = "pool"
	// Made and gone without a disk: CAPI's surplus.
	add("Machine", ns, "ms-new-surplus", false, true, "a")
	// Made and gone after its disk appeared: it was a worker.
	add("Machine", ns, "ms-new-worker", false, true, "b")
	add("DataVolume", ns, "ms-new-worker-disk-system", false, false, "c")
	// A claim alone counts as a disk too.
	add("Machine", ns, "ms-new-claimed", false, true, "d")
	add("PersistentVolumeClaim", ns, "ms-new-claimed-disk-system", false, true, "e")
	// Made and still there.
	add("Machine", ns, "ms-new-alive", false, false, "f")
	// There before the step, gone in it (a roll's old Machine).
	add("Machine", ns, "ms-old", true, true, "g")
	// Made twice under one name: not a surplus, a replacement.
	add("Machine", ns, "ms-new-twice", false, true, "h", "i")
	// Another namespace's surplus.
	add("Machine", "other", "ms-other", false, true, "j")
	// A disk whose name only shares a prefix without the dash does not count.
	add("Machine", ns, "ms-new-x", false, true, "k")
	add("DataVolume", ns, "ms-new-xy-disk-system", false, false, "l")

	got := l.SurplusMachines(ns)
	want := []string{"ms-new-surplus", "ms-new-x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SurplusMachines(%q) (-want +got):\n%s", ns, diff)
	}
}
