package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	pkgv1beta1 "github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
)

// The DeploymentRuntimeConfig the platform example ships
// (example/platform/deploymentruntimeconfig.yaml) is read strictly into
// Crossplane's own types and held to what Crossplane does with it and to
// this binary's flags: a typo in a field, a flag the function does not know
// or a concurrency bound that does not match the CPU limit fails here, not
// in a cluster. The e2e suite applies it to a real API server with
// Crossplane's CRDs (TestDeploymentRuntimeConfigIsAdmitted).
func TestDeploymentRuntimeConfig(t *testing.T) {
	raw, err := os.ReadFile("example/platform/deploymentruntimeconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var drc *pkgv1beta1.DeploymentRuntimeConfig
	var pdb *policyv1.PodDisruptionBudget
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var tm struct{ Kind string }
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "DeploymentRuntimeConfig":
			drc = &pkgv1beta1.DeploymentRuntimeConfig{}
			err = yaml.UnmarshalStrict(doc, drc)
		case "PodDisruptionBudget":
			pdb = &policyv1.PodDisruptionBudget{}
			err = yaml.UnmarshalStrict(doc, pdb)
		default:
			t.Fatalf("unexpected %q in the example", tm.Kind)
		}
		if err != nil {
			t.Fatalf("%s does not decode strictly: %v", tm.Kind, err)
		}
	}
	if drc == nil || pdb == nil {
		t.Fatal("the example must carry a DeploymentRuntimeConfig and a PodDisruptionBudget")
	}

	// The name Crossplane labels the pods with: the Function's, as the
	// platform example installs it.
	fnName := functionName(t)
	spec := drc.Spec.DeploymentTemplate.Spec
	if spec == nil || spec.Replicas == nil || *spec.Replicas < 2 {
		t.Fatalf("the function runs two replicas at least; got %v", spec)
	}
	var c *corev1.Container
	for i := range spec.Template.Spec.Containers {
		if spec.Template.Spec.Containers[i].Name == "package-runtime" {
			c = &spec.Template.Spec.Containers[i]
		}
	}
	if c == nil {
		t.Fatal("Crossplane merges only the container named package-runtime (internal/controller/pkg/runtime/runtime.go ContainerName)")
	}

	// The flags are this binary's, and the concurrency bound is the CPU
	// limit in whole CPUs.
	cli := &CLI{}
	parser, err := kong.New(cli, kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(c.Args); err != nil {
		t.Fatalf("the container's args %v are not flags of this function: %v", c.Args, err)
	}
	cpu := c.Resources.Limits[corev1.ResourceCPU]
	if want := cpu.Value(); int64(cli.MaxConcurrentCalls) != want {
		t.Errorf("--max-concurrent-calls=%d, want the CPU limit in whole CPUs (%s = %d): calls are CPU-bound", cli.MaxConcurrentCalls, cpu.String(), want)
	}
	mem := c.Resources.Limits[corev1.ResourceMemory]
	req := c.Resources.Requests[corev1.ResourceMemory]
	if mem.IsZero() || req.IsZero() || req.Cmp(mem) > 0 {
		t.Errorf("memory request %s and limit %s: both set, request at most the limit", req.String(), mem.String())
	}
	var gomemlimit string
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			gomemlimit = e.Value
		}
	}
	soft, err := resource.ParseQuantity(strings.TrimSuffix(gomemlimit, "B"))
	if err != nil || soft.Cmp(mem) >= 0 {
		t.Errorf("GOMEMLIMIT %q must be below the memory limit %s, or the garbage collector works to a limit the kernel enforces first", gomemlimit, mem.String())
	}

	// Anti-affinity and the budget select the pods Crossplane labels.
	aa := spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		t.Fatal("the replicas prefer different nodes")
	}
	term := aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels[pkgv1.LabelFunction] != fnName {
		t.Errorf("anti-affinity %+v must spread pods labelled %s=%s over %s", term, pkgv1.LabelFunction, fnName, corev1.LabelHostname)
	}
	if pdb.Spec.Selector.MatchLabels[pkgv1.LabelFunction] != fnName || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 {
		t.Errorf("the PodDisruptionBudget must keep one pod labelled %s=%s: %+v", pkgv1.LabelFunction, fnName, pdb.Spec)
	}
}

// functionName is the Function's name in the platform example.
func functionName(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("example/platform/functions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fn := pkgv1.Function{}
	if err := yaml.Unmarshal(raw, &fn); err != nil {
		t.Fatal(err)
	}
	if fn.Spec.RuntimeConfigReference == nil || fn.Spec.RuntimeConfigReference.Name != "function-worker-image" {
		t.Errorf("the example Function must reference the DeploymentRuntimeConfig: %+v", fn.Spec.RuntimeConfigReference)
	}
	return fn.Name
}
