package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// These scenarios prove the golden's deletion protection and the clone
// grant wait against the real kube-apiserver, Crossplane's usage controller
// and its nousages webhook. The Crossplane v2.2.0 behaviour relied on:
//   - the usage controller labels a Usage's spec.of object
//     crossplane.io/in-use=true, marks the Usage Ready=True (Available) and
//     adds its spec.by object as an owner of the Usage
//     (internal/controller/protection/usage/reconciler.go);
//   - the webhook refuses DELETE of a labelled object while a Usage of it
//     exists, answering 409 with "This resource is in-use by N usage(s),
//     including the ... "<usage>" (in namespace "<ns>") by resource
//     <Kind>/<name>." and recording the refused propagation policy in the
//     annotation usage.crossplane.io/deletion-attempt-with-policy
//     (internal/webhook/protection/usage/handler.go, inUseMessage);
//   - a composed Usage being deleted waits (re-checking every 30 s,
//     waitPollInterval) until its spec.by object is gone, then removes the
//     label and, with replayDeletion, re-issues the recorded delete about 2 s
//     later, logging "Replaying deletion of the used resource"
//     (reconciler.go);
//   - Crossplane v2 removes a deleted composite's finalizer and leaves its
//     composed resources to the garbage collector
//     (internal/controller/apiextensions/composite/reconciler.go, WasDeleted);
//   - a composite whose function sets its readiness to READY_FALSE gets
//     Ready=False with reason Creating and no "Unready resources" message;
//     that message appears only when readiness is derived from composed
//     resources (composition_functions.go reads Desired.Composite.Ready;
//     reconciler.go "If the composer explicitly specified the XR's
//     readiness it supersedes readiness derived from composed resources");
//   - realtime compositions are on by default (cmd/crossplane/core/core.go,
//     EnableRealtimeCompositions default:"true"): a write to any composed
//     resource reconciles its composite at once, otherwise it is called
//     again after the function's TTL. The golden DataVolume is composed by
//     the catalog, so the usage controller labelling it wakes the catalog;
//     the Usages are composed by the pool, so their status wakes the pool.

// usageTargets name the two Usages a pool composes per clone template,
// <template>-<suffix>, and the golden object each protects.
var usageTargets = []struct {
	suffix string
	gvk    schema.GroupVersionKind
}{
	{"datavolume", harness.DataVolume},
	{"pvc", harness.PVC},
}

// usageNames are the Usages the pool composes for template.
func usageNames(template string) []string {
	out := make([]string, 0, len(usageTargets))
	for _, u := range usageTargets {
		out = append(out, template+"-"+u.suffix)
	}
	return out
}

// gateOf returns the pool's status.gate state and reason.
func gateOf(xr *unstructured.Unstructured) (state, reason string) {
	state, _, _ = unstructured.NestedString(xr.Object, "status", "gate", "state")
	reason, _, _ = unstructured.NestedString(xr.Object, "status", "gate", "reason")
	return state, reason
}

// builtinPool applies a builtin (clone) pool <cluster>-workers in ns on
// schematic sid, deleted when the test ends (registered after the catalog,
// so it goes first), and waits for its clone template.
func builtinPool(t *testing.T, ns, cluster, sid string) (xr, kmt *unstructured.Unstructured) {
	t.Helper()
	xr = poolXR(ns, cluster, sid, "{builtin: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	kmt = poolTemplate(t, reconcileTimeout, ns, xr.GetName())
	if d := diskSourceOf(kmt); d.CloneFrom != goldenNamespace+"/"+goldenName(sid) {
		t.Fatalf("KubevirtMachineTemplate %s/%s: system disk %+v, want a clone of %s/%s", ns, kmt.GetName(), d, goldenNamespace, goldenName(sid))
	}
	return xr, kmt
}

// waitGoldenPinned waits until the pool's two Usages for template are
// enforced: each Ready=True, owned by the template, with the spec the
// function promises (of the golden DataVolume or PVC in the golden
// namespace, by the template, replayDeletion, a reason naming the pool),
// and the golden DataVolume and its PVC labelled in-use.
func waitGoldenPinned(t *testing.T, pool *unstructured.Unstructured, template *unstructured.Unstructured, golden string) {
	t.Helper()
	ns := pool.GetNamespace()
	for _, target := range usageTargets {
		name := template.GetName() + "-" + target.suffix
		u := cp.WaitCondition(t, reconcileTimeout, harness.Usage, ns, name, "Ready", "True")
		if err := usageSpecIs(u, target.gvk, golden, template, pool); err != nil {
			t.Errorf("Usage %s/%s: %v", ns, name, err)
		}
		cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s/%s to be labelled %s=true", target.gvk.Kind, goldenNamespace, golden, harness.InUseLabel), func(ctx context.Context) error {
			o, err := cp.Existing(ctx, target.gvk, goldenNamespace, golden)
			if err != nil {
				return err
			}
			if o.GetLabels()[harness.InUseLabel] != "true" {
				return fmt.Errorf("labels are %v", o.GetLabels())
			}
			return nil
		})
	}
}

