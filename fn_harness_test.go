package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/cozystack/function-worker-image/internal/fixture"
)

// This file is the shared harness of the RunFunction-level reliability tests
// (fuzz, determinism, catalogue, properties, concurrency): it turns every
// shipped example scenario into the RunFunctionRequest Crossplane would send,
// and checks the invariants every response must hold.

// exampleScenario is one example/<mode>/scenarios/<name> directory, as
// fixture.LoadExamples reads it.
type exampleScenario struct {
	Name     string // "<mode>/<name>"
	Input    *structpb.Struct
	XR       *structpb.Struct
	Observed map[string]*fnv1.Resource
	// Pool holds the objects of required.yaml; requirements are resolved
	// against it the way Crossplane resolves them against the cluster.
	Pool  []*structpb.Struct
	first *fnv1.RunFunctionRequest
}

// yamlDocs reads the objects of a multi-document YAML file; none when the
// file does not exist.
func yamlDocs(t testing.TB, path string) []*structpb.Struct {
	t.Helper()
	objs, err := fixture.ReadObjects(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := fixture.Structs(objs)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// loadExampleScenarios reads every example/*/scenarios/* directory, sorted.
func loadExampleScenarios(t testing.TB) []exampleScenario {
	t.Helper()
	examples, err := fixture.LoadExamples("example")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("no example scenarios found")
	}
	out := make([]exampleScenario, 0, len(examples))
	for _, e := range examples {
		req, err := e.Request()
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		req.Meta = &fnv1.RequestMeta{Tag: e.Name}
		pool, err := fixture.Structs(e.Objects)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		out = append(out, exampleScenario{
			Name:     e.Name,
			Input:    req.GetInput(),
			XR:       req.GetObserved().GetComposite().GetResource(),
			Observed: req.GetObserved().GetResources(),
			Pool:     pool,
			first:    req,
		})
	}
	return out
}

// firstRequest is the request of the first call of a reconcile: nothing
// required has been fetched yet.
func (sc exampleScenario) firstRequest() *fnv1.RunFunctionRequest {
	return proto.CloneOf(sc.first)
}

// field reads a nested string field of a struct.
func field(s *structpb.Struct, path ...string) string {
	for _, p := range path[:len(path)-1] {
		s = s.GetFields()[p].GetStructValue()
	}
	return s.GetFields()[path[len(path)-1]].GetStringValue()
}

// newTestFunction is the function under test, as main serves it, at
// fixture.Clock as the render harness's function process runs, so that an
// example's expected output holds for it.
func newTestFunction() *Function {
	return NewFunction(logging.NewNopLogger(), time.Minute, WithClock(fixture.Clock))
}

// settleRequest calls f the way Crossplane does (fixture.Loop): first with
// the request as given, then with what the response's requirements select
// from pool, until the requirements stop changing. It returns the last
// request and its response. Requirements that never settle are not what
// these tests judge: the last call is returned as it is.
func settleRequest(t testing.TB, f *Function, req *fnv1.RunFunctionRequest, pool []*structpb.Struct) (*fnv1.RunFunctionRequest, *fnv1.RunFunctionResponse) {
	t.Helper()
	calls, err := fixture.Loop(context.Background(), f.RunFunction, req, fixture.FromStructs(pool))
	if err != nil && !errors.Is(err, fixture.ErrNotSettled) {
		t.Fatalf("RunFunction returned an error (problems must be results): %v", err)
	}
	last := calls[len(calls)-1]
	return last.Request, last.Response
}

// deterministicBytes is the byte form Crossplane receives, deterministic.
func deterministicBytes(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := deterministicMarshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func deterministicMarshal(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// fatalMessage returns the message of the response's fatal result, or "".
func fatalMessage(rsp *fnv1.RunFunctionResponse) string {
	for _, r := range rsp.GetResults() {
		if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
			return r.GetMessage()
		}
	}
	return ""
}

// kindsNamedInLabels are kinds whose name becomes a label value elsewhere
// (cluster.x-k8s.io/deployment-name, crossplane.io/composite), so it must
// also fit in 63 characters.
var kindsNamedInLabels = map[string]bool{"MachineDeployment": true, "XNodePool": true, "XTenantCluster": true}

// malformedOutput lists what is wrong with the desired composed resources of rsp:
// names, namespaces, labels and annotation keys the API server would refuse,
// and URLs that do not parse. A resource re-emitted under the key it was
// observed with, with the observed name, is exempt: the function did not make
// it up, it only kept it.
func malformedOutput(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) []string {
	var out []string
	keys := make([]string, 0, len(rsp.GetDesired().GetResources()))
	for k := range rsp.GetDesired().GetResources() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		obj := rsp.GetDesired().GetResources()[k].GetResource()
		if o, ok := req.GetObserved().GetResources()[k]; ok && field(o.GetResource(), "metadata", "name") == field(obj, "metadata", "name") && field(o.GetResource(), "metadata", "namespace") == field(obj, "metadata", "namespace") {
			continue
		}
		bad := func(format string, args ...any) { out = append(out, k+": "+fmt.Sprintf(format, args...)) }
		if len(validation.IsQualifiedName(k)) > 0 && len(validation.IsDNS1123Subdomain(k)) > 0 {
			bad("composition-resource-name %q is not a valid annotation value", k)
		}
		kind, name, ns := field(obj, "kind"), field(obj, "metadata", "name"), field(obj, "metadata", "namespace")
		if field(obj, "apiVersion") == "" || kind == "" {
			bad("no apiVersion or kind")
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			bad("name %q: %s", name, errs[0])
		}
		if kindsNamedInLabels[kind] {
			if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
				bad("%s name %q is used as a label value: %s", kind, name, errs[0])
			}
		}
		// The composite's own namespace exists (the API server admitted the
		// composite into it); only a namespace the function chose is judged.
		if ns != "" && ns != field(req.GetObserved().GetComposite().GetResource(), "metadata", "namespace") {
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				bad("namespace %q: %s", ns, errs[0])
			}
		}
		md := obj.GetFields()["metadata"].GetStructValue()
		for lk, lv := range md.GetFields()["labels"].GetStructValue().GetFields() {
			if errs := validation.IsQualifiedName(lk); len(errs) > 0 {
				bad("label key %q: %s", lk, errs[0])
			}
			if errs := validation.IsValidLabelValue(lv.GetStringValue()); len(errs) > 0 {
				bad("label %s=%q: %s", lk, lv.GetStringValue(), errs[0])
			}
		}
		for ak := range md.GetFields()["annotations"].GetStructValue().GetFields() {
			if errs := validation.IsQualifiedName(ak); len(errs) > 0 {
				bad("annotation key %q: %s", ak, errs[0])
			}
		}
		walkStrings(obj, "", func(path, key, v string) {
			if strings.EqualFold(key, "url") || strings.HasSuffix(key, "URL") {
				u, err := url.Parse(v)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
					bad("%s %q is not a plain http(s) URL", path, v)
				}
			}
			// A PEM bundle in a ConfigMap (a pool's Image Factory CA) is
			// lines by nature; the function validated it as certificates.
			pem := kind == "ConfigMap" && strings.HasPrefix(path, ".data.")
			if strings.ContainsAny(v, "\n\r`$") && !strings.Contains(path, "annotations") && !pem {
				bad("%s %q carries a newline, backtick or $", path, v)
			}
		})
	}
	return out
}

