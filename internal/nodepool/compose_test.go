package nodepool

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/resource/composite"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/compose/composetest"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
	"github.com/cozystack/function-worker-image/internal/storageclass"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// summary is the part of an Output a case pins in the table; the whole
// Output is compared against testdata/<case>.yaml.
type summary struct {
	Fatal     string
	Resources []string // "<name> ready=<ready>", sorted
	Gate      string   // "<state>/<reason>"
	Template  string
}

func summarize(out compose.Output) summary {
	s := summary{}
	if out.Fatal != nil {
		s.Fatal = out.Fatal.Error()
		return s
	}
	for n, d := range out.Resources {
		s.Resources = append(s.Resources, fmt.Sprintf("%s ready=%s", n, d.Ready))
	}
	sort.Strings(s.Resources)
	if g, ok := out.Status["gate"].(*v1alpha1.Gate); ok && g != nil {
		s.Gate = fmt.Sprintf("%s/%s", g.State, g.Reason)
	}
	s.Template, _ = out.Status["template"].(string)
	return s
}

// render is the whole Output as YAML, for the golden files.
func outputYAML(t *testing.T, out compose.Output) []byte {
	t.Helper()
	doc := map[string]any{}
	if out.Fatal != nil {
		doc["fatal"] = out.Fatal.Error()
	} else {
		res := map[string]any{}
		for n, d := range out.Resources {
			res[string(n)] = map[string]any{"ready": string(d.Ready), "resource": d.Resource.Object}
		}
		doc["resources"] = res
		doc["status"] = out.Status
		doc["conditions"] = out.Conditions
		doc["results"] = out.Results
		doc["ttl"] = out.TTL.String()
		doc["notReady"] = out.NotReady
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".yaml")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("whole Output differs from %s\n-want, +got:\n%s", path, diff)
	}
}

// names of what the fixtures render, computed once from the first render of
// each spec so that the table reads as behaviour, not as hashes.
func names(t *testing.T, spec map[string]any, w worldFixture) (kmt, tct string) {
	t.Helper()
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, nil)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	for n := range out.Resources {
		switch {
		case len(n) > len(read.PrefixMachineTemplate) && string(n)[:len(read.PrefixMachineTemplate)] == read.PrefixMachineTemplate:
			kmt = string(n)[len(read.PrefixMachineTemplate):]
		case len(n) > len(read.PrefixBootstrapTemplate) && string(n)[:len(read.PrefixBootstrapTemplate)] == read.PrefixBootstrapTemplate:
			tct = string(n)[len(read.PrefixBootstrapTemplate):]
		}
	}
	return kmt, tct
}

// composeOnce composes spec in world w with no observed resources and
// returns what Crossplane would then observe.
func composeOnce(t testing.TB, spec map[string]any, w worldFixture, mutate func(resource.Name, *composed.Unstructured)) map[resource.Name]resource.ObservedComposed {
	t.Helper()
	out := composetest.Run(Mode{}, request(t, nodePoolXR(spec), w, nil)).Output
	if out.Fatal != nil {
		t.Fatal(out.Fatal)
	}
	return observedFrom(out.Resources, mutate)
}

func mdReady(ready int64) func(resource.Name, *composed.Unstructured) {
	return func(n resource.Name, u *composed.Unstructured) {
		if n == read.ResourceMachineDeployment {
			_ = u.SetValue("status", map[string]any{"replicas": ready, "readyReplicas": ready})
		}
	}
}

func withStatus(xr *composite.Unstructured, status map[string]any) *composite.Unstructured {
	xr.Object["status"] = status
	return xr
}

var (
	// defaultClass is the cluster's GA default, the class the golden is on.
	// It allows volume expansion, so that CDI clones a 20Gi worker disk
	// from the 6Gi golden with CSI and grows it (the pre-flight passes).
	defaultClass = []*unstructuredT{expandable(storageClassObj("replicated", "2025-06-01T00:00:00Z", map[string]any{storageclass.AnnDefault: "true"}))}
	// cdiProfiles is CDI's StorageProfile of that class: csi-clone.
	cdiProfiles = []*unstructuredT{storageProfile("replicated", "csi-clone")}
	succeeded   = worldFixture{goldenDV: goldenDV("Succeeded", nil), goldenPVC: goldenPVC("replicated"), classes: defaultClass, profiles: cdiProfiles}
	importing   = worldFixture{goldenDV: goldenDV("ImportInProgress", map[string]any{"progress": "45.00%"}), classes: defaultClass, profiles: cdiProfiles}
	failed      = worldFixture{goldenDV: goldenDV("Failed", nil), classes: defaultClass, profiles: cdiProfiles}
	restartLoop = worldFixture{goldenDV: goldenDV("ImportInProgress", map[string]any{
		"restartCount": int64(4),
		"conditions":   []any{map[string]any{"type": "Running", "status": "False", "reason": "Error"}},
	}), classes: defaultClass, profiles: cdiProfiles}
	missing = worldFixture{classes: defaultClass, profiles: cdiProfiles}
)