// usageSpecIs checks a Usage the pool composed against what the function
// promises for template's golden object of kind of.
func usageSpecIs(u *unstructured.Unstructured, of schema.GroupVersionKind, golden string, template, pool *unstructured.Unstructured) error {
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, append([]string{"spec"}, path...)...)
		return s
	}
	replay, _, _ := unstructured.NestedBool(u.Object, "spec", "replayDeletion")
	type view struct {
		Of, By string
		Replay bool
	}
	got := view{
		Of:     fmt.Sprintf("%s %s %s/%s", str("of", "apiVersion"), str("of", "kind"), str("of", "resourceRef", "namespace"), str("of", "resourceRef", "name")),
		By:     fmt.Sprintf("%s %s %s", str("by", "apiVersion"), str("by", "kind"), str("by", "resourceRef", "name")),
		Replay: replay,
	}
	want := view{
		Of:     fmt.Sprintf("%s %s %s/%s", of.GroupVersion().String(), of.Kind, goldenNamespace, golden),
		By:     fmt.Sprintf("%s %s %s", template.GetAPIVersion(), template.GetKind(), template.GetName()),
		Replay: true,
	}
	if got != want {
		return fmt.Errorf("spec is %+v, want %+v", got, want)
	}
	if ref := pool.GetNamespace() + "/" + pool.GetName(); !strings.Contains(str("reason"), ref) {
		return fmt.Errorf("spec.reason %q does not name the pool %s", str("reason"), ref)
	}
	owned := false
	for _, o := range u.GetOwnerReferences() {
		owned = owned || o.UID == template.GetUID()
	}
	if !owned {
		return fmt.Errorf("Ready but not owned by its user %s (uid %s); owners %v", template.GetName(), template.GetUID(), u.GetOwnerReferences())
	}
	return nil
}

// goldenKept returns a check that the golden DataVolume and its PVC exist,
// are not being deleted and are still labelled in-use.
func goldenKept(golden string) func(context.Context) error {
	return func(ctx context.Context) error {
		for _, target := range usageTargets {
			o, err := cp.Existing(ctx, target.gvk, goldenNamespace, golden)
			if err != nil {
				return err
			}
			if o.GetDeletionTimestamp() != nil {
				return fmt.Errorf("%s %s/%s is being deleted (deletionTimestamp %v, finalizers %v)", target.gvk.Kind, goldenNamespace, golden, o.GetDeletionTimestamp(), o.GetFinalizers())
			}
			if o.GetLabels()[harness.InUseLabel] != "true" {
				return fmt.Errorf("%s %s/%s lost its %s label: labels %v", target.gvk.Kind, goldenNamespace, golden, harness.InUseLabel, o.GetLabels())
			}
		}
		return nil
	}
}

// heldNotReady returns a check that the pool is held with reason (see
// isHeldNotReady).
func heldNotReady(ns, name, reason string) func(context.Context) error {
	return func(ctx context.Context) error {
		xr, err := cp.Existing(ctx, harness.NodePool, ns, name)
		if err != nil {
			return err
		}
		return isHeldNotReady(xr, reason)
	}
}

