package main

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"

	"github.com/cozystack/function-worker-image/internal/fixture"
	"github.com/cozystack/function-worker-image/internal/labels"
)

const (
	sidA     = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	goldenA  = "talos-worker-" + sidA + "-v1.13.6"
	hashA    = "7bcb1fa3c7cfb346" // labels.GoldenHash("cozy-public", goldenA)
	urlA     = "https://factory.talos.dev/image/" + sidA + "/v1.13.6/openstack-amd64.raw.xz"
	sidB     = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"
	goldenB  = "talos-worker-" + sidB + "-v1.12.4"
	hashB    = "aadced7bf4fb98a5"
	renamedB = "talos-worker-b-renamed" // a golden DataVolume whose name is not the one its key implies
	inputCat = `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input"}`
)

func catalogXR(spec string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"workerimage.cozystack.io/v1alpha1","kind":"XWorkerImageCatalog","metadata":{"name":"default"},"spec":` + spec + `}`)}
}

func pinsSelector(hash string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "infrastructure.cluster.x-k8s.io/v1alpha1",
		Kind:       "KubevirtMachineTemplate",
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"workerimage.cozystack.io/golden": hash}}},
	}
}

// grantsSelector selects, in every namespace, the pools' Usages that ask the
// catalog to bind their namespace for the golden of hash.
func grantsSelector(hash string) *fnv1.ResourceSelector {
	return &fnv1.ResourceSelector{
		ApiVersion: "protection.crossplane.io/v1beta1",
		Kind:       "Usage",
		Match:      &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{"workerimage.cozystack.io/clone-grant-request": hash}}},
	}
}

// askingUsage is the Usage of golden (in cozy-public) by template in
// namespace ns as a node pool composes it while its VM service account may
// not clone the golden yet: labelled with the golden's hash and the grant
// request.
func askingUsage(ns, template, golden string) *fnv1.Resource {
	hash := labels.GoldenHash("cozy-public", golden)
	req := `,"workerimage.cozystack.io/clone-grant-request":"` + hash + `"`
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"protection.crossplane.io/v1beta1","kind":"Usage","metadata":{"name":"` + template + `-datavolume","namespace":"` + ns + `",
		"labels":{"app.kubernetes.io/managed-by":"function-worker-image","workerimage.cozystack.io/golden":"` + hash + `"` + req + `},
		"annotations":{"workerimage.cozystack.io/golden":"cozy-public/` + golden + `"}},
		"spec":{"of":{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","resourceRef":{"name":"` + golden + `","namespace":"cozy-public"}},
		"by":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"KubevirtMachineTemplate","resourceRef":{"name":"` + template + `"}},"replayDeletion":true}}`)}
}

// allServiceAccounts is the RoleBinding subject of the AllServiceAccounts
// scope.
const allServiceAccounts = `{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"system:serviceaccounts"}`

// usagesOff is the Input that turns Crossplane Usages off: the catalog then
// reads the templates that pin its goldens.
const usagesOff = `{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","usages":{"enabled":false}}`

func goldenJSON(name, sid, version, url, storage, class string) string {
	cls := ""
	if class != "" {
		cls = `,"storageClassName":"` + class + `"`
	}
	return `{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","metadata":{"name":"` + name + `","namespace":"cozy-public",
		"labels":{"app.kubernetes.io/managed-by":"function-worker-image","workerimage.cozystack.io/golden":"` + map[string]string{goldenA: hashA, goldenB: hashB, renamedB: labels.GoldenHash("cozy-public", renamedB)}[name] + `"},
		"annotations":{"cdi.kubevirt.io/storage.bind.immediate.requested":"true","workerimage.cozystack.io/golden":"cozy-public/` + name + `",
		"workerimage.cozystack.io/schematic-id":"` + sid + `","workerimage.cozystack.io/talos-version":"` + version + `"}},
		"spec":{"contentType":"kubevirt","source":{"http":{"url":"` + url + `"}},"storage":{"resources":{"requests":{"storage":"` + storage + `"}}` + cls + `}}}`
}

// goldenPVCJSON is a golden as an older chart made it: spec.pvc, with its
// access mode, in place of spec.storage.
func goldenPVCJSON(name, sid, version, url, storage, class string) string {
	j := goldenJSON(name, sid, version, url, storage, class)
	if !strings.Contains(j, `"storage":{"resources"`) {
		panic("goldenJSON no longer writes spec.storage")
	}
	return strings.Replace(j, `"storage":{"resources"`, `"pvc":{"accessModes":["ReadWriteOnce"],"volumeMode":"Block","resources"`, 1)
}

func observedPVCGolden(name, sid, version, url, storage, class string) *fnv1.Resource {
	u := resource.MustStructJSON(goldenPVCJSON(name, sid, version, url, storage, class))
	u.Fields["status"] = resource.MustStructJSON(`{"status":{"phase":"Succeeded","progress":"100.0%"}}`).Fields["status"]
	return &fnv1.Resource{Resource: u}
}

