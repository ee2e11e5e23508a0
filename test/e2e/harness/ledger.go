package harness

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// ObjectKey names an object of a kind.
type ObjectKey struct{ Kind, Namespace, Name string }

func (k ObjectKey) String() string { return k.Kind + " " + joinNS(k.Namespace, k.Name) }

func joinNS(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Life is one object's life as a Ledger saw it: one UID, from when it was
// first seen to when it was seen gone.
type Life struct {
	UID types.UID
	// Baseline is true for an object that existed when the ledger started.
	Baseline   bool
	Seen, Gone time.Time
	// Created and Deleting are the apiserver's metadata.creationTimestamp
	// and the first metadata.deletionTimestamp the ledger saw (zero while
	// none): the server's clock, at one-second resolution.
	Created, Deleting time.Time
	// Node is true for a Machine once the ledger saw its status.nodeRef
	// set: it became a worker.
	Node bool
}

// Ledger records every object of some kinds in some namespaces that exists
// when it starts or appears while it runs, with its UID, and every one that
// goes. It watches through client-go informers, which list again after a
// watch breaks (an apiserver restart): an object created and deleted
// within one such gap is the only thing it can miss, and an object deleted
// in the gap is still recorded as gone (the informer's
// DeletedFinalStateUnknown).
type Ledger struct {
	namespaces map[string]bool
	// clusterPrefix keeps, of cluster-scoped objects, those whose name
	// starts with it.
	clusterPrefix string
	stop          chan struct{}

	mu    sync.Mutex
	lives map[ObjectKey][]*Life
}

// StartLedger starts recording kinds in namespaces, and cluster-scoped
// objects of kinds whose name starts with clusterPrefix, and returns once
// every informer has listed.
func (cp *ControlPlane) StartLedger(ctx context.Context, namespaces []string, clusterPrefix string, kinds ...schema.GroupVersionKind) (*Ledger, error) {
	l := &Ledger{namespaces: map[string]bool{}, clusterPrefix: clusterPrefix, stop: make(chan struct{}), lives: map[ObjectKey][]*Life{}}
	for _, ns := range namespaces {
		l.namespaces[ns] = true
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(cp.Dynamic, 0)
	var synced []cache.InformerSynced
	for _, k := range kinds {
		m, err := cp.Mapper.RESTMapping(k.GroupKind(), k.Version)
		if err != nil {
			cp.Mapper.Reset()
			if m, err = cp.Mapper.RESTMapping(k.GroupKind(), k.Version); err != nil {
				return nil, fmt.Errorf("ledger: no resource for %s: %w", k, err)
			}
		}
		inf := f.ForResource(m.Resource).Informer()
		kind := k.Kind
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, initial bool) { l.seen(kind, obj, initial) },
			// An update can carry an object the ledger has not seen under
			// this name: after a relist, a re-created object arrives as
			// an update of the old key.
			UpdateFunc: func(_, obj any) { l.seen(kind, obj, false) },
			DeleteFunc: func(obj any) { l.gone(kind, obj) },
		}); err != nil {
			return nil, err
		}
		synced = append(synced, inf.HasSynced)
	}
	f.Start(l.stop)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		close(l.stop)
		return nil, fmt.Errorf("ledger: informers did not list %v", kinds)
	}
	return l, nil
}

// Stop stops recording.
func (l *Ledger) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}

func objectOf(obj any) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

func (l *Ledger) key(kind string, u *unstructured.Unstructured) (ObjectKey, bool) {
	switch {
	case u == nil:
		return ObjectKey{}, false
	case u.GetNamespace() == "" && !strings.HasPrefix(u.GetName(), l.clusterPrefix):
		return ObjectKey{}, false
	case u.GetNamespace() != "" && !l.namespaces[u.GetNamespace()]:
		return ObjectKey{}, false
	}
	return ObjectKey{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName()}, true
}

