package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// isolationKinds are the namespaced kinds a pool reads, composes or makes
// others make: what the scenario snapshots in tenant A's namespace and
// searches everywhere for tenant B's marks.
var isolationKinds = []schema.GroupVersionKind{
	harness.Secret, harness.Service, harness.ConfigMap,
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha1", Kind: "KamajiControlPlane"},
	harness.Cluster, harness.NodePool,
	harness.KubevirtMachineTemplate, harness.TalosConfigTemplate,
	harness.MachineDeployment, harness.MachineHealthCheck, harness.MachineSet, harness.Machine,
	harness.DataVolume, harness.PVC, harness.Role, harness.RoleBinding, harness.Usage,
}

// isolationFixed are the kinds of A's whose resourceVersion must not move
// while B acts: what A's control plane published and what A's pool
// composed as immutable or settled objects. (Machines, MachineSets, the
// deployment, the disks and A's XR keep being written by their own
// controllers, so only their UIDs are compared.)
var isolationFixed = map[string]bool{
	"Secret": true, "Service": true, "ConfigMap": true, "KamajiControlPlane": true,
	"KubevirtMachineTemplate": true, "TalosConfigTemplate": true,
	"Role": true, "RoleBinding": true, "Usage": true,
}

type objectMark struct{ UID, ResourceVersion string }

// snapshotNamespace maps "Kind name" to the UID and resourceVersion of
// every object of isolationKinds in ns.
func snapshotNamespace(t *testing.T, ns string) map[string]objectMark {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]objectMark{}
	for _, gvk := range isolationKinds {
		l, err := cp.List(ctx, gvk, ns, "")
		if err != nil {
			t.Fatalf("cannot list %s in %s: %v", gvk.Kind, ns, err)
		}
		for _, o := range l {
			out[gvk.Kind+" "+o.GetName()] = objectMark{string(o.GetUID()), o.GetResourceVersion()}
		}
	}
	return out
}