func expandable(sc *unstructuredT) *unstructuredT {
	sc.Object["allowVolumeExpansion"] = true
	return sc
}

func TestCompose(t *testing.T) {
	httpSpec := map[string]any{}
	builtinSpec := map[string]any{"osImage": builtin()}
	httpKMT, httpTCT := names(t, httpSpec, missing)
	builtinKMT, builtinBootstrap := names(t, builtinSpec, succeeded)
	existingHTTP := composeOnce(t, httpSpec, missing, mdReady(1))
	existingBuiltin := composeOnce(t, builtinSpec, succeeded, mdReady(1))
	// clonedDisk: the pool's MachineSet on the existing clone template has
	// a ready Machine, which booted from a finished clone of the golden.
	clonedDisk := func(w worldFixture) worldFixture {
		w.dvs = append(w.dvs, workerDV("demo-md0-abcde-disk-system", "Succeeded", true))
		w.sets = append(w.sets, readyMachineSet("demo-md0-abcde", builtinKMT, builtinBootstrap, 1))
		return w
	}
	heldHTTP := []string{
		"deletion-guard ready=True",
		"kubevirtmachinetemplate-" + httpKMT + " ready=True",
		"machinedeployment ready=True",
		"machinehealthcheck ready=True",
		"talosconfigtemplate-" + httpTCT + " ready=True",
	}

	ungranted := func(w worldFixture) worldFixture { w.ungranted = true; return w }
	usagesOff := func(c *config.Config) { c.Usages = false }
	grantNotAwaited := func(c *config.Config) { c.WaitForCloneGrant = false }
	builtinTCT := func() string { _, tct := names(t, builtinSpec, succeeded); return tct }()
	firstTemplate := []string{
		"kubevirtmachinetemplate-" + builtinKMT + " ready=False",
		"talosconfigtemplate-" + builtinTCT + " ready=False",
		"usage-" + builtinKMT + "-datavolume ready=False",
		"usage-" + builtinKMT + "-pvc ready=False",
	}

	allowCopy := func(c *config.Config) { c.AllowHostAssistedCopy = true }
	// An arm64 HTTP pool, and the KubeVirt CR of an amd64 control plane
	// with the MultiArchitecture gate off, on, or unreadable.
	arm64Spec := map[string]any{"architecture": "arm64"}
	arm64Larger := map[string]any{"architecture": "arm64", "diskSize": "30Gi"}
	kubeVirtOff := []*unstructuredT{kubeVirtObj("kubevirt", "kubevirt", []any{"Snapshot"}, "amd64")}
	kubeVirtOn := []*unstructuredT{kubeVirtObj("kubevirt", "kubevirt", []any{"Snapshot", "MultiArchitecture"}, "amd64")}
	kubeVirtUnreadable := []*unstructuredT{kubeVirtObj("kubevirt", "kubevirt", nil, "amd64")}
	kubeVirtUnreadable[0].Object["spec"] = map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"featureGates": "MultiArchitecture"}}}
	arm64KMT, arm64TCT := names(t, arm64Spec, worldFixture{kubevirt: kubeVirtOn})
	existingArm64 := composeOnce(t, arm64Spec, worldFixture{kubevirt: kubeVirtOn}, mdReady(1))
	cases := map[string]struct {
		reason   string
		xr       *composite.Unstructured
		world    worldFixture
		observed map[resource.Name]resource.ObservedComposed
		config   func(*config.Config)
		want     summary
	}{
		"StoredMetalInstallerOnOpenstackDiskIsReported": {
			reason: "A pool whose stored spec still names the metal installer (the XRDs' old default) keeps it, verbatim, and is told it would lose its config drive on upgrade.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "talos": map[string]any{"installerRepository": "factory.talos.dev/installer"}}),
			world:  succeeded,
		},
		"CloneIntoLargerDiskOnClassWithoutExpansionIsHeld": {
			reason: "A 20Gi worker cloned from a 6Gi golden needs a class that can expand; CDI would fall back to a host-assisted copy (NoVolumeExpansion), so the new template is held.",
			xr:     nodePoolXR(builtinSpec),
			world:  cdiWorld(false, "csi-clone"),
			want:   summary{Gate: "Held/HostAssistedCopy"},
		},
		"CloneIntoLargerDiskOnExpandableClassIsComposed": {
			reason: "With allowVolumeExpansion CDI plans a CSI clone and grows it; the template is composed.",
			xr:     nodePoolXR(builtinSpec),
			world:  cdiWorld(true, "csi-clone"),
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"DiskOfTheGoldensSizeNeedsNoExpansion": {
			reason: "A worker disk no larger than the golden's capacity is a CSI clone even on a class that cannot expand.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "diskSize": "6Gi"}),
			world:  cdiWorld(false, "csi-clone"),
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"SnapshotStrategyWithoutSnapshotClassIsHeld": {
			reason: "The snapshot strategy needs a VolumeSnapshotClass of the driver; without one CDI copies (NoVolumeSnapshotClass).",
			xr:     nodePoolXR(builtinSpec),
			world:  cdiWorld(true, "snapshot"),
			want:   summary{Gate: "Held/HostAssistedCopy"},
		},
		"HostAssistedCopyAcceptedOnPurpose": {
			reason: "clonePreflight.allowHostAssistedCopy lets the template through; CloneHealthy reports the copies later.",
			xr:     nodePoolXR(builtinSpec),
			world:  cdiWorld(false, "csi-clone"),
			config: allowCopy,
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"NewBuiltinPoolComposesTemplateAndWaitsForCloneGrant": {
			reason: "A namespace's first pool composes its template (which makes the catalog bind the namespace) and its Usages, but no MachineDeployment until the VM service account may clone.",
			xr:     nodePoolXR(builtinSpec),
			world:  ungranted(succeeded),
			want:   summary{Resources: firstTemplate, Gate: "Held/CloneNotAuthorized"},
		},
		"ExistingHTTPPoolSwitchingToBuiltinKeepsItsDeploymentUntilGranted": {
			reason:   "A pool moving onto a golden its namespace may not clone yet keeps its MachineDeployment on the HTTP template; the new template is composed.",
			xr:       nodePoolXR(builtinSpec),
			world:    ungranted(succeeded),
			observed: existingHTTP,
			want: summary{Resources: []string{
				"deletion-guard ready=True",
				"kubevirtmachinetemplate-" + httpKMT + " ready=True",
				"kubevirtmachinetemplate-" + builtinKMT + " ready=False",
				"machinedeployment ready=True",
				"machinehealthcheck ready=True",
				// The bootstrap template does not depend on the disk source.
				"talosconfigtemplate-" + builtinTCT + " ready=True",
				"usage-" + builtinKMT + "-datavolume ready=False",
				"usage-" + builtinKMT + "-pvc ready=False",
			}, Gate: "Held/CloneNotAuthorized", Template: httpKMT},
		},
		"PoolThatClonedIsNotHeldForCloneGrant": {
			reason:   "A pool with a finished clone of its golden is never held by the grant check: its namespace was granted once.",
			xr:       nodePoolXR(builtinSpec),
			world:    ungranted(clonedDisk(succeeded)),
			observed: existingBuiltin,
			want:     summary{Gate: "Open/TemplateComposed"},
		},
		"DeploymentOnTheCurrentTemplateIsNotHeldWhenTheGrantGoes": {
			reason:   "A pool whose MachineDeployment already runs the current template was let through; the grant disappearing (its catalog deleted) does not hold it again.",
			xr:       nodePoolXR(builtinSpec),
			world:    ungranted(succeeded),
			observed: existingBuiltin,
			want:     summary{Gate: "Open/TemplateComposed"},
		},
		"CloneGrantNotAwaitedWhenThePlatformGrantsItself": {
			reason: "With cloneRBAC.waitForGrant false the deployment is composed at once.",
			xr:     nodePoolXR(builtinSpec),
			world:  ungranted(succeeded),
			config: grantNotAwaited,
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"UsagesOffComposesNoUsage": {
			reason: "With usages.enabled false (a Crossplane without Usages) no Usage is composed.",
			xr:     nodePoolXR(builtinSpec),
			world:  succeeded,
			config: usagesOff,
			want: summary{Resources: []string{
				"kubevirtmachinetemplate-" + builtinKMT + " ready=False",
				"machinedeployment ready=False",
				"machinehealthcheck ready=False",
				"talosconfigtemplate-" + builtinTCT + " ready=False",
			}, Gate: "Open/TemplateComposed"},
		},
		"UsagesOffKeepsTheUsagesOfKeptTemplates": {
			reason:   "Turning Usages off never drops the protection of a template that is still composed.",
			xr:       nodePoolXR(builtinSpec),
			world:    succeeded,
			observed: existingBuiltin,
			config:   usagesOff,
			want: summary{Resources: []string{
				"deletion-guard ready=True",
				"kubevirtmachinetemplate-" + builtinKMT + " ready=True",
				"machinedeployment ready=True",
				"machinehealthcheck ready=True",
				"talosconfigtemplate-" + builtinTCT + " ready=True",
				"usage-" + builtinKMT + "-datavolume ready=True",
				"usage-" + builtinKMT + "-pvc ready=True",
			}, Gate: "Open/TemplateComposed"},
		},
		"HTTPPoolWithOmittedOSImageImportsFromFactory": {
			reason: "An omitted osImage imports the default image over HTTP; nothing is gated.",
			xr:     nodePoolXR(httpSpec),
			want: summary{
				Resources: []string{"deletion-guard ready=False", "kubevirtmachinetemplate-" + httpKMT + " ready=False", "machinedeployment ready=False", "machinehealthcheck ready=False", "talosconfigtemplate-" + httpTCT + " ready=False"},
				Gate:      "Open/TemplateComposed", Template: httpKMT,
			},
		},
		"FactoryOverrideImportsFromItsOwnFactory": {
			reason: "osImage.factory overrides the schematic, version and factory URL of the HTTP source.",
			xr: nodePoolXR(map[string]any{"osImage": map[string]any{"factory": map[string]any{
				"schematicID": "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba", "version": "v1.13.4", "imageFactoryURL": "https://factory.example.com/",
			}}}),
		},
		"BuiltinPoolClonesSucceededGolden": {
			reason: "A builtin pool whose golden is Succeeded composes the clone template at once.",
			xr:     nodePoolXR(builtinSpec),
			world:  succeeded,
		},
		"NewBuiltinPoolComposesNothingWhileGoldenImports": {
			reason: "A brand-new pool whose golden still imports composes nothing yet and says why.",
			xr:     nodePoolXR(builtinSpec),
			world:  importing,
			want:   summary{Gate: "Held/GoldenImporting"},
		},
		"ExistingHTTPPoolSwitchingToBuiltinKeepsOldTemplateWhileGoldenImports": {
			reason:   "Switching an HTTP pool to builtin holds the new template back; every observed resource is re-emitted as observed.",
			xr:       nodePoolXR(builtinSpec),
			world:    importing,
			observed: existingHTTP,
			want:     summary{Resources: heldHTTP, Gate: "Held/GoldenImporting", Template: httpKMT},
		},
		"ExistingHTTPPoolSwitchingToBuiltinRollsOnceGoldenSucceeds": {
			reason: "Once the golden is Succeeded the clone template is composed and the old one kept while the MachineSet uses it.",
			xr:     nodePoolXR(builtinSpec),
			world: func() worldFixture {
				w := succeeded
				w.sets = []*unstructuredT{machineSet("demo-md0-old", httpKMT, httpTCT)}
				return w
			}(),
			observed: existingHTTP,
		},
		"BuiltinPoolHeldWhileGoldenMissing": {
			reason: "A golden that exists neither as DataVolume nor PVC holds a new pool back with the catalog fix.",
			xr:     nodePoolXR(builtinSpec),
			world:  missing,
			want:   summary{Gate: "Held/GoldenMissing"},
		},
		"BuiltinPoolHeldWhileGoldenFailed": {
			reason:   "A Failed golden would block workers forever; the change is held with the retry fix.",
			xr:       nodePoolXR(builtinSpec),
			world:    failed,
			observed: existingHTTP,
			want:     summary{Resources: heldHTTP, Gate: "Held/GoldenFailed", Template: httpKMT},
		},
		"BuiltinPoolHeldWhileGoldenImportRestartLoops": {
			reason: "Three importer restarts with Running=False is a failing import, not a slow one.",
			xr:     nodePoolXR(builtinSpec),
			world:  restartLoop,
			want:   summary{Gate: "Held/GoldenFailing"},
		},
		"PoolThatClonedIsNotBlockedByMissingGolden": {
			reason:   "A pool with a Succeeded clone of the golden is never blocked by the golden disappearing; class and size are not compared.",
			xr:       nodePoolXR(map[string]any{"osImage": builtin(), "replicas": int64(2)}),
			world:    clonedDisk(missing),
			observed: existingBuiltin,
			want: summary{
				Resources: []string{
					"deletion-guard ready=True", "kubevirtmachinetemplate-" + builtinKMT + " ready=True", "machinedeployment ready=False", "machinehealthcheck ready=True", "talosconfigtemplate-" + builtinTCT + " ready=True",
					// The protection stays although the golden is gone: should
					// it come back, it is protected again at once.
					"usage-" + builtinKMT + "-datavolume ready=True", "usage-" + builtinKMT + "-pvc ready=True",
				},
				Gate: "Open/TemplateComposed", Template: builtinKMT,
			},
		},
		"NewTemplateOfPoolThatClonedIsNotBlockedByFailedGolden": {
			reason:   "A pool that already cloned this golden composes a changed template even though the golden now reads Failed.",
			xr:       nodePoolXR(map[string]any{"osImage": builtin(), "diskSize": "30Gi", "storageClass": "replicated"}),
			world:    clonedDisk(failed),
			observed: existingBuiltin,
		},
		"GoldenThatExistsOnlyAsPVCIsReady": {
			reason: "A PVC without a DataVolume is a populated source; its class and size are read from the PVC.",
			xr:     nodePoolXR(builtinSpec),
			world:  worldFixture{goldenPVC: goldenPVC("replicated"), classes: defaultClass, profiles: cdiProfiles},
		},
		"NewTemplateWaitsForTheGoldenClaimsCapacity": {
			reason: "CDI's clone planner needs the golden claim's status.capacity (planner.go validateAdvancedClonePVC) and retries without it; the pre-flight cannot check the clone, so the new template is held, transiently, naming the claim and the field.",
			xr:     nodePoolXR(builtinSpec),
			world:  func() worldFixture { w := succeeded; w.goldenPVC = pendingGoldenPVC("replicated"); return w }(),
			want:   summary{Gate: "Held/ClonePlanPending"},
		},
		"NewTemplateWaitsForAGoldenClaimNotSeenYet": {
			reason: "Crossplane's PVC informer can deliver the golden claim after the DataVolume read Succeeded; CDI waits for a missing source (CloneWithoutSource), and so does the pre-flight.",
			xr:     nodePoolXR(builtinSpec),
			world:  func() worldFixture { w := succeeded; w.goldenPVC = nil; return w }(),
			want:   summary{Gate: "Held/ClonePlanPending"},
		},
		"NewTemplateWaitsForTheClassesStorageProfile": {
			reason: "CDI renders the worker claim's modes from the class's StorageProfile, which its controller creates shortly after the class; until then the new template is held.",
			xr:     nodePoolXR(builtinSpec),
			world:  func() worldFixture { w := succeeded; w.profiles = nil; return w }(),
			want:   summary{Gate: "Held/ClonePlanPending"},
		},
		"ExistingHTTPPoolSwitchingToBuiltinKeepsItsTemplateWhileTheClonePlanWaits": {
			reason:   "A pending clone plan holds the change like any gate: every observed resource is re-emitted as observed.",
			xr:       nodePoolXR(builtinSpec),
			world:    func() worldFixture { w := succeeded; w.goldenPVC = pendingGoldenPVC("replicated"); return w }(),
			observed: existingHTTP,
			want:     summary{Resources: heldHTTP, Gate: "Held/ClonePlanPending", Template: httpKMT},
		},
		"ComposedTemplateIsNotHeldWhileTheGoldenClaimHasNoCapacity": {
			reason:   "Only a new template is gated: one already composed is kept and composed as before, whatever the golden claim says now.",
			xr:       nodePoolXR(builtinSpec),
			world:    func() worldFixture { w := succeeded; w.goldenPVC = pendingGoldenPVC("replicated"); return w }(),
			observed: existingBuiltin,
			want:     summary{Gate: "Open/TemplateComposed", Template: builtinKMT},
		},
		"GoldenPVCWithoutClassClonesWithItsVolumesDriver": {
			reason: "A golden that exists only as a PVC naming no class: CDI takes the source driver from the bound PV's spec.csi.driver (clone/common.go GetDriverFromVolume), the target class's provisioner matches, so it is a CSI clone and the template is composed.",
			xr:     nodePoolXR(builtinSpec),
			world:  worldFixture{goldenPVC: goldenPVC(""), goldenPV: goldenPV("csi.example.com"), classes: defaultClass, profiles: cdiProfiles},
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"GoldenPVCWithoutClassOnAnotherDriverIsAHostAssistedCopy": {
			reason: "The same golden on a PV of another CSI driver shares no driver with the target class: CDI falls back (IncompatibleProvisioners), and the template is held.",
			xr:     nodePoolXR(builtinSpec),
			world:  worldFixture{goldenPVC: goldenPVC(""), goldenPV: goldenPV("rbd.csi.ceph.com"), classes: defaultClass, profiles: cdiProfiles},
			want:   summary{Gate: "Held/HostAssistedCopy"},
		},
		"GoldenPVCWithoutClassWhoseVolumeIsMissingIsAHostAssistedCopy": {
			reason: "GetDriverFromVolume gives no driver for a PV that does not exist, and the claim has no class: no common driver, IncompatibleProvisioners; the message names the PV.",
			xr:     nodePoolXR(builtinSpec),
			world:  worldFixture{goldenPVC: goldenPVC(""), classes: defaultClass, profiles: cdiProfiles},
			want:   summary{Gate: "Held/HostAssistedCopy"},
		},
		"GoldenPVCWithoutClassTakesItsSnapshotClassFromTheDefaultClassesProfile": {
			reason: "CDI reads a classless claim's snapshot class from the Kubernetes default class's StorageProfile (getSnapshotClassForClaim, GetStorageClassByNameWithK8sFallback): both profiles name VolumeSnapshotClass gone, which does not exist, so CDI errors whatever default the driver has; the template is held.",
			xr:     nodePoolXR(builtinSpec),
			world: func() worldFixture {
				sp := storageProfile("replicated", "snapshot")
				_ = unstructured.SetNestedField(sp.Object, "gone", "status", "snapshotClass")
				vsc := obj("snapshot.storage.k8s.io/v1", "VolumeSnapshotClass", "", "csi-default", map[string]any{
					"driver": "csi.example.com", "deletionPolicy": "Delete", "annotations": map[string]any{"snapshot.storage.kubernetes.io/is-default-class": "true"},
				})
				return worldFixture{goldenPVC: goldenPVC(""), goldenPV: goldenPV("csi.example.com"), classes: defaultClass,
					profiles: []*unstructuredT{sp}, snapshotClasses: []*unstructuredT{vsc}}
			}(),
			want: summary{Gate: "Held/CloneWouldFail"},
		},
		"CrossClassCloneIsHeld": {
			reason: "A pool declaring another class than its golden's is held, naming both classes and the remedies.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "storageClass": "local"}),
			world:  succeeded,
			want:   summary{Gate: "Held/StorageClassMismatch"},
		},
		"CrossClassCopyChosenForTheClassIsComposed": {
			reason: "With local listed in clonePreflight.hostAssistedCopy.storageClasses, the pool copies from the golden on replicated: composed, its disk asking CDI for the copy.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "storageClass": "local"}),
			world:  copyWorld(),
			config: func(c *config.Config) { c.HostAssistedCopyClasses = []string{"local"} },
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"CrossClassViaDefaultSaysWhichSideWasDefaulted": {
			reason: "A golden without a class resolves to today's default; the message says that side came from the default.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "storageClass": "replicated"}),
			world: worldFixture{
				goldenDV: obj("cdi.kubevirt.io/v1beta1", "DataVolume", "cozy-public", fxGolden, map[string]any{"status": map[string]any{"phase": "Succeeded"}}),
				classes:  []*unstructuredT{storageClassObj("local", "2026-01-01T00:00:00Z", map[string]any{storageclass.AnnDefault: "true"})},
			},
			want: summary{Gate: "Held/StorageClassMismatch"},
		},
		"ClassResolvedFromVirtDefault": {
			reason: "With no declared class and no disk, the pool lands on the virtualization default, which is written into the template.",
			xr:     nodePoolXR(builtinSpec),
			world:  withClasses(succeeded, "replicated", storageclass.AnnVirtDefault),
		},
		"ClassResolvedFromGADefault": {
			reason: "Without a virtualization default, the GA default class is used.",
			xr:     nodePoolXR(builtinSpec),
			world:  withClasses(succeeded, "replicated", storageclass.AnnDefault),
		},
		"BetaDefaultIsNoDefaultForCDI": {
			reason: "CDI reads only the GA and virtualization default annotations: with only a beta default, CDI cannot build a worker disk without a class (ErrClaimNotValid), so the new template is held with the fix.",
			xr:     nodePoolXR(builtinSpec),
			world:  withClasses(succeeded, "replicated", storageclass.AnnBetaDefault),
		},
		"DiskSmallerThanGoldenIsHeld": {
			reason: "diskSize below the golden's storage is held back with the minimum size.",
			xr:     nodePoolXR(map[string]any{"osImage": builtin(), "diskSize": "5Gi"}),
			world:  succeeded,
			want:   summary{Gate: "Held/DiskTooSmall"},
		},
		"MatrixViolationViaTalosVersionIsFatal": {
			reason: "Kubernetes v1.36 is not supported by Talos v1.12; the pool's talos.version reaches it.",
			xr:     nodePoolXR(map[string]any{"version": "v1.36", "talos": map[string]any{"version": "v1.12.4"}}),
			want:   summary{Fatal: `XNodePool "tenant-a/demo-md0": spec.talos.version: Kubernetes v1.36 is not supported by Talos v1.12.4 (Talos v1.12 supports v1.30, v1.31, v1.32, v1.33, v1.34, v1.35). Change spec.version or set spec.talos.version to a Talos release that supports it.`},
		},
		"MatrixViolationViaOverrideIsFatalAndSaysSo": {
			reason: "The osImage override must not bypass the matrix; the message names the override.",
			xr:     nodePoolXR(map[string]any{"version": "v1.36", "osImage": map[string]any{"builtin": map[string]any{"version": "v1.12.4"}}}),
			want:   summary{Fatal: `XNodePool "tenant-a/demo-md0": spec.osImage.builtin.version: Kubernetes v1.36 is not supported by Talos v1.12.4 (Talos v1.12 supports v1.30, v1.31, v1.32, v1.33, v1.34, v1.35). Node pool "tenant-a/demo-md0" reaches this Talos release through spec.osImage.builtin.version, not through Input talos.version. Change spec.version, change spec.osImage.builtin.version, or drop the override so the pool follows Input talos.version.`},
		},
		"UnknownTalosMinorPassesWithWarning": {
			reason: "A Talos minor the matrix does not list is allowed and reported.",
			xr:     nodePoolXR(map[string]any{"talos": map[string]any{"version": "v1.14.0"}}),
		},
		"BothBuiltinAndFactoryIsFatal": {
			reason: "builtin and factory together is a spec error.",
			xr:     nodePoolXR(map[string]any{"osImage": map[string]any{"builtin": map[string]any{}, "factory": map[string]any{}}}),
			want:   summary{Fatal: `XNodePool "tenant-a/demo-md0": spec.osImage: Invalid value: sets both builtin and factory; set only one: builtin clones the golden image of the catalog, factory imports over HTTP from the Image Factory`},
		},
		"UnknownOSImageKeyIsFatal": {
			reason: "A typo under osImage must not silently select HTTP.",
			xr:     nodePoolXR(map[string]any{"osImage": map[string]any{"buitin": map[string]any{}}}),
			want:   summary{Fatal: `XNodePool "tenant-a/demo-md0": spec.osImage.buitin: Unsupported value: "buitin": supported values: "builtin", "factory"`},
		},
		"OldTemplateKeptWhileMachineSetReferencesIt": {
			reason:   "A changed template rolls the pool; the previous ones stay while a MachineSet points at them.",
			xr:       nodePoolXR(map[string]any{"diskSize": "40Gi"}),
			world:    worldFixture{sets: []*unstructuredT{machineSet("demo-md0-old", httpKMT, httpTCT)}},
			observed: existingHTTP,
		},
		"OldTemplateDroppedOnceNoMachineSetReferencesIt": {
			reason: "Once the MachineDeployment and every MachineSet point at the new template, the old one is dropped.",
			xr:     nodePoolXR(map[string]any{"diskSize": "40Gi"}),
			observed: func() map[resource.Name]resource.ObservedComposed {
				o := composeOnce(t, map[string]any{"diskSize": "40Gi"}, missing, mdReady(1))
				for n, v := range existingHTTP {
					if n != read.ResourceMachineDeployment {
						o[n] = v
					}
				}
				return o
			}(),
		},
		"CloneWithoutSourceAndHostAssistedCopyReported": {
			reason: "Stuck and host-assisted clones of worker disks surface as CloneHealthy=False.",
			xr:     nodePoolXR(builtinSpec),
			world: func() worldFixture {
				w := succeeded
				w.dvs = []*unstructuredT{workerDV("demo-md0-x-disk-system", "CloneWithoutSource", true)}
				copied := workerDV("demo-md0-y-disk-system", "Succeeded", true)
				copied.SetAnnotations(map[string]string{labels.AnnCDICloneType: "copy"})
				w.dvs = append(w.dvs, copied)
				return w
			}(),
			observed: existingBuiltin,
		},
		"LegacyClaimXRTakesNamespaceFromClaimLabel": {
			reason: "A cluster-scoped XR behind a claim composes into the claim's namespace.",
			xr: func() *composite.Unstructured {
				xr := nodePoolXR(httpSpec)
				xr.SetNamespace("")
				xr.SetName("demo-md0-x7k2p")
				xr.SetLabels(map[string]string{pool.LabelClaimNamespace: fxNamespace})
				xr.Object["spec"].(map[string]any)["poolName"] = fxPool
				return xr
			}(),
			want: summary{
				Resources: []string{"kubevirtmachinetemplate-" + httpKMT + " ready=False", "machinedeployment ready=False", "machinehealthcheck ready=False", "talosconfigtemplate-" + httpTCT + " ready=False"},
				Gate:      "Open/TemplateComposed", Template: httpKMT,
			},
		},
		"MirrorsOfATalos111PoolStayInTheMachineConfig": {
			reason: "Below Talos 1.12 registry mirrors are machine.registries.mirrors in the one machine patch.",
			xr: nodePoolXR(map[string]any{"version": "v1.34", "talos": map[string]any{"version": "v1.11.5", "registryMirrors": map[string]any{
				"docker.io": map[string]any{"endpoints": []any{"https://mirror.internal"}},
			}}}),
		},
		"MirrorsOfATalos113PoolAreRegistryMirrorConfigDocuments": {
			reason: "From Talos 1.12 each mirrored registry is a RegistryMirrorConfig document, one strategic patch each, after the machine patch.",
			xr: nodePoolXR(map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{
				"docker.io": map[string]any{"endpoints": []any{"https://mirror.internal"}},
				"ghcr.io":   map[string]any{"endpoints": []any{"https://ghcr.internal"}, "skipFallback": true},
			}}}),
		},
		"OtherArchitecturePoolHeldWhileKubeVirtRefusesIt": {
			reason: "An arm64 pool on an amd64 control plane without the MultiArchitecture gate composes nothing: KubeVirt would refuse every VM.",
			xr:     nodePoolXR(arm64Spec),
			world:  worldFixture{kubevirt: kubeVirtOff},
			want:   summary{Gate: "Held/ArchitectureNotAdmitted"}, // nothing composed: testdata
		},
		"OtherArchitecturePoolComposedWithTheGateOn": {
			reason: "With the gate on the arm64 pool composes, its VM naming arm64.",
			xr:     nodePoolXR(arm64Spec),
			world:  worldFixture{kubevirt: kubeVirtOn},
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"OtherArchitecturePoolComposedWithoutAKubeVirtCR": {
			reason: "No KubeVirt CR (KubeVirt on CAPK's infrastructure cluster): the gate cannot be seen and holds nothing.",
			xr:     nodePoolXR(arm64Spec),
			want:   summary{Gate: "Open/TemplateComposed"},
		},
		"OtherArchitecturePoolHeldWhileTheKubeVirtCRIsUnreadable": {
			reason: "A KubeVirt CR that cannot be read: whether it admits the VM is unknown, so nothing new is composed, and the CR is reported unreadable.",
			xr:     nodePoolXR(arm64Spec),
			world:  worldFixture{kubevirt: kubeVirtUnreadable},
			want:   summary{Gate: "Held/ArchitectureNotAdmitted"}, // nothing composed: testdata
		},
		"OtherArchitecturePoolKeepsWhatRunsWhenHeld": {
			reason:   "The gate turned off under a running arm64 pool whose spec then changes: the new template is held, the running one and its deployment are kept.",
			xr:       nodePoolXR(arm64Larger),
			world:    worldFixture{kubevirt: kubeVirtOff},
			observed: existingArm64,
			want: summary{Resources: []string{
				"deletion-guard ready=True",
				"kubevirtmachinetemplate-" + arm64KMT + " ready=True",
				"machinedeployment ready=True",
				"machinehealthcheck ready=True",
				"talosconfigtemplate-" + arm64TCT + " ready=True",
			}, Gate: "Held/ArchitectureNotAdmitted", Template: arm64KMT},
		},
		"OtherArchitecturePoolRunningIsNotHeld": {
			reason:   "A running arm64 pool whose template is composed is never held by the gate: the hold keeps what runs, and there is nothing new.",
			xr:       nodePoolXR(arm64Spec),
			world:    worldFixture{kubevirt: kubeVirtOff},
			observed: existingArm64,
			want:     summary{Gate: "Open/TemplateComposed"},
		},
		"SteadyStateEmitsNoResults": {
			reason: "With the observed status already saying what this reconcile decides, no event is emitted.",
			xr: withStatus(nodePoolXR(httpSpec), map[string]any{
				"template": httpKMT, "gate": map[string]any{"state": "Open", "reason": "TemplateComposed"},
			}),
			observed: existingHTTP,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := request(t, tc.xr, tc.world, tc.observed)
			if tc.config != nil {
				tc.config(&r.Config)
			}
			out := composetest.Run(Mode{}, r).Output
			if tc.want.Fatal != "" || tc.want.Gate != "" {
				got := summarize(out)
				if tc.want.Resources == nil && tc.want.Fatal == "" {
					tc.want.Resources = got.Resources
				}
				if tc.want.Template == "" {
					tc.want.Template = got.Template
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
				}
			}
			checkGolden(t, name, outputYAML(t, out))
		})
	}
}

// cdiWorld is a Succeeded 6Gi golden on Block class "replicated" as CDI
// shows it: the PVC bound with its capacity, the class's StorageProfile with
// its clone strategy and claim property sets, and the class allowing volume
// expansion or not.
func cdiWorld(canExpand bool, strategy string) worldFixture {
	w := succeeded
	sc := storageClassObj("replicated", "2025-06-01T00:00:00Z", map[string]any{storageclass.AnnDefault: "true"})
	if canExpand {
		sc = expandable(sc)
	}
	w.classes = []*unstructuredT{sc}
	w.profiles = []*unstructuredT{storageProfile("replicated", strategy)}
	return w
}

func withClasses(w worldFixture, name, annotation string) worldFixture {
	// The golden declares no class, so both sides resolve to the default.
	w.goldenDV = obj("cdi.kubevirt.io/v1beta1", "DataVolume", "cozy-public", fxGolden, map[string]any{
		"spec":   map[string]any{"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "6Gi"}}}},
		"status": map[string]any{"phase": "Succeeded"},
	})
	// Its claim names the class CDI bound it on, as CDI writes it into the
	// claim it renders (only a class CDI reads as default).
	w.goldenPVC = goldenPVC(name)
	w.classes = []*unstructuredT{
		expandable(storageClassObj(name, "2026-02-01T00:00:00Z", map[string]any{annotation: "true"})),
		expandable(storageClassObj("older", "2025-02-01T00:00:00Z", map[string]any{annotation: "true"})),
	}
	w.profiles = []*unstructuredT{storageProfile(name, "csi-clone"), storageProfile("older", "csi-clone")}
	return w
}