// isHeldNotReady returns nil when the pool is held with reason: gate
// Held/reason, WorkerImageReady=False/reason, and Ready=False from the
// function's explicit composite readiness (no "Unready resources" message,
// see the top of this file).
func isHeldNotReady(xr *unstructured.Unstructured, reason string) error {
	if state, r := gateOf(xr); state != "Held" || r != reason {
		return fmt.Errorf("status.gate is %s/%s, want Held/%s; conditions %s", state, r, reason, harness.ConditionsString(xr))
	}
	if c := harness.Condition(xr, "WorkerImageReady"); c == nil || c["status"] != "False" || c["reason"] != reason {
		return fmt.Errorf("WorkerImageReady is %v, want False/%s", c, reason)
	}
	c := harness.Condition(xr, "Ready")
	if c == nil || c["status"] != "False" {
		return fmt.Errorf("Ready is %v, want False while held; conditions %s", c, harness.ConditionsString(xr))
	}
	if msg, _ := c["message"].(string); strings.Contains(msg, "Unready resources") {
		return fmt.Errorf("Ready=False comes from unready composed resources (%q), not from the held pool's own readiness", msg)
	}
	return nil
}

// bindsServiceAccount reports whether the RoleBinding lists ServiceAccount
// ns/name as a subject.
func bindsServiceAccount(rb *unstructured.Unstructured, ns, name string) bool {
	subjects, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
	for _, s := range subjects {
		m, _ := s.(map[string]any)
		if m["kind"] == "ServiceAccount" && m["namespace"] == ns && m["name"] == name {
			return true
		}
	}
	return false
}

// waitQuiet waits until the object's resourceVersion has not changed for
// quiet: nothing, the object's own controller included, has written it
// for that long.
func waitQuiet(t *testing.T, gvk schema.GroupVersionKind, ns, name string, quiet time.Duration) {
	t.Helper()
	var last string
	var since time.Time
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("%s %s to go %s without a write", gvk.Kind, name, quiet), func(ctx context.Context) error {
		u, err := cp.Existing(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if rv := u.GetResourceVersion(); rv != last {
			last, since = rv, time.Now()
		}
		if d := time.Since(since); d < quiet {
			return fmt.Errorf("last written %s ago (resourceVersion %s); conditions %s", d.Round(time.Millisecond), last, harness.ConditionsString(u))
		}
		return nil
	})
}

// followed names what a timeline watches: the objects of gvk in ns, or the
// one named name.
type followed struct {
	gvk      schema.GroupVersionKind
	ns, name string
}

// sighting is one watch event of a followed object.
type sighting struct {
	At   time.Time // when the suite received it
	Type watch.EventType
	Obj  *unstructured.Unstructured
	// Rev is the object's resourceVersion as a number. The kube-apiserver's
	// etcd3 storage sets it to the etcd revision of the write
	// (k8s.io/apiserver pkg/storage/etcd3/store.go), one counter for every
	// kind in the one etcd, so comparing two orders their writes.
	Rev int64
}

// Kind is the followed object's kind.
func (s sighting) Kind() string { return s.Obj.GetKind() }

// timeline records the watch events of the followed objects, from before an
// action to the end of the test. A watch delivers every write, however
// short-lived the state it shows; polls can miss it.
type timeline struct {
	mu     sync.Mutex
	seen   []sighting
	broken []string
	// resumed lists the watches that ended early and were resumed.
	resumed []string
}