func observedGolden(name, sid, version, url, storage, class string) *fnv1.Resource {
	u := resource.MustStructJSON(goldenJSON(name, sid, version, url, storage, class))
	u.Fields["status"] = resource.MustStructJSON(`{"status":{"phase":"Succeeded","progress":"100.0%"}}`).Fields["status"]
	return &fnv1.Resource{Resource: u}
}

// clusterRoleJSON is the clone role limited to the named goldens.
// inUse labels an observed object as Crossplane's usage controller does
// when a Usage protects it.
func inUse(r *fnv1.Resource) *fnv1.Resource {
	r.Resource.Fields["metadata"].GetStructValue().Fields["labels"].GetStructValue().Fields["crossplane.io/in-use"] = structpb.NewStringValue("true")
	return r
}

func clusterRoleJSON(goldens ...string) string {
	rules := `,"rules":[]`
	if len(goldens) > 0 {
		names, _ := json.Marshal(slices.Sorted(slices.Values(goldens)))
		rules = `,"rules":[{"apiGroups":["cdi.kubevirt.io"],"resources":["datavolumes/source"],"verbs":["create"],"resourceNames":` + string(names) + `}]`
	}
	return `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"workerimage-clone-default","labels":{"app.kubernetes.io/managed-by":"function-worker-image","workerimage.cozystack.io/clone-rbac":"true"}}` + rules + `}`
}

func roleBindingJSON(subjects string) string {
	s := ""
	if subjects != "" {
		s = `,"subjects":[` + subjects + `]`
	}
	return `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"workerimage-clone-default","namespace":"cozy-public","labels":{"app.kubernetes.io/managed-by":"function-worker-image","workerimage.cozystack.io/clone-rbac":"true"}},
	"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"workerimage-clone-default"}` + s + `}`
}

// bindingUsageJSON is the Usage that keeps the clone RoleBinding while the
// golden lives.
func bindingUsageJSON(golden string) string {
	return `{"apiVersion":"protection.crossplane.io/v1beta1","kind":"Usage","metadata":{"name":"workerimage-clone-default-` + labels.GoldenHash("cozy-public", golden) + `","namespace":"cozy-public"},
	"spec":{"of":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","resourceRef":{"name":"workerimage-clone-default"}},"by":{"apiVersion":"cdi.kubevirt.io/v1beta1","kind":"DataVolume","resourceRef":{"name":"` + golden + `"}},"replayDeletion":true}}`
}

// roleUsageJSON is the Usage that keeps the clone ClusterRole while the
// RoleBinding lives; a cluster-scoped `of` names the empty namespace.
const roleUsageJSON = `{"apiVersion":"protection.crossplane.io/v1beta1","kind":"Usage","metadata":{"name":"workerimage-clone-default","namespace":"cozy-public"},
	"spec":{"of":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","resourceRef":{"name":"workerimage-clone-default","namespace":""}},"by":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","resourceRef":{"name":"workerimage-clone-default"}},"replayDeletion":true}}`

// vmServiceAccount is the RoleBinding subject of a namespace's VM service account.
func vmServiceAccount(ns string) string {
	return `{"kind":"ServiceAccount","name":"default","namespace":"` + ns + `"}`
}