func (l *Ledger) seen(kind string, obj any, initial bool) {
	u := objectOf(obj)
	k, ok := l.key(kind, u)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var deleting time.Time
	if d := u.GetDeletionTimestamp(); d != nil {
		deleting = d.Time
	}
	node, _, _ := unstructured.NestedMap(u.Object, "status", "nodeRef")
	lives := l.lives[k]
	if n := len(lives); n > 0 && lives[n-1].UID == u.GetUID() {
		if lives[n-1].Deleting.IsZero() {
			lives[n-1].Deleting = deleting
		}
		lives[n-1].Node = lives[n-1].Node || len(node) > 0
		return
	}
	if n := len(lives); n > 0 && lives[n-1].Gone.IsZero() {
		// Replaced without a delete event in between (in a watch gap).
		lives[n-1].Gone = time.Now()
	}
	l.lives[k] = append(lives, &Life{UID: u.GetUID(), Baseline: initial, Seen: time.Now(), Created: u.GetCreationTimestamp().Time, Deleting: deleting, Node: len(node) > 0})
}

func (l *Ledger) gone(kind string, obj any) {
	u := objectOf(obj)
	k, ok := l.key(kind, u)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, life := range l.lives[k] {
		if life.UID == u.GetUID() && life.Gone.IsZero() {
			life.Gone = time.Now()
		}
	}
}

// Entry is one life of one object.
type Entry struct {
	ObjectKey
	Life
}

// Entries returns every life recorded of kind (every kind when empty), in
// the namespace ns (every namespace when empty), sorted by key and time.
func (l *Ledger) Entries(kind, ns string) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	for k, lives := range l.lives {
		if (kind != "" && k.Kind != kind) || (ns != "" && k.Namespace != ns) {
			continue
		}
		for _, life := range lives {
			out = append(out, Entry{k, *life})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ObjectKey != out[j].ObjectKey {
			return out[i].String() < out[j].String()
		}
		return out[i].Seen.Before(out[j].Seen)
	})
	return out
}

// Created returns the objects of kind in ns that appeared after the ledger
// started.
func (l *Ledger) Created(kind, ns string) []Entry {
	var out []Entry
	for _, e := range l.Entries(kind, ns) {
		if !e.Baseline {
			out = append(out, e)
		}
	}
	return out
}

// Deleted returns the objects of kind in ns that went while the ledger ran.
func (l *Ledger) Deleted(kind, ns string) []Entry {
	var out []Entry
	for _, e := range l.Entries(kind, ns) {
		if !e.Gone.IsZero() {
			out = append(out, e)
		}
	}
	return out
}

// Lives returns every life recorded under key.
func (l *Ledger) Lives(key ObjectKey) []Life {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Life, 0, len(l.lives[key]))
	for _, life := range l.lives[key] {
		out = append(out, *life)
	}
	return out
}

// String lists every life, for a failure's log.
func (l *Ledger) String() string {
	var b strings.Builder
	for _, e := range l.Entries("", "") {
		gone := "-"
		if !e.Gone.IsZero() {
			gone = e.Gone.Format("15:04:05.000")
		}
		from := e.Seen.Format("15:04:05.000")
		if e.Baseline {
			from = "baseline"
		}
		fmt.Fprintf(&b, "  %s uid=%s seen=%s gone=%s\n", e.ObjectKey, e.UID, from, gone)
	}
	return b.String()
}

// Surplus is what Cluster API made beyond what its owner asked for and
// removed again itself, after an apiserver restart left its manager's
// caches behind: it rolls nothing the owner kept and replaces no worker, so
// a chaos run does not count it as made (Ledger.Surplus says which).
type Surplus struct {
	// MachineSets made for a MachineDeployment whose deletion had already
	// begun, and gone again.
	MachineSets []string
	// Machines of those MachineSets, and Machines made and gone again
	// without ever having a Node.
	Machines []string
	// Disks (DataVolumes and claims, named after their Machine as CAPK
	// names a VM's disks) of the surplus Machines.
	Disks []string
}