// follow starts one watch per target and records their events until the
// test ends.
func follow(t *testing.T, targets ...followed) *timeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tl := &timeline{}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, f := range targets {
		ri, err := cp.Resource(f.gvk, f.ns)
		if err != nil {
			t.Fatal(err)
		}
		opts := metav1.ListOptions{}
		if f.name != "" {
			opts.FieldSelector = "metadata.name=" + f.name
		}
		// No resourceVersion: the watch first sends the objects that exist
		// as ADDED, then every change. Bookmarks keep the last
		// resourceVersion current between changes.
		opts.AllowWatchBookmarks = true
		w, err := ri.Watch(ctx, opts)
		if err != nil {
			t.Fatalf("cannot watch %s %s: %v", f.gvk.Kind, joinName(f.ns, f.name), err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := f.gvk.Kind + " " + joinName(f.ns, f.name)
			for rv := ""; ; {
				for ev := range w.ResultChan() {
					u, ok := ev.Object.(*unstructured.Unstructured)
					tl.mu.Lock()
					switch {
					case ev.Type == watch.Error || !ok:
						tl.broken = append(tl.broken, fmt.Sprintf("watch of %s: %s %v", what, ev.Type, ev.Object))
					case ev.Type == watch.Bookmark:
						rv = u.GetResourceVersion()
					default:
						rv = u.GetResourceVersion()
						rev, _ := strconv.ParseInt(rv, 10, 64)
						tl.seen = append(tl.seen, sighting{At: time.Now(), Type: ev.Type, Obj: u, Rev: rev})
					}
					tl.mu.Unlock()
				}
				w.Stop()
				if ctx.Err() != nil {
					return
				}
				// The server or the connection ended the watch (a loaded
				// machine can miss client-go's HTTP/2 health check and
				// drop the connection every watch shares). Resume from
				// the last resourceVersion seen, as client-go's
				// RetryWatcher does: no write is lost; an expired
				// resourceVersion comes back as an Error event above.
				tl.mu.Lock()
				tl.resumed = append(tl.resumed, fmt.Sprintf("%s at resourceVersion %q", what, rv))
				tl.mu.Unlock()
				o := opts
				o.ResourceVersion = rv
				if w, err = ri.Watch(ctx, o); err != nil {
					if ctx.Err() == nil {
						tl.mu.Lock()
						tl.broken = append(tl.broken, fmt.Sprintf("watch of %s ended early and cannot be resumed: %v", what, err))
						tl.mu.Unlock()
					}
					return
				}
			}
		}()
	}
	return tl
}

// all returns the sightings that match, in resourceVersion order.
func (tl *timeline) all(match func(sighting) bool) []sighting {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var out []sighting
	for _, s := range tl.seen {
		if match(s) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rev < out[j].Rev })
	return out
}

// first returns the earliest sighting that matches.
func (tl *timeline) first(match func(sighting) bool) (sighting, bool) {
	if all := tl.all(match); len(all) > 0 {
		return all[0], true
	}
	return sighting{}, false
}

// err reports a watch that failed or ended before the test did.
func (tl *timeline) err() error {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if len(tl.broken) > 0 {
		return fmt.Errorf("the timeline is incomplete: %s", strings.Join(tl.broken, "; "))
	}
	return nil
}

// String lists the sightings in resourceVersion order, with what each
// showed of the pool's gate and the RoleBinding's subjects.
func (tl *timeline) String() string {
	var b strings.Builder
	all := tl.all(func(sighting) bool { return true })
	for _, s := range all {
		detail := ""
		switch s.Kind() {
		case "XNodePool":
			state, reason := gateOf(s.Obj)
			detail = fmt.Sprintf(" gate=%s/%s Ready=%s", state, reason, harness.ConditionStatus(s.Obj, "Ready"))
		case "RoleBinding":
			subjects, _, _ := unstructured.NestedSlice(s.Obj.Object, "subjects")
			detail = fmt.Sprintf(" subjects=%v", subjects)
		case "DataVolume":
			detail = fmt.Sprintf(" %s=%q", harness.InUseLabel, s.Obj.GetLabels()[harness.InUseLabel])
		}
		fmt.Fprintf(&b, "  %s rv=%d %-8s %s %s%s\n", s.At.Format("15:04:05.000"), s.Rev, s.Type, s.Kind(), s.Obj.GetName(), detail)
	}
	return b.String()
}

// joinName is ns/name, or name alone, or ns alone when name is empty.
func joinName(ns, name string) string {
	switch {
	case ns == "":
		return name
	case name == "":
		return ns + "/*"
	}
	return ns + "/" + name
}

