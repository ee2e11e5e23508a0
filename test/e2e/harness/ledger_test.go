package harness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// at is a time in the step, in seconds from its start.
func at(s int) time.Time { return time.Date(2026, 12, 4, 20, 0, s, 0, time.UTC) }

// made is an object made in the step at second from (by the apiserver's
// creationTimestamp, seen then too) and, when to > 0, deleted at second to.
func made(uid types.UID, from, to int) Life {
	l := Life{UID: uid, Seen: at(from), Created: at(from)}
	if to > 0 {
		l.Deleting, l.Gone = at(to), at(to)
	}
	return l
}

// worker is a Machine's life once it had a Node.
func worker(l Life) Life {
	l.Node = true
	return l
}

// before is an object there when the step began and, when to > 0,
// deleted at second to.
func before(uid types.UID, to int) Life {
	l := made(uid, 0, to)
	l.Baseline = true
	return l
}

func TestSurplus(t *testing.T) {
	type object struct {
		kind, name string
		lives      []Life
	}
	cases := []struct {
		name    string
		objects []object
		want    Surplus
	}{{
		// Chaos run 2, PoolRoll under the apiserver restart: the new
		// MachineSet made its 2 Machines again and deleted 2 before they
		// had a disk.
		name: "made again and deleted before a disk",
		objects: []object{
			{"MachineSet", "md-old", []Life{before("s0", 60)}},
			{"MachineSet", "md-new", []Life{made("s1", 5, 0)}},
			{"Machine", "md-new-a", []Life{worker(made("a", 10, 0))}},
			{"Machine", "md-new-b", []Life{worker(made("b", 10, 0))}},
			{"Machine", "md-new-c", []Life{made("c", 21, 27)}},
			{"Machine", "md-new-d", []Life{made("d", 21, 27)}},
			{"DataVolume", "md-new-a-disk-system", []Life{made("da", 30, 0)}},
			{"DataVolume", "md-new-b-disk-system", []Life{made("db", 30, 0)}},
		},
		want: Surplus{Machines: []string{"md-new-c", "md-new-d"}},
	}, {
		// Chaos run 5, PoolRoll under the apiserver restart: one surplus
		// Machine lived long enough for CAPK to make its disk, not a Node.
		name: "made again and deleted after its disk",
		objects: []object{
			{"MachineSet", "md-new", []Life{made("s1", 0, 0)}},
			{"Machine", "md-new-a", []Life{made("a", 24, 43)}},
			{"Machine", "md-new-b", []Life{worker(made("b", 24, 0))}},
			{"Machine", "md-new-c", []Life{worker(made("c", 26, 0))}},
			{"Machine", "md-new-d", []Life{made("d", 26, 44)}},
			{"DataVolume", "md-new-d-disk-system", []Life{made("dd", 41, 42)}},
			{"PersistentVolumeClaim", "md-new-d-disk-system", []Life{made("pd", 42, 43)}},
			{"DataVolume", "md-new-b-disk-system", []Life{made("db", 42, 0)}},
		},
		want: Surplus{
			Machines: []string{"md-new-a", "md-new-d"},
			Disks:    []string{"md-new-d-disk-system"},
		},
	}, {
		// A worker that had a Node, deleted and made again: replaced,
		// counted.
		name: "replaced worker",
		objects: []object{
			{"MachineSet", "md-a", []Life{before("s", 0)}},
			{"Machine", "md-a-y", []Life{worker(made("y", 5, 20))}},
			{"DataVolume", "md-a-y-disk-system", []Life{made("dy", 6, 21)}},
			{"Machine", "md-a-z", []Life{worker(made("z", 21, 0))}},
		},
		want: Surplus{},
	}, {
		// A baseline Machine deleted, even without a Node: not made in
		// the step.
		name: "baseline machine deleted",
		objects: []object{
			{"MachineSet", "md-a", []Life{before("s", 0)}},
			{"Machine", "md-a-x", []Life{before("x", 10)}},
		},
		want: Surplus{},
	}, {
		// Chaos run 4, PoolDeletionWaitingOnMachines under the apiserver
		// restart: a MachineSet made 29 s after its deployment's deletion.
		name: "made for a deployment being deleted",
		objects: []object{
			{"MachineDeployment", "md", []Life{{UID: "d", Baseline: true, Deleting: at(13), Gone: at(45)}}},
			{"MachineSet", "md-old", []Life{before("s0", 41)}},
			{"Machine", "md-old-a", []Life{worker(before("a", 41))}},
			{"MachineSet", "md-new", []Life{made("s1", 42, 45)}},
			// Even a Machine of it that had a Node: a MachineSet of a
			// deployment being deleted is no roll.
			{"Machine", "md-new-b", []Life{worker(made("b", 42, 45))}},
			{"DataVolume", "md-new-b-disk-system", []Life{made("db", 43, 44)}},
			// Made in the very second of the deletion: surplus too.
			{"MachineSet", "md-same", []Life{made("s2", 13, 14)}},
			// Made before the deletion began: a roll, counted.
			{"MachineSet", "md-roll", []Life{made("s3", 12, 14)}},
			// Still there at the end: counted.
			{"MachineSet", "md-kept", []Life{made("s4", 20, 0)}},
		},
		want: Surplus{
			MachineSets: []string{"md-new", "md-same"},
			Machines:    []string{"md-new-b"},
			Disks:       []string{"md-new-b-disk-system"},
		},
	}, {
		name: "deployment not being deleted",
		objects: []object{
			{"MachineDeployment", "md", []Life{{UID: "d", Baseline: true}}},
			{"MachineSet", "md-new", []Life{made("s1", 42, 45)}},
			// The MachineSet of a deployment the ledger never saw.
			{"MachineSet", "other-new", []Life{made("s2", 42, 45)}},
		},
		want: Surplus{},
	}, {
		name: "made and gone with or without a Node",
		objects: []object{
			{"MachineSet", "ms", []Life{before("s", 50)}},
			{"Machine", "ms-nonode", []Life{made("a", 1, 2)}},
			{"Machine", "ms-worker", []Life{worker(made("b", 1, 9))}},
			// Made and still there, without a Node yet.
			{"Machine", "ms-alive", []Life{made("d", 1, 0)}},
			// Made twice under one name: a replacement, counted.
			{"Machine", "ms-twice", []Life{made("e", 1, 2), made("f", 3, 4)}},
			// Its disk; a disk whose name only shares a prefix without the
			// dash is not.
			{"Machine", "ms-x", []Life{made("g", 1, 2)}},
			{"DataVolume", "ms-x-disk-system", []Life{made("h", 1, 2)}},
			{"DataVolume", "ms-xy-disk-system", []Life{made("i", 1, 0)}},
			// A disk there before the step is never the surplus's.
			{"PersistentVolumeClaim", "ms-nonode-old", []Life{before("j", 0)}},
		},
		want: Surplus{Machines: []string{"ms-nonode", "ms-x"}, Disks: []string{"ms-x-disk-system"}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &Ledger{lives: map[ObjectKey][]*Life{}}
			for _, o := range tc.objects {
				k := ObjectKey{Kind: o.kind, Namespace: "pool", Name: o.name}
				for _, life := range o.lives {
					l.lives[k] = append(l.lives[k], &life)
				}
			}
			// Another namespace's surplus is not this one's.
			l.lives[ObjectKey{Kind: "Machine", Namespace: "other", Name: "ms-other"}] = []*Life{new(made("o", 1, 2))}
			if diff := cmp.Diff(tc.want, l.Surplus("pool")); diff != "" {
				t.Errorf("Surplus (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSeenRecordsServerTimesAndNode: the ledger keeps the apiserver's
// creation and first deletion timestamps and whether a Machine ever had a
// Node, across the updates of one object.
func TestSeenRecordsServerTimesAndNode(t *testing.T) {
	l := &Ledger{namespaces: map[string]bool{"pool": true}, lives: map[ObjectKey][]*Life{}}
	m := &unstructured.Unstructured{}
	m.SetNamespace("pool")
	m.SetName("ms-a")
	m.SetUID("a")
	m.SetCreationTimestamp(metav1.NewTime(at(1)))
	l.seen("Machine", m, false)
	withNode := m.DeepCopy()
	_ = unstructured.SetNestedField(withNode.Object, "ms-a", "status", "nodeRef", "name")
	l.seen("Machine", withNode, false)
	deleting := m.DeepCopy() // a later update without the nodeRef keeps Node
	deleting.SetDeletionTimestamp(new(metav1.NewTime(at(5))))
	l.seen("Machine", deleting, false)
	later := deleting.DeepCopy()
	later.SetDeletionTimestamp(new(metav1.NewTime(at(9))))
	l.seen("Machine", later, false)
	got := l.Lives(ObjectKey{Kind: "Machine", Namespace: "pool", Name: "ms-a"})
	want := []Life{{UID: "a", Created: at(1), Deleting: at(5), Node: true}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Life{}, "Seen")); diff != "" {
		t.Errorf("lives (-want +got):\n%s", diff)
	}
}