// walkStrings calls fn for every string leaf of s.
func walkStrings(s *structpb.Struct, path string, fn func(path, key, v string)) {
	keys := make([]string, 0, len(s.GetFields()))
	for k := range s.GetFields() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		walkValue(s.GetFields()[k], path+"."+k, k, fn)
	}
}

func walkValue(v *structpb.Value, path, key string, fn func(path, key, v string)) {
	switch x := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		if key == "strategicPatches" || key == "data" {
			// A Talos config patch, and a Join pool's whole config (data),
			// is a YAML document: judge what it says.
			doc := &structpb.Struct{}
			j, err := yaml.YAMLToJSON([]byte(x.StringValue))
			if err != nil || doc.UnmarshalJSON(j) != nil {
				fn(path, key, "unparseable patch: "+x.StringValue+"\n")
				return
			}
			walkStrings(doc, path+"(yaml)", fn)
			return
		}
		fn(path, key, x.StringValue)
	case *structpb.Value_StructValue:
		walkStrings(x.StructValue, path, fn)
	case *structpb.Value_ListValue:
		for i, e := range x.ListValue.GetValues() {
			walkValue(e, fmt.Sprintf("%s[%d]", path, i), key, fn)
		}
	}
}

// modeOf is the mode a request is served in: the Input's, else the kind's.
func modeOf(req *fnv1.RunFunctionRequest) string {
	if m := field(req.GetInput(), "mode"); m != "" {
		return m
	}
	return map[string]string{"XWorkerImageCatalog": "Catalog", "XTenantCluster": "TenantCluster", "XNodePool": "NodePool"}[field(req.GetObserved().GetComposite().GetResource(), "kind")]
}

// droppedOutput lists the observed composed resources this function owns
// that a deciding (non-fatal) response leaves out of the desired state
// without a documented rule retiring them. Leaving a key out deletes the
// object. The rules: a catalog golden that nothing pins (it is composed
// whenever it is in the catalog, so a missing one has left it): with Usages
// on, one without Crossplane's in-use label; with Usages off, one no template
// pins. A node-pool template that neither a MachineSet nor the observed
// MachineDeployment references. A tenant cluster's XNodePool whose pool left
// spec.nodePools.
func droppedOutput(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) []string {
	if fatalMessage(rsp) != "" {
		return nil // Crossplane applies nothing from a fatal response
	}
	desired := rsp.GetDesired().GetResources()
	var out []string
	keys := make([]string, 0, len(req.GetObserved().GetResources()))
	for k := range req.GetObserved().GetResources() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := desired[k]; ok {
			continue
		}
		if why := retired(req, k); why != "" {
			continue
		}
		out = append(out, k)
	}
	return out
}