// Deleting the catalog composite makes the garbage collector delete every
// golden it composed. A golden a template clones from is refused (its
// Usage), with the attempt recorded, and stays with its PVC while the
// unpinned one goes; once the pool is deleted, its template and Usages go
// and the Usage replays the refused delete, so the golden and its PVC go
// too.
func TestDeletingTheCatalogKeepsPinnedGoldens(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-catalog-delete", "c8", "e2e-catalog-delete"
	inNamespace(t, ns)
	capiCluster(t, ns, cluster)
	sidA, sidB := schematicID("catalog-delete-a"), schematicID("catalog-delete-b")
	goldenA, goldenB := goldenName(sidA), goldenName(sidB)
	// CDI creates each golden's PVC (controlled by its DataVolume), so
	// both goldens have one.
	readyGolden(t, catalog, sidA, sidB)
	for _, g := range []string{goldenA, goldenB} {
		cp.WaitExists(t, reconcileTimeout, harness.PVC, goldenNamespace, g)
	}

	xr, kmt := builtinPool(t, ns, cluster, sidA)
	waitGoldenPinned(t, xr, kmt, goldenA)
	md := cluster + "-" + poolName
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, md)
	// One worker cloned the golden: Cluster API made the pool's Machine,
	// the chain its disk, and CDI cloned it, so the pool has a finished
	// clone and the catalog's RBAC going with it must not hold the pool.
	disk := waitWorkerDisks(t, ns, md, kmt, 1)[0]
	waitDataVolumePhase(t, ns, disk, phaseSucceeded)
	dvA := cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenA)
	if l := cp.MustGet(t, harness.DataVolume, goldenNamespace, goldenB).GetLabels(); l[harness.InUseLabel] != "" {
		t.Fatalf("golden %s, which no template clones, is labelled %s=%s", goldenB, harness.InUseLabel, l[harness.InUseLabel])
	}

	cp.MustDelete(t, harness.WorkerImageCatalog, "", catalog)
	cp.WaitGone(t, gcTimeout, harness.WorkerImageCatalog, "", catalog)
	// The unpinned golden is collected, and its PVC with it.
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenB)
	cp.WaitGone(t, gcTimeout, harness.PVC, goldenNamespace, goldenB)
	// The collector tried the pinned one too and was refused: the webhook
	// recorded its Background delete, and kube-controller-manager logged the
	// refusal for the golden's uid.
	cp.Eventually(t, gcTimeout, fmt.Sprintf("the garbage collector's delete of golden %s to be refused by %s", goldenA, harness.UsageWebhookName), func(ctx context.Context) error {
		dv, err := cp.Existing(ctx, harness.DataVolume, goldenNamespace, goldenA)
		if err != nil {
			return err
		}
		if got := dv.GetAnnotations()[harness.DeletionAttemptAnnotation]; got != "Background" {
			return fmt.Errorf("annotation %s=%q, want \"Background\"", harness.DeletionAttemptAnnotation, got)
		}
		return logHasLine(controllerManagerLog(), harness.UsageWebhookName, string(dvA.GetUID()))
	})
	// The PVC is not attempted (its owner, the golden DataVolume, is still
	// there); it must stay all the same, and the pool keeps running.
	cp.Consistently(t, 10*time.Second, fmt.Sprintf("golden %s and its PVC are kept after catalog %s is gone, and pool %s stays open on %s", goldenA, catalog, xr.GetName(), kmt.GetName()), allOf(goldenKept(goldenA), func(ctx context.Context) error {
		p, err := cp.Existing(ctx, harness.NodePool, ns, xr.GetName())
		if err != nil {
			return err
		}
		if state, reason := gateOf(p); state != "Open" {
			return fmt.Errorf("pool gate is %s/%s", state, reason)
		}
		got, err := machineDeploymentTemplate(ctx, ns, md)
		if err != nil {
			return err
		}
		if got != kmt.GetName() {
			return fmt.Errorf("MachineDeployment %s points at %q", md, got)
		}
		return nil
	}))

	// The pool goes: its deletion guard defers the delete, the pool deletes
	// its MachineDeployment, then its template and Usages; each Usage takes
	// the label off the golden and replays the refused delete.
	deletePool(t, ns, xr.GetName(), md)
	cp.WaitGone(t, gcTimeout, harness.NodePool, ns, xr.GetName())
	cp.WaitGone(t, gcTimeout, harness.KubevirtMachineTemplate, ns, kmt.GetName())
	for _, u := range usageNames(kmt.GetName()) {
		cp.WaitGone(t, gcTimeout, harness.Usage, ns, u)
	}
	cp.WaitGone(t, gcTimeout, harness.DataVolume, goldenNamespace, goldenA)
	cp.WaitGone(t, gcTimeout, harness.PVC, goldenNamespace, goldenA)
	cp.Eventually(t, reconcileTimeout, "Crossplane to log the replayed delete of golden "+goldenA, func(context.Context) error {
		return logHasLine(cp.LogDir+"/crossplane.log", "Replaying deletion of the used resource", goldenA)
	})
	nothingRefusedIn(t, ns)
}