// Counts reports whether the object of kind named name is counted as made.
func (s Surplus) Counts(kind, name string) bool {
	switch kind {
	case "MachineSet":
		return !slices.Contains(s.MachineSets, name)
	case "Machine":
		return !slices.Contains(s.Machines, name)
	case "DataVolume", "PersistentVolumeClaim":
		return !slices.Contains(s.Disks, name)
	}
	return true
}

// Surplus names, in ns, what Cluster API made from stale caches while the
// ledger ran and removed again (Cluster API v1.11.4):
//   - A MachineSet made at or after (by the apiserver's timestamps) the
//     deletionTimestamp of the MachineDeployment it is named after
//     (computeNewMachineSetName: the deployment's name and a random
//     suffix), and gone again, and its Machines (named after it). The
//     MachineDeployment controller chooses between reconcileDelete and a
//     rollout on the deployment in its cache
//     (internal/controllers/machinedeployment/machinedeployment_controller.go,
//     Reconcile); when its MachineSet cache lists again before its
//     MachineDeployment cache, it sees the MachineSets gone but not the
//     deletion, makes one ("no MachineSets exist for the MachineDeployment",
//     machinedeployment_sync.go) and deletes it once its cache catches up.
//     The owner asked for the deployment's deletion: nothing kept is rolled.
//   - A Machine made and gone again without ever having a Node
//     (status.nodeRef), and its disks. The MachineSet controller counts
//     Machines from its cache and waits only stateConfirmationTimeout (10
//     s) for those it made to show there
//     (internal/controllers/machineset/machineset_controller.go,
//     syncReplicas and waitForMachineCreation); when the watch is down
//     longer, it makes the replicas again and deletes the surplus later,
//     by which time CAPK may have made a surplus Machine's VM and disk. A
//     Machine that never had a Node never was a worker. A worker replaced
//     had a Node, so it is still counted; the one way Cluster API replaces
//     a Machine before its Node is the health check's nodeStartupTimeout
//     (20 minutes by default, internal/defaults), longer than any chaos
//     step, and a roll makes a MachineSet, which is counted.
func (l *Ledger) Surplus(ns string) Surplus {
	var out Surplus
	surplus := map[string]bool{}
	machines := l.Created("Machine", ns)
	for _, ms := range l.Created("MachineSet", ns) {
		if ms.Gone.IsZero() || len(l.Lives(ms.ObjectKey)) != 1 {
			continue
		}
		i := strings.LastIndex(ms.Name, "-")
		if i <= 0 {
			continue
		}
		md := ObjectKey{Kind: "MachineDeployment", Namespace: ns, Name: ms.Name[:i]}
		if slices.ContainsFunc(l.Lives(md), func(life Life) bool {
			return !life.Deleting.IsZero() && !life.Deleting.After(ms.Created)
		}) {
			out.MachineSets = append(out.MachineSets, ms.Name)
			for _, m := range machines {
				if strings.HasPrefix(m.Name, ms.Name+"-") {
					surplus[m.Name] = true
				}
			}
		}
	}
	for _, m := range machines {
		if !m.Gone.IsZero() && !m.Node && len(l.Lives(m.ObjectKey)) == 1 {
			surplus[m.Name] = true
		}
	}
	for _, m := range machines {
		if surplus[m.Name] && !slices.Contains(out.Machines, m.Name) {
			out.Machines = append(out.Machines, m.Name)
		}
	}
	for _, d := range append(l.Created("DataVolume", ns), l.Created("PersistentVolumeClaim", ns)...) {
		if slices.ContainsFunc(out.Machines, func(m string) bool { return strings.HasPrefix(d.Name, m+"-") }) && !slices.Contains(out.Disks, d.Name) {
			out.Disks = append(out.Disks, d.Name)
		}
	}
	return out
}