// TestTenantCannotReachAnotherTenant (issue 36 item 3): tenant A runs a
// Join pool, cloned from the catalog's golden, on its own Cluster and join
// facts; tenant B, in another namespace, then creates pools whose every
// name-ish field names A's: the same clusterName and poolName (so every
// template, deployment and join Secret name the function derives is A's),
// goldenNamespace set to A's namespace (where A's join Secrets and
// templates live), A's storage class, and Join mode so that the function
// looks for <clusterName>-talos-secrets, A's Secret's name. The function
// reads B's join facts and templates in B's namespace only, so B's pools
// are held there. Asserted:
//   - every object of A's namespace keeps its UID, the published and
//     immutable ones also their resourceVersion, and no object appears in
//     it while B acts;
//   - nothing anywhere carries B's composite label or an owner reference
//     to B's composites outside B's namespace, except Usages in the
//     catalog's golden namespace, which the design composes there;
//   - no DataVolume or KubevirtMachineTemplate in B's namespace clones from
//     anything but a golden of the golden namespace;
//   - none of A's join values (machine token, cluster id and secret,
//     bootstrap token, both CAs) appears in B's TalosConfigTemplates, B's
//     composites (status, conditions) or the events of B's namespace;
//   - from the apiserver's audit log of Crossplane's own identity
//     (harness/identity.go), with A's pool paused while B acts so that
//     nothing in A's namespace is read on A's behalf: once B's pools exist,
//     Crossplane makes no request for a Secret of A's namespace and writes
//     nothing there but A's own objects and events. Crossplane reads a
//     required Secret with a GET of its own (its client caches no
//     Secrets; the log shows A's reconciles reading A's join Secrets
//     before the pause, and B's reading Secrets of A's names in B's
//     namespace, 404), so a read of A's join Secrets on B's behalf would
//     show. What the log cannot show: required resources of other kinds
//     (the golden DataVolume and PVC B's goldenNamespace points at A's
//     namespace, Services, templates) are read from Crossplane's informer
//     cache, which lists and watches each kind cluster-wide, so such a read
//     makes no request; for those, what shows that nothing of A's reached
//     B is the rest of the assertions.
func TestTenantCannotReachAnotherTenant(t *testing.T) {
	requireMode(t, "Catalog")
	requireMode(t, "NodePool")
	const nsA, nsB, cluster = "e2e-tenant-a", "e2e-tenant-b", "tenant-a"
	sid := schematicID("isolation")

	// Tenant A: a Cluster, its join facts, a Join pool cloned from the
	// catalog's golden, settled with one worker.
	inNamespace(t, nsA)
	capiCluster(t, nsA, cluster)
	facts := publishJoinFacts(t, nsA, cluster)
	readyGolden(t, nsA, sid)
	a := sizedPool(nsA, cluster, sid, 1, "20Gi")
	if err := unstructured.SetNestedField(a.Object, "Join", "spec", "bootstrap", "mode"); err != nil {
		t.Fatal(err)
	}
	cp.MustApply(t, a)
	deleteOnCleanup(t, a)
	md := cluster + "-" + poolName
	kmt := poolTemplate(t, reconcileTimeout, nsA, a.GetName())
	t.Logf("tenant A settled: %s", waitSettled(t, nsA, md, kmt.GetName(), 1))
	cp.WaitCondition(t, reconcileTimeout, harness.NodePool, nsA, a.GetName(), "JoinFactsCurrent", "True")

	// A's pool is paused while B acts, so that every request Crossplane
	// makes in A's namespace from then on is on someone else's behalf.
	// Crossplane reads a required Secret with a GET of its own (its client
	// does not cache Secrets), so until now the audit log holds A's
	// reconciles reading A's join Secrets: the proof that it would show
	// B's.
	pauseXR(t, a, true)
	t.Cleanup(func() { pauseXR(t, a, false) }) // before the delete (cleanups run last first)
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("XNodePool %s/%s to be paused", nsA, a.GetName()), func(ctx context.Context) error {
		u, err := cp.Existing(ctx, harness.NodePool, nsA, a.GetName())
		if err != nil {
			return err
		}
		if c := harness.Condition(u, "Synced"); c != nil && c["reason"] == "ReconcilePaused" {
			return nil
		}
		return fmt.Errorf("conditions %s", harness.ConditionsString(u))
	})
	before := snapshotNamespace(t, nsA)

	// Tenant B: the same names, pointed at A.
	inNamespace(t, nsB)
	sameNames := sizedPool(nsB, cluster, sid, 1, "20Gi")
	sameNames.SetName("hostile-a-golden-namespace")
	for path, v := range map[string]string{
		"bootstrap.mode":  "Join",
		"goldenNamespace": nsA,
		"storageClass":    "e2e-replicated",
	} {
		if err := unstructured.SetNestedField(sameNames.Object, v, append([]string{"spec"}, strings.Split(path, ".")...)...); err != nil {
			t.Fatal(err)
		}
	}
	defaultGolden := sizedPool(nsB, cluster, sid, 1, "20Gi")
	defaultGolden.SetName("hostile-a-cluster")
	_ = unstructured.SetNestedField(defaultGolden.Object, "Join", "spec", "bootstrap", "mode")
	_ = unstructured.SetNestedField(defaultGolden.Object, "joiners", "spec", "poolName")
	bStart := time.Now()
	hostile := []*unstructured.Unstructured{sameNames, defaultGolden}
	bUIDs := map[types.UID]string{}
	for _, xr := range hostile {
		cp.MustApply(t, xr)
		deleteOnCleanup(t, xr)
		bUIDs[cp.MustGet(t, harness.NodePool, nsB, xr.GetName()).GetUID()] = xr.GetName()
	}

	// The function has answered for both: WorkerImageReady (set on every
	// reconcile it completes) or a fatal result Crossplane reports as
	// Synced=False.
	for _, xr := range hostile {
		cp.Eventually(t, reconcileTimeout, fmt.Sprintf("XNodePool %s/%s to be answered by the function", nsB, xr.GetName()), func(ctx context.Context) error {
			u, err := cp.Existing(ctx, harness.NodePool, nsB, xr.GetName())
			if err != nil {
				return err
			}
			if harness.ConditionStatus(u, "WorkerImageReady") != "" || harness.ConditionStatus(u, "Synced") == "False" {
				return nil
			}
			return fmt.Errorf("conditions %s", harness.ConditionsString(u))
		})
	}
	// A few of the pools' polling periods for anything B's pools would do.
	cp.Consistently(t, 20*time.Second, "tenant A's namespace to keep every object, UID and published resourceVersion", func(context.Context) error {
		return sameObjects(before, snapshotNamespace(t, nsA))
	})
	for _, xr := range hostile {
		u := cp.MustGet(t, harness.NodePool, nsB, xr.GetName())
		t.Logf("tenant B's %s: %s", xr.GetName(), harness.ConditionsString(u))
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Nothing of B's outside B's namespace but Usages in the golden namespace.
	for _, gvk := range isolationKinds {
		l, err := cp.List(ctx, gvk, "", "")
		if err != nil {
			t.Fatalf("cannot list %s: %v", gvk.Kind, err)
		}
		for _, o := range l {
			by := o.GetLabels()["crossplane.io/composite"]
			for _, r := range o.GetOwnerReferences() {
				if n, ok := bUIDs[r.UID]; ok {
					by = n
				}
			}
			if _, ours := map[string]bool{sameNames.GetName(): true, defaultGolden.GetName(): true}[by]; !ours {
				continue
			}
			if o.GetNamespace() == nsB || (gvk.Kind == "Usage" && o.GetNamespace() == goldenNamespace) {
				continue
			}
			t.Errorf("%s %s/%s belongs to tenant B's XNodePool %s but is outside %s", gvk.Kind, o.GetNamespace(), o.GetName(), by, nsB)
		}
	}

	// B clones only goldens of the golden namespace.
	golden := goldenName(sid)
	dvs, err := cp.List(ctx, harness.DataVolume, nsB, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, dv := range dvs {
		checkCloneSource(t, "DataVolume "+nsB+"/"+dv.GetName(), dv.Object["spec"], golden)
	}
	kmts, err := cp.List(ctx, harness.KubevirtMachineTemplate, nsB, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kmts {
		tmpls, _, _ := unstructured.NestedSlice(k.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "dataVolumeTemplates")
		for i, dvt := range tmpls {
			spec, _ := dvt.(map[string]any)["spec"]
			checkCloneSource(t, fmt.Sprintf("KubevirtMachineTemplate %s/%s dataVolumeTemplates[%d]", nsB, k.GetName(), i), spec, golden)
		}
	}

	// None of A's join values in anything of B's.
	b64 := base64.StdEncoding.EncodeToString
	values := map[string]string{
		"machine token": facts.MachineToken, "cluster id": facts.ClusterID, "cluster secret": facts.ClusterSecret,
		"bootstrap token": facts.BootstrapToken, "Talos CA": b64(facts.TalosCA), "Kubernetes CA": b64(facts.KubernetesCA),
		"Talos CA (PEM)": strings.TrimSpace(string(facts.TalosCA)), "Kubernetes CA (PEM)": strings.TrimSpace(string(facts.KubernetesCA)),
	}
	var haystacks []struct{ what, text string }
	add := func(what string, v any) {
		j, _ := json.Marshal(v)
		haystacks = append(haystacks, struct{ what, text string }{what, string(j)})
	}
	tcts, err := cp.List(ctx, harness.TalosConfigTemplate, nsB, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tcts {
		add("TalosConfigTemplate "+nsB+"/"+tc.GetName(), tc.Object)
	}
	for _, xr := range hostile {
		add("XNodePool "+nsB+"/"+xr.GetName(), cp.MustGet(t, harness.NodePool, nsB, xr.GetName()).Object)
	}
	evs, err := cp.Kube.CoreV1().Events(nsB).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		add(fmt.Sprintf("event %s %s on %s %s", e.Type, e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name), e.Message)
	}
	for _, h := range haystacks {
		for what, v := range values {
			if holds(h.text, v) {
				t.Errorf("%s holds tenant A's %s", h.what, what)
			}
		}
	}
	// The search finds what is there: A's own TalosConfigTemplate holds
	// every value but the PEM spellings.
	aTemplate, _ := json.Marshal(cp.MustGet(t, harness.TalosConfigTemplate, nsA, bootstrapTemplateOf(t, nsA, md)).Object)
	for what, v := range values {
		if !strings.Contains(what, "PEM") && !holds(string(aTemplate), v) {
			t.Errorf("tenant A's own TalosConfigTemplate does not hold A's %s: the search for A's values in B's objects proves nothing", what)
		}
	}
	t.Logf("searched %d objects and events of tenant B for %d of tenant A's join values", len(haystacks), len(values))

	// The audit log of Crossplane's identity since B's pools exist.
	events, err := cp.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var writesB, readsABefore, readsBOfA int
	joinSecrets := map[string]bool{cluster + "-talos-secrets": true, cluster + "-talos-ca": true, cluster + "-ca": true}
	for _, e := range events {
		if e.ObjectRef == nil {
			continue
		}
		r := e.ObjectRef
		if e.RequestReceived.Before(bStart) {
			if r.Namespace == nsA && r.Resource == "secrets" && e.Verb == "get" && joinSecrets[r.Name] {
				readsABefore++
			}
			continue
		}
		if r.Namespace == nsB && r.Resource == "secrets" && e.Verb == "get" && joinSecrets[r.Name] {
			readsBOfA++
		}
		write := e.Verb == "create" || e.Verb == "update" || e.Verb == "patch" || e.Verb == "delete"
		switch {
		case r.Namespace == nsB && write:
			writesB++
		case r.Namespace == nsA && r.Resource == "secrets":
			t.Errorf("Crossplane (%s) made a %s request for Secret %s/%s while tenant B acts (%s)", e.User.Username, e.Verb, nsA, r.Name, e.RequestURI)
		case r.Namespace == nsA && write && r.Resource != "events":
			if _, ok := before[kindOfResource(r.Resource)+" "+r.Name]; !ok && !(r.Resource == "xnodepools" && r.Name == a.GetName()) {
				t.Errorf("Crossplane wrote %s %s/%s (%s), which is not one of tenant A's objects", r.Resource, nsA, r.Name, e.Verb)
			}
		}
	}
	// A log that saw nothing would prove nothing: it must hold A's own
	// reads of A's join Secrets before the pause, B's writes, and B's
	// reads of the join Secrets under A's names in B's namespace.
	if readsABefore == 0 || writesB == 0 || readsBOfA == 0 {
		t.Errorf("the audit log of Crossplane's identity (%s) holds %d GETs of A's join Secrets while A reconciled, %d writes in %s and %d GETs there of Secrets named after A's since B's pools exist; want each > 0", harness.CrossplaneUser, readsABefore, writesB, nsB, readsBOfA)
	}
	t.Logf("audit: %d requests of Crossplane's identity; %d GETs of A's join Secrets while A reconciled, none since; since B's pools exist %d writes in %s and %d GETs there of Secrets named after A's (404)", len(events), readsABefore, writesB, nsB, readsBOfA)
}

// sameObjects compares two snapshots of a namespace: the same objects, the
// same UIDs, and the same resourceVersions for isolationFixed kinds.
func sameObjects(before, after map[string]objectMark) error {
	var diffs []string
	for k, b := range before {
		a, ok := after[k]
		kind := strings.SplitN(k, " ", 2)[0]
		switch {
		case !ok:
			diffs = append(diffs, k+" is gone")
		case a.UID != b.UID:
			diffs = append(diffs, fmt.Sprintf("%s was re-created (uid %s, was %s)", k, a.UID, b.UID))
		case isolationFixed[kind] && a.ResourceVersion != b.ResourceVersion:
			diffs = append(diffs, fmt.Sprintf("%s was written (resourceVersion %s, was %s)", k, a.ResourceVersion, b.ResourceVersion))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, k+" appeared")
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		return fmt.Errorf("%s", strings.Join(diffs, "; "))
	}
	return nil
}

// checkCloneSource fails the test unless a DataVolume spec clones nothing,
// or clones golden from the golden namespace.
func checkCloneSource(t *testing.T, what string, spec any, golden string) {
	t.Helper()
	s, _ := spec.(map[string]any)
	for _, path := range [][]string{{"source", "pvc"}, {"source", "snapshot"}, {"sourceRef"}} {
		src, ok, _ := unstructured.NestedMap(s, path...)
		if !ok {
			continue
		}
		ns, _ := src["namespace"].(string)
		name, _ := src["name"].(string)
		if ns != goldenNamespace || !strings.HasPrefix(name, golden) {
			t.Errorf("%s clones %s %s/%s, not a golden of %s", what, strings.Join(path, "."), ns, name, goldenNamespace)
		}
	}
}

// holds reports whether text, a JSON document, holds v; JSON escapes a
// PEM's newlines, so both spellings are compared.
func holds(text, v string) bool {
	esc, _ := json.Marshal(v)
	return strings.Contains(text, v) || strings.Contains(text, strings.Trim(string(esc), `"`))
}

// kindOfResource maps the audit log's resource to the snapshot's kind.
func kindOfResource(resource string) string {
	for _, gvk := range isolationKinds {
		if strings.ToLower(gvk.Kind)+"s" == resource || (gvk.Kind == "PersistentVolumeClaim" && resource == "persistentvolumeclaims") {
			return gvk.Kind
		}
	}
	return resource
}

// pauseXR sets (or removes) Crossplane's crossplane.io/paused annotation on
// xr, under a field manager of its own.
func pauseXR(t *testing.T, xr *unstructured.Unstructured, paused bool) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(xr.GroupVersionKind())
	u.SetNamespace(xr.GetNamespace())
	u.SetName(xr.GetName())
	if paused {
		u.SetAnnotations(map[string]string{"crossplane.io/paused": "true"})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.ApplyAs(ctx, "e2e-pause", u); err != nil {
		t.Errorf("cannot set paused=%v on %s %s/%s: %v", paused, xr.GetKind(), xr.GetNamespace(), xr.GetName(), err)
	}
}