// A client's DELETE of a golden a template clones from, of its DataVolume
// or of its PVC, is refused by the nousages webhook with a message naming
// the Usage and the template (whose name starts with the pool's), and the
// objects stay.
func TestKubectlDeleteOfAPinnedGoldenIsRefused(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-kubectl-delete", "c9", "e2e-kubectl-delete"
	inNamespace(t, ns)
	sid := schematicID("kubectl-delete")
	golden := goldenName(sid)
	readyGolden(t, catalog, sid)
	xr, kmt := builtinPool(t, ns, cluster, sid)
	waitGoldenPinned(t, xr, kmt, golden)

	for _, target := range usageTargets {
		usage := kmt.GetName() + "-" + target.suffix
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		// What `kubectl delete` sends: a DELETE with background propagation.
		err := cp.Delete(ctx, target.gvk, goldenNamespace, golden)
		cancel()
		wantDenied(t, err, goldenNamespace, golden,
			fmt.Sprintf("%q (in namespace %q) by resource KubevirtMachineTemplate/%s", usage, ns, kmt.GetName()))
		if !strings.HasPrefix(kmt.GetName(), cluster+"-"+poolName+"-") {
			t.Errorf("template %s, named in the refusal, does not start with the pool's %s-%s-", kmt.GetName(), cluster, poolName)
		}
		o := cp.MustGet(t, target.gvk, goldenNamespace, golden)
		if got := o.GetAnnotations()[harness.DeletionAttemptAnnotation]; got != "Background" {
			t.Errorf("%s %s/%s has %s=%q after the refused delete, want \"Background\"", target.gvk.Kind, goldenNamespace, golden, harness.DeletionAttemptAnnotation, got)
		}
	}
	cp.Consistently(t, 2*functionTTL, "golden "+golden+" and its PVC stay after the refused deletes", goldenKept(golden))
}

// The first pool of a namespace on a golden composes its template and its
// Usages at once but no MachineDeployment until the catalog's RoleBinding
// grants the namespace's default service account; meanwhile it is held
// (CloneNotAuthorized) and Ready=False. The hold can be far shorter than a
// poll (the usage controller labelling the golden, a composed resource of
// the catalog, wakes the catalog at once under realtime compositions), so
// the order is asserted on watch events, which miss no write, and the
// delays are measured from them.
// cloneGrantRequestLabel is the label by which a pool's Usage of its golden
// asks the catalog for the clone grant (internal/labels CloneGrantRequest).
const cloneGrantRequestLabel = "workerimage.cozystack.io/clone-grant-request"