// retired says which rule retires the observed key k, or "" if it is owned
// by this function and no rule does (or "not owned" when it is another
// step's). An object that is not the kind the function composes under its
// key is never retired: the function does not delete what it cannot read.
func retired(req *fnv1.RunFunctionRequest, k string) string {
	if !composedKind(req, k) {
		return ""
	}
	switch modeOf(req) {
	case "Catalog":
		name, ok := strings.CutPrefix(k, "golden-")
		if !ok {
			if k == "clone-clusterrole" || k == "clone-rolebinding" {
				return ""
			}
			return "not owned"
		}
		if usagesOn(req) {
			// Crossplane's usage controller labels the golden while any
			// Usage names it, and every template that clones it has one.
			if inUseLabel(req.GetObserved().GetResources()[k].GetResource()) {
				return ""
			}
			return "golden that left the catalog and no Usage protects"
		}
		pins, fetched := req.GetRequiredResources()["pins-"+name]
		if !fetched {
			return ""
		}
		for _, it := range pins.GetItems() {
			if field(it.GetResource(), "metadata", "namespace") != "" {
				return ""
			}
		}
		return "unpinned golden that left the catalog"
	case "NodePool":
		// A pool asked to go (a delete Crossplane refused and recorded, or
		// its XTenantCluster's teardown annotation) drops its deployment and
		// health check first, and everything once the deployment is gone.
		ann := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue().GetFields()["annotations"].GetStructValue().GetFields()
		if _, asked := ann["usage.crossplane.io/deletion-attempt-with-policy"]; asked || ann["workerimage.cozystack.io/teardown"].GetStringValue() == "true" {
			if _, md := req.GetObserved().GetResources()["machinedeployment"]; !md || k == "machinedeployment" || k == "machinehealthcheck" {
				return "pool asked to go"
			}
			return ""
		}
		var ref string
		switch {
		case strings.HasPrefix(k, "kubevirtmachinetemplate-"):
			ref = "infrastructureRef"
		case strings.HasPrefix(k, "talosconfigtemplate-"):
			ref = "configRef"
		case k == "machinedeployment":
			return ""
		default:
			return "not owned"
		}
		name := field(req.GetObserved().GetResources()[k].GetResource(), "metadata", "name")
		refs := func(o *structpb.Struct) bool {
			spec := o.GetFields()["spec"].GetStructValue().GetFields()["template"].GetStructValue().GetFields()["spec"].GetStructValue()
			if ref == "configRef" {
				spec = spec.GetFields()["bootstrap"].GetStructValue()
			}
			return field(spec, ref, "name") == name
		}
		// Only a MachineDeployment the function can read references anything
		// (Crossplane always observes it with the apiVersion it composed).
		if md, ok := req.GetObserved().GetResources()["machinedeployment"]; ok && field(md.GetResource(), "apiVersion") == "cluster.x-k8s.io/v1beta1" && field(md.GetResource(), "kind") == "MachineDeployment" && refs(md.GetResource()) {
			return ""
		}
		for _, ms := range req.GetRequiredResources()["machinesets"].GetItems() {
			if refs(ms.GetResource()) {
				return ""
			}
		}
		return "template no MachineSet references"
	case "TenantCluster":
		pool, ok := strings.CutPrefix(k, "nodepool-")
		if !ok {
			return "not owned"
		}
		if _, in := req.GetObserved().GetComposite().GetResource().GetFields()["spec"].GetStructValue().GetFields()["nodePools"].GetStructValue().GetFields()[pool]; in {
			return ""
		}
		return "pool left spec.nodePools"
	}
	return "not owned"
}

// usagesOn reports whether the request's Input leaves Crossplane Usages on
// (usages.enabled, default true): the catalog then learns what pins a golden
// from its in-use label, not from the templates.
func usagesOn(req *fnv1.RunFunctionRequest) bool {
	v, ok := req.GetInput().GetFields()["usages"].GetStructValue().GetFields()["enabled"]
	if !ok {
		return true
	}
	if _, isNull := v.GetKind().(*structpb.Value_NullValue); isNull {
		return true
	}
	return v.GetBoolValue()
}

// inUseLabel reports whether an object carries Crossplane's in-use label.
func inUseLabel(o *structpb.Struct) bool {
	return field(o, "metadata", "labels", "crossplane.io/in-use") == "true"
}

// composedKind reports whether the observed object under k is the kind the
// function composes under that key; keys it does not own count as such.
func composedKind(req *fnv1.RunFunctionRequest, k string) bool {
	o := req.GetObserved().GetResources()[k].GetResource()
	is := func(apiVersion, kind string) bool {
		return field(o, "apiVersion") == apiVersion && field(o, "kind") == kind
	}
	switch modeOf(req) {
	case "Catalog":
		if strings.HasPrefix(k, "golden-") {
			return is("cdi.kubevirt.io/v1beta1", "DataVolume")
		}
	case "NodePool":
		switch {
		case strings.HasPrefix(k, "kubevirtmachinetemplate-"):
			return is("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate")
		case strings.HasPrefix(k, "talosconfigtemplate-"):
			return is("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate")
		}
	case "TenantCluster":
		if strings.HasPrefix(k, "nodepool-") {
			return is("workerimage.cozystack.io/v1alpha1", "XNodePool")
		}
	}
	return true
}
