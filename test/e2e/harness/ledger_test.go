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

func TestSurplusMachineSets(t *testing.T) {
	now := time.Now()
	deleted := now.Add(-time.Minute)
	l := &Ledger{lives: map[ObjectKey][]*Life{}}
	add := func(kind, name string, life Life, more ...Life) {
		k := ObjectKey{Kind: kind, Namespace: "pool", Name: name}
		for _, lf := range append([]Life{life}, more...) {
			l.lives[k] = append(l.lives[k], &lf)
		}
	}
	made := func(uid types.UID, created time.Time) Life {
		return Life{UID: uid, Seen: now, Gone: now.Add(time.Second), Created: created}
	}
	// A deployment being deleted since before its MachineSets below were made.
	add("MachineDeployment", "md-deleted", Life{UID: "md1", Baseline: true, Seen: now, Gone: now.Add(time.Second), Deleting: deleted})
	// Made after the deletion began, gone, its only Machine a surplus: CAPI's stale cache.
	add("MachineSet", "md-deleted-aaaaa", made("a", now))
	add("Machine", "md-deleted-aaaaa-m1", made("a1", now))
	// Made after the deletion began, but a Machine of it got a disk: a worker.
	add("MachineSet", "md-deleted-bbbbb", made("b", now))
	add("Machine", "md-deleted-bbbbb-m1", made("b1", now))
	add("DataVolume", "md-deleted-bbbbb-m1-disk-system", Life{UID: "b2", Seen: now})
	// Made after the deletion began and no Machine at all: surplus too.
	add("MachineSet", "md-deleted-ccccc", made("c", now))
	// Made before the deletion began: a roll, counted.
	add("MachineSet", "md-deleted-ddddd", made("d", deleted.Add(-time.Second)))
	// Made in the very second the deletion was recorded: surplus.
	add("MachineSet", "md-deleted-eeeee", made("e", deleted))
	// Made and still there.
	add("MachineSet", "md-deleted-fffff", Life{UID: "f", Seen: now, Created: now})
	// A deployment never deleted: its new MachineSet is a roll, counted.
	add("MachineDeployment", "md-kept", Life{UID: "md2", Baseline: true, Seen: now})
	add("MachineSet", "md-kept-ggggg", made("g", now))
	// The MachineSet of a deployment the ledger never saw: counted.
	add("MachineSet", "md-unseen-hhhhh", made("h", now))
	// A baseline MachineSet gone with its deployment: not made in the step.
	add("MachineSet", "md-deleted-iiiii", Life{UID: "i", Baseline: true, Seen: now, Gone: now.Add(time.Second), Created: deleted.Add(-time.Hour)})

	got := l.SurplusMachineSets("pool")
	want := []string{"md-deleted-aaaaa", "md-deleted-ccccc", "md-deleted-eeeee"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SurplusMachineSets (-want +got):\n%s", diff)
	}
}