func TestFirstPoolOfANamespaceWaitsForTheCloneGrant(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-clone-grant", "c10", "e2e-clone-grant"
	const serviceAccount = "default" // the Input's cloneRBAC.serviceAccountName default
	inNamespace(t, ns)
	sid := schematicID("clone-grant")
	golden := goldenName(sid)
	readyGolden(t, catalog, sid)
	rbName := "workerimage-clone-" + catalog
	cp.WaitCondition(t, reconcileTimeout, harness.WorkerImageCatalog, "", catalog, "Ready", "True")
	if rb := cp.WaitExists(t, reconcileTimeout, harness.RoleBinding, goldenNamespace, rbName); bindsServiceAccount(rb, ns, serviceAccount) {
		t.Fatalf("RoleBinding %s/%s binds %s/%s before any template in %s pins a golden: %v", goldenNamespace, rbName, ns, serviceAccount, ns, rb.Object["subjects"])
	}
	// A platform's catalog exists long before a namespace's first pool:
	// let this one settle (the burst of reconciles its creation and CDI's
	// import cause), so that what the pool measures is a steady
	// catalog's reaction.
	waitQuiet(t, harness.WorkerImageCatalog, "", catalog, 2*time.Second)

	md := cluster + "-" + poolName
	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	tl := follow(t,
		followed{harness.NodePool, ns, xr.GetName()},
		followed{harness.KubevirtMachineTemplate, ns, ""},
		followed{harness.Usage, ns, ""},
		followed{harness.MachineDeployment, ns, md},
		followed{harness.RoleBinding, goldenNamespace, rbName},
		followed{harness.DataVolume, goldenNamespace, golden},
		followed{harness.WorkerImageCatalog, "", catalog},
	)
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	cp.WaitExists(t, reconcileTimeout, harness.MachineDeployment, ns, md)
	var mdAdded sighting
	cp.Eventually(t, reconcileTimeout, "the watch to deliver MachineDeployment "+md+"'s creation", func(context.Context) error {
		var ok bool
		mdAdded, ok = tl.first(func(s sighting) bool { return s.Kind() == "MachineDeployment" && s.Type == watch.Added })
		if !ok {
			return fmt.Errorf("not yet; %s", tl.err())
		}
		return nil
	})
	if err := tl.err(); err != nil {
		t.Fatal(err)
	}

	// The grant came first: the catalog's RoleBinding listed the namespace's
	// service account in a write before the MachineDeployment's creation.
	grant, ok := tl.first(func(s sighting) bool {
		return s.Kind() == "RoleBinding" && bindsServiceAccount(s.Obj, ns, serviceAccount)
	})
	if !ok || grant.Rev >= mdAdded.Rev {
		t.Fatalf("MachineDeployment %s was created (resourceVersion %d) before RoleBinding %s/%s granted %s/%s (%v); timeline:\n%s", md, mdAdded.Rev, goldenNamespace, rbName, ns, serviceAccount, grant.Rev, tl)
	}
	// Held until then. Crossplane writes a composite's status twice per
	// reconcile: first the function's status fields (server-side apply,
	// composition_functions.go), then the conditions, Ready and Synced
	// among them (reconciler.go, the final Status().Update). Every write the
	// pool made before the MachineDeployment existed says Held/
	// CloneNotAuthorized, every one that carries conditions also says
	// WorkerImageReady=False and Ready=False, and there was at least one
	// of those.
	var held int
	for _, s := range tl.all(func(s sighting) bool { return s.Kind() == "XNodePool" && s.Rev < mdAdded.Rev }) {
		state, reason := gateOf(s.Obj)
		switch {
		case state == "":
			continue // not composed yet
		case state != "Held" || reason != "CloneNotAuthorized":
			t.Errorf("before its MachineDeployment existed, the pool wrote (resourceVersion %d) gate %s/%s, want Held/CloneNotAuthorized", s.Rev, state, reason)
		case harness.Condition(s.Obj, "Ready") == nil:
			continue // the function's status fields; the conditions follow
		}
		if err := isHeldNotReady(s.Obj, "CloneNotAuthorized"); err != nil {
			t.Errorf("before its MachineDeployment existed, the pool wrote (resourceVersion %d): %v", s.Rev, err)
		}
		held++
	}
	if held == 0 {
		t.Fatalf("the pool wrote no held status with its conditions before its MachineDeployment was created; timeline:\n%s", tl)
	}
	// The template and both its Usages existed before the MachineDeployment,
	// and the pool's request before the grant: with Usages on, what makes
	// the catalog bind is the pool's Usage of the golden labelled with the
	// grant request (internal/catalog/grants.go), not the template. Both
	// are written in one apply of the pool's composed resources, in no
	// order Crossplane fixes, and the catalog watches Usages, so it may
	// bind a moment before the template is written. (A held new pool
	// reports no status.template: that is the template in effect, which
	// the MachineDeployment sets.)
	kmt, ok := tl.first(func(s sighting) bool { return s.Kind() == "KubevirtMachineTemplate" && s.Type == watch.Added })
	if !ok || kmt.Rev >= mdAdded.Rev {
		t.Fatalf("no template was created in %s before the MachineDeployment (template %d, MachineDeployment %d); timeline:\n%s", ns, kmt.Rev, mdAdded.Rev, tl)
	}
	template := kmt.Obj.GetName()
	request, ok := tl.first(func(s sighting) bool {
		return s.Kind() == "Usage" && s.Obj.GetName() == template+"-datavolume" && s.Obj.GetLabels()[cloneGrantRequestLabel] != ""
	})
	if !ok || request.Rev >= grant.Rev {
		t.Fatalf("the pool's Usage %s/%s-datavolume asked for no grant (label %s) before the grant (request %d, grant %d); timeline:\n%s", ns, template, cloneGrantRequestLabel, request.Rev, grant.Rev, tl)
	}
	for _, u := range usageNames(template) {
		if s, ok := tl.first(func(s sighting) bool { return s.Kind() == "Usage" && s.Type == watch.Added && s.Obj.GetName() == u }); !ok || s.Rev >= mdAdded.Rev {
			t.Errorf("Usage %s/%s was not created before the MachineDeployment (Usage %d, MachineDeployment %d)", ns, u, s.Rev, mdAdded.Rev)
		}
	}
	if got, _, _ := unstructured.NestedString(mdAdded.Obj.Object, "spec", "template", "spec", "infrastructureRef", "name"); got != template {
		t.Errorf("MachineDeployment %s points at %q, want the held template %s", md, got, template)
	}

	// The delays, from the server's creation timestamps (one-second
	// precision) and from the watch events' arrival (milliseconds).
	serverDelay := mdAdded.Obj.GetCreationTimestamp().Sub(kmt.Obj.GetCreationTimestamp().Time)
	t.Logf("clone grant delay: template %s created -> MachineDeployment %s created: %s (server timestamps), %s (watch events)",
		template, md, serverDelay, mdAdded.At.Sub(kmt.At).Round(time.Millisecond))
	t.Logf("clone grant delay: RoleBinding %s/%s granted %s/%s -> MachineDeployment created: %s (watch events); %d held status write(s) with conditions by the pool before it",
		goldenNamespace, rbName, ns, serviceAccount, mdAdded.At.Sub(grant.At).Round(time.Millisecond), held)
	t.Logf("clone grant timeline (arrival, resourceVersion, event, object):\n%s", tl)
	// Documented bound: the catalog's steady TTL (it learns of the new pin
	// on its next run at the latest) plus the held pool's in-progress TTL,
	// each with Crossplane's 10% jitter, plus a margin for the round trips.
	if bound := (functionTTL+inProgressTTL)*11/10 + 8*time.Second; mdAdded.At.Sub(kmt.At) > bound {
		t.Errorf("template -> MachineDeployment took %s, more than the catalog's steady TTL %s plus the held pool's in-progress TTL %s allow (%s)", mdAdded.At.Sub(kmt.At), functionTTL, inProgressTTL, bound)
	}

	open := cp.WaitCondition(t, reconcileTimeout, harness.NodePool, ns, xr.GetName(), "WorkerImageReady", "True")
	if state, reason := gateOf(open); state != "Open" {
		t.Errorf("pool gate is %s/%s after the MachineDeployment appeared, want Open", state, reason)
	}
	cp.WaitEvent(t, reconcileTimeout, open, "Warning", "may not clone golden image")
	cp.WaitEvent(t, reconcileTimeout, open, "Normal", "held change is composed now", "CloneNotAuthorized resolved")
}