func kmt(ns, name, hash string) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"infrastructure.cluster.x-k8s.io/v1alpha1","kind":"KubevirtMachineTemplate","metadata":{"name":"` + name + `","namespace":"` + ns + `","labels":{"workerimage.cozystack.io/golden":"` + hash + `"}}}`)}
}

func desired(j string, ready fnv1.Ready) *fnv1.Resource {
	return &fnv1.Resource{Resource: resource.MustStructJSON(j), Ready: ready}
}

func cond(typ string, status fnv1.Status, reason, msg string) *fnv1.Condition {
	return &fnv1.Condition{Type: typ, Status: status, Reason: reason, Message: &msg, Target: fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum()}
}

// withSnapshotReads answers, besides m, the StorageClasses and
// StorageProfiles a catalog reads once a golden has imported (snapshot
// goldens, internal/catalog/snapshot.go), with none: a cluster where no
// class has a profile keeps every golden a PVC only.
func withSnapshotReads(m map[string]*fnv1.Resources) map[string]*fnv1.Resources {
	m["storageclasses"], m["storageprofiles"] = &fnv1.Resources{}, &fnv1.Resources{}
	return m
}

// withSnapshotSelectors is m and the selectors of withSnapshotReads.
func withSnapshotSelectors(m map[string]*fnv1.ResourceSelector) map[string]*fnv1.ResourceSelector {
	out := maps.Clone(m)
	out["storageclasses"] = &fnv1.ResourceSelector{ApiVersion: "storage.k8s.io/v1", Kind: "StorageClass", Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}}}
	out["storageprofiles"] = &fnv1.ResourceSelector{ApiVersion: "cdi.kubevirt.io/v1beta1", Kind: "StorageProfile", Match: &fnv1.ResourceSelector_MatchLabels{MatchLabels: &fnv1.MatchLabels{Labels: map[string]string{}}}}
	return out
}

func TestRunFunctionCatalog(t *testing.T) {
	oneEntry := `{"storageClass":"replicated","images":[{"schematicID":"` + sidA + `","version":"v1.13.6"}]}`
	urlB := "https://mirror.example/image/" + sidB + "/v1.12.4/openstack-amd64.raw.xz"
	grantsA := map[string]*fnv1.ResourceSelector{"grants-" + goldenA: grantsSelector(hashA)}
	statusA := `{"name":"` + goldenA + `","namespace":"cozy-public","schematicID":"` + sidA + `","version":"v1.13.6","source":"https://factory.talos.dev/image/` + sidA + `/v1.13.6/openstack-amd64.raw.xz","phase":"Succeeded","progress":"100.0%","storage":"6Gi","storageClass":"replicated","inUse":true,"ready":true}`
	// Golden A in use, with the clone RBAC it keeps, as observed and as
	// composed again.
	observedA := func(subjects string, more map[string]*fnv1.Resource) map[string]*fnv1.Resource {
		out := map[string]*fnv1.Resource{
			"golden-" + goldenA:       inUse(observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated")),
			"clone-clusterrole":       {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA))},
			"clone-rolebinding":       {Resource: resource.MustStructJSON(roleBindingJSON(subjects))},
			"clone-usage-" + hashA:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenA))},
			"clone-usage-clusterrole": {Resource: resource.MustStructJSON(roleUsageJSON)},
		}
		maps.Copy(out, more)
		return out
	}
	desiredA := func(subjects string) map[string]*fnv1.Resource {
		return map[string]*fnv1.Resource{
			"golden-" + goldenA:       desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
			"clone-clusterrole":       desired(clusterRoleJSON(goldenA), fnv1.Ready_READY_TRUE),
			"clone-rolebinding":       desired(roleBindingJSON(subjects), fnv1.Ready_READY_TRUE),
			"clone-usage-" + hashA:    desired(bindingUsageJSON(goldenA), fnv1.Ready_READY_TRUE),
			"clone-usage-clusterrole": desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
		}
	}
	conditionsA := []*fnv1.Condition{
		cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "AllSucceeded", "All golden images (1) are Succeeded."),
		cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_FALSE, "NoneRetiring", "Every composed golden image is in the catalog."),
	}

	type args struct {
		req *fnv1.RunFunctionRequest
	}
	type want struct {
		rsp *fnv1.RunFunctionResponse
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"FirstCallReturnsRequirementsAndNoFatal": {
			reason: "Before Crossplane has fetched the Usages that ask for a clone grant the function must only ask for them: no fatal, no desired change. That is all it asks for: it reads no template, and the namespaces the RoleBinding binds come from the RoleBinding itself, not observed yet.",
			args: args{req: &fnv1.RunFunctionRequest{
				Meta:     &fnv1.RequestMeta{Tag: "t"},
				Input:    resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{Composite: catalogXR(oneEntry)},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Tag: "t", Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: grantsA},
			}},
		},
		"SecondCallComposesGoldenAndRBAC": {
			reason: "Once the (empty) grant requests are fetched, the golden and the clone RBAC are composed, binding no namespace; the golden is not ready yet, so the TTL drops.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:             resource.MustStructJSON(inputCat),
				Observed:          &fnv1.State{Composite: catalogXR(oneEntry)},
				RequiredResources: map[string]*fnv1.Resources{"grants-" + goldenA: {}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: grantsA},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[{"name":"` + goldenA + `","namespace":"cozy-public","schematicID":"` + sidA + `","version":"v1.13.6","source":"https://factory.talos.dev/image/` + sidA + `/v1.13.6/openstack-amd64.raw.xz","storage":"6Gi","storageClass":"replicated","ready":false}]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA: desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_FALSE),
						"clone-clusterrole": desired(clusterRoleJSON(goldenA), fnv1.Ready_READY_FALSE),
						"clone-rolebinding": desired(roleBindingJSON(""), fnv1.Ready_READY_FALSE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_FALSE, "Importing", "0 of 1 golden images are Succeeded; waiting for cozy-public/"+goldenA+" (not created yet). Pools that clone them wait until they are."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_FALSE, "NoneRetiring", "Every composed golden image is in the catalog."),
				},
			}},
		},
		"DriftIsFatal": {
			reason: "Raising storage on the entry of a golden that exists would be rejected by CDI's webhook; the function refuses, naming the entry's value, the golden's and the fix.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(`{"storageClass":"replicated","images":[{"schematicID":"` + sidA + `","version":"v1.13.6","source":"https://factory.talos.dev/image/` + sidA + `/v1.13.6/openstack-amd64.raw.xz","storage":"8Gi"}]}`),
					Resources: map[string]*fnv1.Resource{"golden-" + goldenA: observedGolden(goldenA, sidA, "v1.13.6", urlA, "6144Mi", "replicated")},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenA: {}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(grantsA)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
					Message:  `XWorkerImageCatalog "default": images[0].storage is "8Gi", but golden DataVolume cozy-public/` + goldenA + ` was made with 6Gi and a DataVolume's size cannot change: remove images[0].storage or set it to 6Gi (the golden's size only bounds the pools' diskSize from below). A golden is imported once and its DataVolume's spec is immutable; a catalog-wide default (spec.imageFactoryURL, spec.storage, the Input's) applies to new goldens only, but a value written on the entry itself must match the golden it names`,
				}},
			}},
		},
		"RemovedButPinnedGoldenIsKeptAndBindsPinningNamespaces": {
			reason: "A golden that left the catalog stays while it carries Crossplane's in-use label (every template that clones it has a Usage of it), reported in use; no template is read for it across the fleet. The RoleBinding keeps the namespaces it binds, since a golden of the catalog is in use (which of them still pins one is not read: only each golden's grant requests are required, here none). Each pinned golden holds the RoleBinding with a Usage, and the RoleBinding the ClusterRole, so that deleting the catalog keeps the clone permission while they live; a Usage is ready at once, nothing waits for it.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(oneEntry),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       inUse(observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated")),
						"golden-" + goldenB:       inUse(observedGolden(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated")),
						"clone-clusterrole":       {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA, goldenB))},
						"clone-rolebinding":       {Resource: resource.MustStructJSON(roleBindingJSON(vmServiceAccount("tenant-a") + "," + vmServiceAccount("tenant-b")))},
						"clone-usage-" + hashB:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenB))},
						"clone-usage-clusterrole": {Resource: resource.MustStructJSON(roleUsageJSON)},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{
					"grants-" + goldenA: {},
					"grants-" + goldenB: {},
				}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{
					"grants-" + goldenA: grantsSelector(hashA),
					"grants-" + goldenB: grantsSelector(hashB),
				})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + goldenB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlB + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","storageClass":"replicated","inUse":true,"retiring":true,"ready":true},
						` + statusA + `]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"golden-" + goldenB:       desired(goldenJSON(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"clone-clusterrole":       desired(clusterRoleJSON(goldenA, goldenB), fnv1.Ready_READY_TRUE),
						"clone-rolebinding":       desired(roleBindingJSON(vmServiceAccount("tenant-a")+","+vmServiceAccount("tenant-b")), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashA:    desired(bindingUsageJSON(goldenA), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashB:    desired(bindingUsageJSON(goldenB), fnv1.Ready_READY_TRUE),
						"clone-usage-clusterrole": desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "AllSucceeded", "All golden images (1) are Succeeded."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+goldenB+" (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden="+hashB+" lists them). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"GoldensMadeWithSpecPVCAreReemittedAsTheyLive": {
			reason: "An older chart made its goldens with spec.pvc; CDI's webhook refuses any change of a DataVolume's spec (v1.65.0 pkg/apiserver/webhooks/datavolume-validate.go Admit: an update whose spec is not semantically equal to the old one is refused, \"Cannot update DataVolume Spec\", save a multi-stage VDDK or ImageIO import's checkpoints), so a golden the catalog keeps (A) and one it retains while pinned (B) are both composed again with spec.pvc exactly as observed, never rewritten to spec.storage; their size and class are read from spec.pvc for the status.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(oneEntry),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       inUse(observedPVCGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated")),
						"golden-" + goldenB:       inUse(observedPVCGolden(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated")),
						"clone-clusterrole":       {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA, goldenB))},
						"clone-rolebinding":       {Resource: resource.MustStructJSON(roleBindingJSON(vmServiceAccount("tenant-a")))},
						"clone-usage-" + hashA:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenA))},
						"clone-usage-" + hashB:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenB))},
						"clone-usage-clusterrole": {Resource: resource.MustStructJSON(roleUsageJSON)},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{
					"grants-" + goldenA: {},
					"grants-" + goldenB: {},
				}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{
					"grants-" + goldenA: grantsSelector(hashA),
					"grants-" + goldenB: grantsSelector(hashB),
				})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + goldenB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlB + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","storageClass":"replicated","inUse":true,"retiring":true,"ready":true},
						` + statusA + `]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       desired(goldenPVCJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"golden-" + goldenB:       desired(goldenPVCJSON(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"clone-clusterrole":       desired(clusterRoleJSON(goldenA, goldenB), fnv1.Ready_READY_TRUE),
						"clone-rolebinding":       desired(roleBindingJSON(vmServiceAccount("tenant-a")), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashA:    desired(bindingUsageJSON(goldenA), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashB:    desired(bindingUsageJSON(goldenB), fnv1.Ready_READY_TRUE),
						"clone-usage-clusterrole": desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "AllSucceeded", "All golden images (1) are Succeeded."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+goldenB+" (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden="+hashB+" lists them). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"UsagesOffTemplatesPinGoldensAndBindTheirNamespaces": {
			reason: "With Usages off there is no Usage to read: the catalog reads the templates that clone each golden. A golden that left the catalog stays while a template pins it, listed with its pinning templates, and the RoleBinding grants exactly the pinning namespaces, sorted. The Usages that keep the clone RBAC are kept while observed but no new one is composed.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(usagesOff),
				Observed: &fnv1.State{
					Composite: catalogXR(oneEntry),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"),
						"golden-" + goldenB:       observedGolden(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated"),
						"clone-clusterrole":       {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA, goldenB))},
						"clone-rolebinding":       {Resource: resource.MustStructJSON(roleBindingJSON(vmServiceAccount("tenant-a") + "," + vmServiceAccount("tenant-b")))},
						"clone-usage-" + hashB:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenB))},
						"clone-usage-clusterrole": {Resource: resource.MustStructJSON(roleUsageJSON)},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{
					"pins-" + goldenA: {Items: []*fnv1.Resource{kmt("tenant-b", "b-md0-1", hashA)}},
					"pins-" + goldenB: {Items: []*fnv1.Resource{kmt("tenant-a", "a-gpu-2", hashB), kmt("tenant-a", "a-gpu-1", hashB)}},
				}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{
					"pins-" + goldenA: pinsSelector(hashA),
					"pins-" + goldenB: pinsSelector(hashB),
				})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + goldenB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlB + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","storageClass":"replicated","pinnedBy":["tenant-a/a-gpu-1","tenant-a/a-gpu-2"],"retiring":true,"ready":true},
						{"name":"` + goldenA + `","namespace":"cozy-public","schematicID":"` + sidA + `","version":"v1.13.6","source":"https://factory.talos.dev/image/` + sidA + `/v1.13.6/openstack-amd64.raw.xz","phase":"Succeeded","progress":"100.0%","storage":"6Gi","storageClass":"replicated","pinnedBy":["tenant-b/b-md0-1"],"ready":true}]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"golden-" + goldenB:       desired(goldenJSON(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"clone-clusterrole":       desired(clusterRoleJSON(goldenA, goldenB), fnv1.Ready_READY_TRUE),
						"clone-rolebinding":       desired(roleBindingJSON(vmServiceAccount("tenant-a")+","+vmServiceAccount("tenant-b")), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashB:    desired(bindingUsageJSON(goldenB), fnv1.Ready_READY_TRUE),
						"clone-usage-clusterrole": desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "AllSucceeded", "All golden images (1) are Succeeded."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+goldenB+" (pinned by tenant-a/a-gpu-1, tenant-a/a-gpu-2). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"NewlyPinningNamespaceIsBoundAndCheckedSoon": {
			reason: "A namespace whose pool asks for a clone grant (its Usage of the golden carries the grant request) is bound now, next to the namespace already bound, which stays since a golden of the catalog is in use; its pool waits for the binding, so the catalog calls again after the in-progress TTL instead of the steady one.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(oneEntry),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA: inUse(observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated")),
						"golden-" + goldenB: inUse(observedGolden(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated")),
						"clone-clusterrole": {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA, goldenB))},
						"clone-rolebinding": {Resource: resource.MustStructJSON(roleBindingJSON(vmServiceAccount("tenant-b")))},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{
					"grants-" + goldenA: {},
					"grants-" + goldenB: {Items: []*fnv1.Resource{askingUsage("tenant-a", "a-gpu-2", goldenB), askingUsage("tenant-a", "a-gpu-1", goldenB)}},
				}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{
					"grants-" + goldenA: grantsSelector(hashA),
					"grants-" + goldenB: grantsSelector(hashB),
				})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + goldenB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlB + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","storageClass":"replicated","inUse":true,"retiring":true,"ready":true},
						` + statusA + `]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA:       desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"golden-" + goldenB:       desired(goldenJSON(goldenB, sidB, "v1.12.4", urlB, "8Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"clone-clusterrole":       desired(clusterRoleJSON(goldenA, goldenB), fnv1.Ready_READY_TRUE),
						"clone-rolebinding":       desired(roleBindingJSON(vmServiceAccount("tenant-a")+","+vmServiceAccount("tenant-b")), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashA:    desired(bindingUsageJSON(goldenA), fnv1.Ready_READY_TRUE),
						"clone-usage-" + hashB:    desired(bindingUsageJSON(goldenB), fnv1.Ready_READY_TRUE),
						"clone-usage-clusterrole": desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "AllSucceeded", "All golden images (1) are Succeeded."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+goldenB+" (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden="+hashB+" lists them). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"GrantRequestBindsItsNamespace": {
			reason: "A pool in tenant-x whose VM service account may not clone its golden labels its Usage of the golden with the grant request: the catalog reads those requests alone (no template) and binds tenant-x. The RoleBinding bound nothing yet, and the pool waits for the binding: the in-progress TTL.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:    resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{Composite: catalogXR(oneEntry), Resources: observedA("", nil)},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{
					"grants-" + goldenA: {Items: []*fnv1.Resource{askingUsage("tenant-x", "x-md0-1", goldenA)}},
				}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(grantsA)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[` + statusA + `]}}`)},
					Resources: desiredA(vmServiceAccount("tenant-x")),
				},
				Conditions: conditionsA,
			}},
		},
		"BoundNamespacesStayWhileAGoldenIsInUse": {
			reason: "While a golden of the catalog carries Crossplane's in-use label, the RoleBinding keeps every namespace it binds, tenant-a and tenant-b, though none asks for a grant: telling which of them still pins a golden would take reading their templates, and the catalog requires nothing but each golden's grant requests (and keeps no cursor in the status). This is also what keeps the grant of a pool not reconciled since the upgrade, which asks for none. Nothing changed: the steady TTL.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:             resource.MustStructJSON(inputCat),
				Observed:          &fnv1.State{Composite: catalogXR(oneEntry), Resources: observedA(vmServiceAccount("tenant-a")+","+vmServiceAccount("tenant-b"), nil)},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenA: {}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(grantsA)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[` + statusA + `]}}`)},
					Resources: desiredA(vmServiceAccount("tenant-a") + "," + vmServiceAccount("tenant-b")),
				},
				Conditions: conditionsA,
			}},
		},
		"NamespacesUnboundOnceNoGoldenIsInUse": {
			reason: "Once no golden of the catalog carries Crossplane's in-use label, no template clones one, so no bound namespace needs its grant: the RoleBinding binds only the namespaces asking, here tenant-b, whose pool's Usage asks before Crossplane's usage controller has labelled the golden; tenant-a is unbound. The golden is not in use, so no Usage keeps the clone RBAC. The RoleBinding changes, so the catalog calls again after the in-progress TTL.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(oneEntry),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA: observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"),
						"clone-clusterrole": {Resource: resource.MustStructJSON(clusterRoleJSON(goldenA))},
						"clone-rolebinding": {Resource: resource.MustStructJSON(roleBindingJSON(vmServiceAccount("tenant-a") + "," + vmServiceAccount("tenant-b")))},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenA: {Items: []*fnv1.Resource{askingUsage("tenant-b", "b-md0-1", goldenA)}}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(grantsA)},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[{"name":"` + goldenA + `","namespace":"cozy-public","schematicID":"` + sidA + `","version":"v1.13.6","source":"https://factory.talos.dev/image/` + sidA + `/v1.13.6/openstack-amd64.raw.xz","phase":"Succeeded","progress":"100.0%","storage":"6Gi","storageClass":"replicated","ready":true}]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenA: desired(goldenJSON(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated"), fnv1.Ready_READY_TRUE),
						"clone-clusterrole": desired(clusterRoleJSON(goldenA), fnv1.Ready_READY_TRUE),
						"clone-rolebinding": desired(roleBindingJSON(vmServiceAccount("tenant-b")), fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: conditionsA,
			}},
		},
		"AllServiceAccountsScopeAsksForNoGrants": {
			reason: "With the AllServiceAccounts scope the RoleBinding binds every service account: the catalog asks for no grant request, so with Usages on it requires only what the snapshot goldens read (the classes and profiles), with no cloneGrants in its status.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:             resource.MustStructJSON(`{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","cloneRBAC":{"scope":"AllServiceAccounts"}}`),
				Observed:          &fnv1.State{Composite: catalogXR(oneEntry), Resources: observedA(allServiceAccounts, nil)},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[` + statusA + `]}}`)},
					Resources: desiredA(allServiceAccounts),
				},
				Conditions: conditionsA,
			}},
		},
		"PinnedGoldenStaysUnderTheKeyItWasObservedWith": {
			reason: "A crafted request: the golden under key golden-<B> is a DataVolume of another name. It left the catalog and is in use, so it is kept, under the key it was observed with: a new key would drop the observed one, and Crossplane would delete the pinned golden. Its grant requests are looked up by the name of the DataVolume itself, the one templates clone, and the namespace asking is bound.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(`{"images":[]}`),
					Resources: map[string]*fnv1.Resource{"golden-" + goldenB: inUse(observedGolden(renamedB, sidB, "v1.12.4", urlA, "8Gi", ""))},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenB: {Items: []*fnv1.Resource{askingUsage("tenant-a", "a-gpu-1", renamedB)}}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{"grants-" + goldenB: grantsSelector(labels.GoldenHash("cozy-public", renamedB))})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + renamedB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlA + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","inUse":true,"retiring":true,"ready":true}]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenB: desired(goldenJSON(renamedB, sidB, "v1.12.4", urlA, "8Gi", ""), fnv1.Ready_READY_TRUE),
						"clone-clusterrole": desired(clusterRoleJSON(renamedB), fnv1.Ready_READY_FALSE),
						"clone-rolebinding": desired(roleBindingJSON(vmServiceAccount("tenant-a")), fnv1.Ready_READY_FALSE),
						"clone-usage-" + labels.GoldenHash("cozy-public", renamedB): desired(bindingUsageJSON(renamedB), fnv1.Ready_READY_TRUE),
						"clone-usage-clusterrole":                                   desired(roleUsageJSON, fnv1.Ready_READY_TRUE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "NoImages", "The catalog lists no images."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+renamedB+" (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden="+labels.GoldenHash("cozy-public", renamedB)+" lists them). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"GoldenInUseIsKeptRetiringThoughNoTemplatePinsIt": {
			reason: "With Usages off, a golden that left the catalog and that no template pins, but that carries Crossplane's in-use label (a Usage protects it, here one the catalog knows nothing of), is kept and reported retiring: leaving it out would make Crossplane delete it, the webhook refuse, and the whole composition stop before anything is applied.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(usagesOff),
				Observed: &fnv1.State{
					Composite: catalogXR(`{"images":[]}`),
					Resources: map[string]*fnv1.Resource{"golden-" + goldenB: inUse(observedGolden(goldenB, sidB, "v1.12.4", urlA, "8Gi", ""))},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"pins-" + goldenB: {}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{"pins-" + goldenB: pinsSelector(hashB)})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[
						{"name":"` + goldenB + `","namespace":"cozy-public","schematicID":"` + sidB + `","version":"v1.12.4","source":"` + urlA + `","phase":"Succeeded","progress":"100.0%","storage":"8Gi","inUse":true,"retiring":true,"ready":true}]}}`)},
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenB: desired(goldenJSON(goldenB, sidB, "v1.12.4", urlA, "8Gi", ""), fnv1.Ready_READY_TRUE),
						"clone-clusterrole": desired(clusterRoleJSON(goldenB), fnv1.Ready_READY_FALSE),
						"clone-rolebinding": desired(roleBindingJSON(""), fnv1.Ready_READY_FALSE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "NoImages", "The catalog lists no images."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_TRUE, "PinnedByTemplates", "Kept although no longer in the catalog, because templates still clone them: cozy-public/"+goldenB+" (no template pins it, but a Crossplane Usage still protects it (it carries crossplane.io/in-use=true) and its delete would be refused; it is deleted once that Usage is gone: kubectl get usages.protection.crossplane.io -A shows which). Each is deleted once no template pins it; move those pools to another image to retire it."),
				},
			}},
		},
		"UnpinnedRemovedGoldenIsRetired": {
			reason: "A golden that left the catalog and that no Usage protects any more (Crossplane's usage controller took its in-use label away) is left out of the desired state, which deletes it; the clone role then names no golden and grants nothing, and the Usages that kept the clone RBAC while it was pinned are left out too (Crossplane strips their composite label, so they let go at once). The RoleBinding is not observed yet, so the catalog checks again soon.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(`{"images":[]}`),
					Resources: map[string]*fnv1.Resource{
						"golden-" + goldenB:       observedGolden(goldenB, sidB, "v1.12.4", urlA, "8Gi", ""),
						"clone-usage-" + hashB:    {Resource: resource.MustStructJSON(bindingUsageJSON(goldenB))},
						"clone-usage-clusterrole": {Resource: resource.MustStructJSON(roleUsageJSON)},
					},
				},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenB: {}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(15 * time.Second)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{"grants-" + goldenB: grantsSelector(hashB)})},
				Desired: &fnv1.State{
					Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"status":{"goldens":[]}}`)},
					Resources: map[string]*fnv1.Resource{
						"clone-clusterrole": desired(clusterRoleJSON(), fnv1.Ready_READY_FALSE),
						"clone-rolebinding": desired(roleBindingJSON(""), fnv1.Ready_READY_FALSE),
					},
				},
				Conditions: []*fnv1.Condition{
					cond("GoldenImagesReady", fnv1.Status_STATUS_CONDITION_TRUE, "NoImages", "The catalog lists no images."),
					cond("GoldenImagesRetiring", fnv1.Status_STATUS_CONDITION_FALSE, "NoneRetiring", "Every composed golden image is in the catalog."),
				},
			}},
		},
		"GoldenNamespaceChangedIsFatal": {
			reason: "Moving the golden namespace under existing goldens would import each again elsewhere and strand the pools that clone from the old one: fatal, with both namespaces and the fix, and nothing of the desired state changed.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input: resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{
					Composite: catalogXR(`{"goldenNamespace":"golden-images","storageClass":"replicated","images":[{"schematicID":"` + sidA + `","version":"v1.13.6"}]}`),
					Resources: map[string]*fnv1.Resource{"golden-" + goldenA: observedGolden(goldenA, sidA, "v1.13.6", urlA, "6Gi", "replicated")},
				},
				Desired:           &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier": desired(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","namespace":"default"}}`, fnv1.Ready_READY_TRUE)}},
				RequiredResources: withSnapshotReads(map[string]*fnv1.Resources{"grants-" + goldenA: {}}),
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta:         &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Requirements: &fnv1.Requirements{Resources: withSnapshotSelectors(map[string]*fnv1.ResourceSelector{"grants-" + goldenA: grantsSelector(labels.GoldenHash("golden-images", goldenA))})},
				Desired:      &fnv1.State{Resources: map[string]*fnv1.Resource{"earlier": desired(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","namespace":"default"}}`, fnv1.Ready_READY_TRUE)}},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
					Message: `XWorkerImageCatalog "default": the golden namespace is "golden-images", from spec.goldenNamespace, but the catalog's golden DataVolumes live in "cozy-public" (` + goldenA + `). ` +
						`Composing them in "golden-images" would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. ` +
						`Set the golden namespace back to "cozy-public"; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace "golden-images" and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)`,
				}},
			}},
		},
		"InvalidInputIsFatal": {
			reason: "An Input the function cannot honour stops the pipeline with the field and the fix.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:    resource.MustStructJSON(`{"apiVersion":"workerimage.fn.crossplane.io/v1beta1","kind":"Input","image":{"platform":"Open Stack"}}`),
				Observed: &fnv1.State{Composite: catalogXR(oneEntry)},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
					Message:  `input: image.platform: Invalid value: "Open Stack": is not a plain lowercase identifier such as openstack or amd64; it is part of the image URL`,
				}},
			}},
		},
		"UnknownCompositeKindIsFatal": {
			reason: "Without a mode and with a kind it does not serve, the function says how to fix the Composition.",
			args: args{req: &fnv1.RunFunctionRequest{
				Input:    resource.MustStructJSON(inputCat),
				Observed: &fnv1.State{Composite: &fnv1.Resource{Resource: resource.MustStructJSON(`{"apiVersion":"example.org/v1","kind":"XThing","metadata":{"name":"x"}}`)}},
			}},
			want: want{rsp: &fnv1.RunFunctionResponse{
				Meta: &fnv1.ResponseMeta{Ttl: durationpb.New(time.Minute)},
				Results: []*fnv1.Result{{
					Severity: fnv1.Severity_SEVERITY_FATAL,
					Target:   fnv1.Target_TARGET_COMPOSITE.Enum(),
					Message:  `cannot infer the mode from composite kind "XThing": set the Input's mode to Catalog, TenantCluster or NodePool, or use the XWorkerImageCatalog, XTenantCluster or XNodePool composite`,
				}},
			}},
		},
	}

	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := NewFunction(logging.NewNopLogger(), time.Minute, WithClock(fixture.Clock))
			rsp, err := f.RunFunction(context.Background(), tc.args.req)
			if err != nil {
				t.Fatalf("%s\nRunFunction returned an error: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want.rsp, rsp, protocmp.Transform()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestEarlierPipelineStepsPassThrough: what earlier steps put in the desired
// state (a composed resource, the composite's fields, readiness and
// connection details, the context) reaches Crossplane untouched, next to what
// this step composes.
func TestEarlierPipelineStepsPassThrough(t *testing.T) {
	oneEntry := `{"storageClass":"replicated","images":[{"schematicID":"` + sidA + `","version":"v1.13.6"}]}`
	earlier := desired(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-an-earlier-step","namespace":"cozy-public"}}`, fnv1.Ready_READY_TRUE)
	req := &fnv1.RunFunctionRequest{
		Input:             resource.MustStructJSON(inputCat),
		Observed:          &fnv1.State{Composite: catalogXR(oneEntry)},
		RequiredResources: map[string]*fnv1.Resources{"grants-" + goldenA: {}},
		Desired: &fnv1.State{
			Composite: &fnv1.Resource{
				Resource:          resource.MustStructJSON(`{"status":{"fromEarlier":"kept"}}`),
				ConnectionDetails: map[string][]byte{"token": []byte("t")},
				Ready:             fnv1.Ready_READY_FALSE,
			},
			Resources: map[string]*fnv1.Resource{"earlier": earlier},
		},
		Context: resource.MustStructJSON(`{"earlier.example.com/key":"value"}`),
	}
	rsp, err := newTestFunction().RunFunction(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := rsp.GetDesired().GetComposite()
	if got.GetReady() != fnv1.Ready_READY_FALSE {
		t.Errorf("an earlier step's READY_FALSE must survive, got %s", got.GetReady())
	}
	if diff := cmp.Diff(map[string][]byte{"token": []byte("t")}, got.GetConnectionDetails()); diff != "" {
		t.Errorf("an earlier step's connection details must survive\n-want, +got:\n%s", diff)
	}
	if v := got.GetResource().GetFields()["status"].GetStructValue().GetFields()["fromEarlier"].GetStringValue(); v != "kept" {
		t.Errorf("an earlier step's composite fields must survive next to this step's status, got %v", got.GetResource())
	}
	if diff := cmp.Diff(earlier, rsp.GetDesired().GetResources()["earlier"], protocmp.Transform()); diff != "" {
		t.Errorf("an earlier step's composed resource must survive untouched\n-want, +got:\n%s", diff)
	}
	if _, ok := rsp.GetDesired().GetResources()["golden-"+goldenA]; !ok {
		t.Errorf("this step's own resources are composed next to the earlier ones")
	}
	if diff := cmp.Diff(req.GetContext(), rsp.GetContext(), protocmp.Transform()); diff != "" {
		t.Errorf("the pipeline context must pass through\n-want, +got:\n%s", diff)
	}
}