// A builtin pool whose golden is still importing composes nothing at all
// (no template, so no Usage either) and is Ready=False, held
// GoldenImporting, for as long as the golden imports.
func TestHeldNewPoolIsNotReady(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const ns, cluster, catalog = "e2e-held-not-ready", "c11", "e2e-held-not-ready"
	inNamespace(t, ns)
	sid := schematicID("held-not-ready")
	golden := goldenName(sid)
	cat := catalogXR(catalog, sid+" "+talosVersion)
	cp.MustApply(t, cat)
	deleteOnCleanup(t, cat)
	cp.WaitExists(t, reconcileTimeout, harness.DataVolume, goldenNamespace, golden)
	waitDataVolumePhase(t, goldenNamespace, golden, phaseImportInProgress)

	xr := poolXR(ns, cluster, sid, "{builtin: {}}")
	cp.MustApply(t, xr)
	deleteOnCleanup(t, xr)
	held := heldNotReady(ns, xr.GetName(), "GoldenImporting")
	cp.Eventually(t, reconcileTimeout, "XNodePool "+ns+"/"+xr.GetName()+" to be held GoldenImporting and Ready=False", held)
	// The held pool asks to be called again after the in-progress TTL: the
	// window covers at least one more reconcile.
	cp.Consistently(t, inProgressTTL*11/10+2*time.Second, "the pool stays held, Ready=False, and composes nothing in "+ns+" while its golden imports", allOf(held, nothingComposedIn(ns)))
}
