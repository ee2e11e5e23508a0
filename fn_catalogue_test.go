package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// badInput mutates a copy of an example scenario into a malformed one.
type badInput struct {
	// base names the example scenario, "<mode>/<name>".
	base string
	// spec replaces top-level fields of the composite's spec; a nil value
	// deletes the field.
	spec map[string]any
	// input replaces top-level fields of the function Input.
	input map[string]any
	// observed replaces (or, with a nil object, deletes) observed composed
	// resources by composition-resource-name.
	observed map[string]map[string]any
	// pool edits the cluster objects requirements are resolved against.
	pool func([]*structpb.Struct) []*structpb.Struct
	// name renames the composite.
	name string
}

func (b badInput) request(t testing.TB, scenarios map[string]exampleScenario) (*fnv1.RunFunctionRequest, []*structpb.Struct) {
	t.Helper()
	sc, ok := scenarios[b.base]
	if !ok {
		t.Fatalf("no example scenario %q", b.base)
	}
	req := sc.firstRequest()
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	spec, _ := xr["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	for k, v := range b.spec {
		if v == nil {
			delete(spec, k)
			continue
		}
		spec[k] = v
	}
	xr["spec"] = spec
	if b.name != "" {
		xr["metadata"].(map[string]any)["name"] = b.name
	}
	req.Observed.Composite.Resource = mustStruct(t, xr)
	in := req.GetInput().AsMap()
	for k, v := range b.input {
		in[k] = v
	}
	req.Input = mustStruct(t, in)
	for k, o := range b.observed {
		if o == nil {
			delete(req.Observed.Resources, k)
			continue
		}
		req.Observed.Resources[k] = &fnv1.Resource{Resource: mustStruct(t, o)}
	}
	pool := make([]*structpb.Struct, 0, len(sc.Pool))
	for _, o := range sc.Pool {
		pool = append(pool, proto.Clone(o).(*structpb.Struct))
	}
	if b.pool != nil {
		pool = b.pool(pool)
	}
	return req, pool
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// outcome is what a catalogue row asserts: the exact fatal message, or the
// exact condition of the named type.
func outcome(rsp *fnv1.RunFunctionResponse, conditionType string) string {
	if m := fatalMessage(rsp); m != "" {
		return "fatal: " + m
	}
	for _, c := range rsp.GetConditions() {
		if c.GetType() == conditionType {
			return fmt.Sprintf("condition %s=%s %s: %s", c.GetType(), strings.TrimPrefix(c.GetStatus().String(), "STATUS_CONDITION_"), c.GetReason(), c.GetMessage())
		}
	}
	return "no fatal and no " + conditionType + " condition"
}

// TestBadInputCatalogue feeds every mode malformed input: missing fields,
// wrong types, oversized strings, unicode look-alikes, shell and YAML
// metacharacters in every field that reaches a name, URL or bootstrap
// config, negative and absurd quantities, duplicates, unknown keys and
// malformed observed and required objects. Each row asserts the exact
// message or condition, that nothing malformed reaches a composed resource,
// and that nothing observed is dropped.
func TestBadInputCatalogue(t *testing.T) {
	scenarios := map[string]exampleScenario{}
	for _, sc := range loadExampleScenarios(t) {
		scenarios[sc.Name] = sc
	}
	cases := badInputCatalogue()
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	update := os.Getenv("CATALOGUE_PRINT") == "1"
	for _, name := range names {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			if tc.knownBug != "" && !update {
				t.Skip(tc.knownBug)
			}
			req, pool := tc.args.request(t, scenarios)
			final, rsp := settleRequest(t, newTestFunction(), req, pool)
			got := outcome(rsp, tc.condition)
			if !utf8.ValidString(got) {
				t.Errorf("%s\nthe outcome is not valid UTF-8, which gRPC cannot carry: %q", tc.reason, got)
			}
			if _, err := proto.Marshal(rsp); err != nil {
				t.Errorf("%s\nthe response does not marshal, so Crossplane would see a gRPC error: %v", tc.reason, err)
			}
			if update {
				fmt.Printf("%s\t%q\n", name, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if bad := malformedOutput(final, rsp); len(bad) > 0 {
				t.Errorf("%s\nmalformed composed resources: %q", tc.reason, bad)
			}
			if lost := droppedOutput(final, rsp); len(lost) > 0 {
				t.Errorf("%s\nobserved composed resources dropped: %q", tc.reason, lost)
			}
		})
	}
}

type catalogueRow struct {
	reason    string
	args      badInput
	condition string // the condition type asserted when the outcome is not fatal
	want      string
	// knownBug marks a row that fails because of a reported bug in a package
	// the reliability work does not own; the row is skipped with this text
	// until the owner fixes it and fills in want.
	knownBug string
}

const (
	sidReal   = "ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515"
	catBase   = "catalog/golden-succeeded"
	poolBase  = "nodepool/old-template-kept-while-machineset-references-it"
	cloneBase = "nodepool/builtin-golden-succeeded"
	tcBase    = "tenantcluster/pools-observed"
	condGold  = "GoldenImagesReady"
	condPool  = "WorkerImageReady"
)

// entry is one catalog image entry.
func entry(sid, version string, extra ...string) map[string]any {
	e := map[string]any{"schematicID": sid, "version": version}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i]] = extra[i+1]
	}
	return e
}

func images(es ...map[string]any) map[string]any {
	l := make([]any, 0, len(es))
	for _, e := range es {
		l = append(l, e)
	}
	return map[string]any{"images": l}
}

// dropAnnotations removes the annotations of every object of kind in pool.
func dropAnnotations(kind string) func([]*structpb.Struct) []*structpb.Struct {
	return func(pool []*structpb.Struct) []*structpb.Struct {
		for _, o := range pool {
			if field(o, "kind") == kind {
				delete(o.GetFields()["metadata"].GetStructValue().GetFields(), "annotations")
			}
		}
		return pool
	}
}

// dropStatus removes the status of every object of kind in pool.
func dropStatus(kind string) func([]*structpb.Struct) []*structpb.Struct {
	return func(pool []*structpb.Struct) []*structpb.Struct {
		for _, o := range pool {
			if field(o, "kind") == kind {
				delete(o.GetFields(), "status")
			}
		}
		return pool
	}
}

func badInputCatalogue() map[string]catalogueRow {
	long := strings.Repeat("a", 300)
	return map[string]catalogueRow{
		// Catalog mode.
		"CatalogEntryWithoutSchematic":   {reason: "A missing schematicID is named with its entry.", args: badInput{base: catBase, spec: images(map[string]any{"version": "v1.13.6"})}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Required value: set an Image Factory schematic ID (64 lowercase hex characters)`},
		"CatalogSchematicOfWrongType":    {reason: "A number where a string belongs is refused, not coerced.", args: badInput{base: catBase, spec: images(map[string]any{"schematicID": 42, "version": "v1.13.6"})}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: 42: is a number, but must be a string; fix the field's type in the composite`},
		"CatalogOversizedSchematic":      {reason: "An oversized schematic would overflow the golden name.", args: badInput{base: catBase, spec: images(entry(long, "v1.13.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...": is 300 bytes, more than 64; an Image Factory schematic ID is 64 lowercase hex characters`},
		"CatalogCyrillicLookalike":       {reason: "A Cyrillic look-alike must not pass for the real schematic.", args: badInput{base: catBase, spec: images(entry(strings.Replace(sidReal, "ce", "се", 1), "v1.13.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: "се4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c75...": is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"CatalogSchematicWithNewline":    {reason: "A newline would split a manifest.", args: badInput{base: catBase, spec: images(entry("abc\ndef", "v1.13.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: "abc\ndef": is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"CatalogSchematicWithDollar":     {reason: "Shell expansion syntax never reaches a URL.", args: badInput{base: catBase, spec: images(entry("abc$(id)", "v1.13.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: "abc$(id)": is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"CatalogSchematicWithBacktick":   {reason: "A backtick never reaches a URL.", args: badInput{base: catBase, spec: images(entry("abc`id`", "v1.13.6"))}, condition: condGold, want: "fatal: XWorkerImageCatalog \"default\": spec.images[0].schematicID: Invalid value: \"abc`id`\": is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns"},
		"CatalogVersionWithQuote":        {reason: "A quote would break out of a YAML scalar.", args: badInput{base: catBase, spec: images(entry(sidReal, `v1.13.6"`))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].version: Invalid value: "v1.13.6\"": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"CatalogVersionWithYAMLMeta":     {reason: "YAML flow syntax in a version is refused.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6: {a: b}"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].version: Invalid value: "v1.13.6: {a: b}": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"CatalogURLWithBacktick":         {reason: "A factory URL with a backtick is refused.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6", "imageFactoryURL", "https://f.example/`id`"))}, condition: condGold, want: "fatal: XWorkerImageCatalog \"default\": spec.images[0].imageFactoryURL: Invalid value: \"https://f.example/`id`\": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)"},
		"CatalogURLWithJavascriptScheme": {reason: "Only http(s) is an image source.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6", "imageFactoryURL", "javascript:alert(1)"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].imageFactoryURL: Invalid value: "javascript:alert(1)": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"CatalogURLWithNewline":          {reason: "A header-injection newline in a URL is refused.", args: badInput{base: catBase, spec: map[string]any{"imageFactoryURL": "https://factory.talos.dev\nHost: evil"}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.imageFactoryURL: Invalid value: "https://factory.talos.dev\nHost: evil": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"CatalogNegativeStorage":         {reason: "A negative size is refused.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6", "storage", "-6Gi"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].storage: Invalid value: "-6Gi": is not a positive quantity such as 6Gi`},
		"CatalogAbsurdStorage":           {reason: "A size beyond what apimachinery can render would be written as another size.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6", "storage", "1000000000000000000000"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].storage: Invalid value: "1000000000000000000000": is larger than 1Ti, the largest golden accepted (a golden holds one Talos disk image, about 1.2 GiB); sizes this large do not survive the API server's quantity canonicalisation, so write a size such as 6Gi`},
		"CatalogStorageNotAQuantity":     {reason: "Prose is not a size.", args: badInput{base: catBase, spec: map[string]any{"storage": "six gigs"}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.storage: Invalid value: "six gigs": is not a positive quantity such as 6Gi`},
		"CatalogUppercaseStorageClass":   {reason: "A class name is a DNS subdomain.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6", "storageClass", "Replicated"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].storageClass: Invalid value: "Replicated": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default`},
		"CatalogStorageClassWithQuote":   {reason: "A quote in a class name is refused.", args: badInput{base: catBase, spec: map[string]any{"storageClass": `repl"icated`}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.storageClass: Invalid value: "repl\"icated": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default`},
		"CatalogDuplicateEntries":        {reason: "Two entries for one golden would silently replace each other.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.13.6"), entry(sidReal, "v1.13.6", "storage", "8Gi"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[1]: Invalid value: resolves to the same golden DataVolume "talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6" as spec.images[0]: one entry per (schematicID, version) keeps every golden of that image, and a second would silently replace the first: drop the duplicate, listing its classes in the first's storageClasses and its architectures in its architectures`},
		"CatalogInvalidGoldenNamespace":  {reason: "The golden namespace is a DNS label.", args: badInput{base: catBase, spec: map[string]any{"goldenNamespace": "cozy_public"}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.goldenNamespace: Invalid value: "cozy_public": is not a namespace name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); set it to an existing namespace such as cozy-public`},
		"CatalogImagesOfWrongType":       {reason: "images must be a list.", args: badInput{base: catBase, spec: map[string]any{"images": "all"}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images: Invalid value: "all": is a string, but must be an array; fix the field's type in the composite`},
		"CatalogObservedGoldenWithoutStatus": {reason: "A golden observed without status is importing, not gone, and stays composed.", args: badInput{base: catBase, observed: map[string]map[string]any{
			"golden-talos-worker-" + sidReal + "-v1.13.6": {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "talos-worker-" + sidReal + "-v1.13.6", "namespace": "cozy-public"},
				"spec": map[string]any{"contentType": "kubevirt", "source": map[string]any{"http": map[string]any{"url": "https://factory.talos.dev/image/" + sidReal + "/v1.13.6/openstack-amd64.raw.xz"}}, "storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "6Gi"}}, "storageClassName": "replicated"}}}}}, condition: condGold, want: `condition GoldenImagesReady=FALSE Importing: 1 of 2 golden images are Succeeded; waiting for cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 (phase Pending). Pools that clone them wait until they are.`},
		"CatalogObservedGoldenOfWrongKind": {reason: "An observed golden that is not a DataVolume is kept as it is, never deleted; the example's goldens, which left the catalog here, are kept for their in-use label.", args: badInput{base: catBase, spec: images(), observed: map[string]map[string]any{
			"golden-talos-worker-x-v1.0.0": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "talos-worker-x-v1.0.0", "namespace": "cozy-public"}}}}, condition: "GoldenImagesRetiring", want: `condition GoldenImagesRetiring=TRUE PinnedByTemplates: Kept although no longer in the catalog, because templates still clone them: cozy-public/talos-worker-376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba-v1.12.4 (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden=aadced7bf4fb98a5 lists them); cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 (in use: the Usages of the templates that clone it protect it; kubectl get usages.protection.crossplane.io -A -l workerimage.cozystack.io/golden=7bcb1fa3c7cfb346 lists them); cozy-public/talos-worker-x-v1.0.0 (not a DataVolume the function can read, so it is never deleted by it; remove it by hand once nothing clones it). Each is deleted once no template pins it; move those pools to another image to retire it.`},
		"CatalogInputUnknownMode":       {reason: "An unknown Input mode is refused with the valid ones.", args: badInput{base: catBase, input: map[string]any{"mode": "Everything"}}, condition: condGold, want: `fatal: input: mode: Invalid value: "Everything": is not one of Catalog, TenantCluster or NodePool; omit it to infer the mode from the composite's kind`},
		"CatalogInputPlatformTraversal": {reason: "A path-traversal platform never reaches the image URL.", args: badInput{base: catBase, input: map[string]any{"image": map[string]any{"platform": "../../etc"}}}, condition: condGold, want: `fatal: input: image.platform: Invalid value: "../../etc": is not a plain lowercase identifier such as openstack or amd64; it is part of the image URL`},

		// Every class of bad input, in every mode (issue 13): UTF-8-safe
		// quoting, versions with leading zeros, the one URL grammar, names
		// the composed objects carry, and the Input's own rows and durations.
		"CatalogLongMultibyteSchematic":     {reason: "A quoted value is cut on a rune boundary: the message stays valid UTF-8.", args: badInput{base: catBase, spec: images(entry(strings.Repeat("é", 100), "v1.13.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].schematicID: Invalid value: "éééééééééééééééééééééééééééééééé...": is not a plain lowercase alphanumeric identifier; it is interpolated into the golden DataVolume name and the image URL, so use the 64 lowercase hex characters the Image Factory returns`},
		"PoolLongMultibyteVersion":          {reason: "A quoted value is cut on a rune boundary in a pool too.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1." + strings.Repeat("ü", 80)}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.builtin.version: Invalid value: "v1.üüüüüüüüüüüüüüüüüüüüüüüüüüüüüü...": is 163 bytes, more than 64; use a Talos release such as v1.13.6`},
		"ClusterLongMultibyteVersion":       {reason: "And in a tenant cluster.", args: badInput{base: tcBase, spec: map[string]any{"talos": map[string]any{"version": strings.Repeat("日", 40)}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.talos.version: Invalid value: "日日日日日日日日日日日日日日日日日日日日日...": is 120 bytes, more than 64; use a Talos release such as v1.13.6`},
		"InputLongMultibyteVersion":         {reason: "And in the Input.", args: badInput{base: catBase, input: map[string]any{"talos": map[string]any{"version": strings.Repeat("ß", 90)}}}, condition: condGold, want: `fatal: input: talos.version: Invalid value: "ßßßßßßßßßßßßßßßßßßßßßßßßßßßßßßßß...": is 180 bytes, more than 64; use a Talos release such as v1.13.6`},
		"CatalogVersionWithLeadingZero":     {reason: "v1.013.6 must not slip past the support matrix as an unknown minor.", args: badInput{base: catBase, spec: images(entry(sidReal, "v1.013.6"))}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.images[0].version: Invalid value: "v1.013.6": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"PoolVersionWithLeadingZero":        {reason: "Nor in a pool's image.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.06"}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.builtin.version: Invalid value: "v1.13.06": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"PoolKubernetesRelease":             {reason: "A pool names a minor, as the XRD says.", args: badInput{base: poolBase, spec: map[string]any{"version": "v1.35.2"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.version: Invalid value: "v1.35.2": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"ClusterKubernetesLeadingZero":      {reason: "v1.035 is not a minor.", args: badInput{base: tcBase, spec: map[string]any{"version": "v1.035"}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.version: Invalid value: "v1.035": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"InputKubernetesLeadingZero":        {reason: "Nor in the Input.", args: badInput{base: tcBase, input: map[string]any{"talos": map[string]any{"kubernetesVersion": "v01.35"}}}, condition: "NodePoolsReady", want: `fatal: input: talos.kubernetesVersion: Invalid value: "v01.35": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"InputMatrixRowWithPatch":           {reason: "A row naming a patch would never match.", args: badInput{base: tcBase, input: map[string]any{"supportMatrix": map[string]any{"entries": []any{map[string]any{"talos": "v1.13.6", "minKubernetes": "v1.32", "maxKubernetes": "v1.35"}}}}}, condition: "NodePoolsReady", want: `fatal: input: supportMatrix.entries[0].talos: Invalid value: "v1.13.6": is not a Talos minor such as v1.13; a support-matrix row names a minor, without patch, suffix or leading zeros`},
		"InputMatrixRowMinAboveMax":         {reason: "A row whose min is above its max matches nothing.", args: badInput{base: poolBase, input: map[string]any{"supportMatrix": map[string]any{"entries": []any{map[string]any{"talos": "v1.13", "minKubernetes": "v1.35", "maxKubernetes": "v1.32"}}}}}, condition: condPool, want: `fatal: input: supportMatrix.entries[0].minKubernetes: Invalid value: "v1.35": is above maxKubernetes v1.32, so the row matches no Kubernetes minor; swap them`},
		"InputInProgressPollingTooShort":    {reason: "The message names polling.inProgress, the field that is wrong.", args: badInput{base: catBase, input: map[string]any{"polling": map[string]any{"inProgress": "100ms"}}}, condition: condGold, want: `fatal: input: polling.inProgress: Invalid value: "100ms": must be at least 1s; it is how long Crossplane waits before calling the function again`},
		"CatalogURLWithUserinfo":            {reason: "Credentials never ride in a URL that lands in a manifest, and the refusal never echoes them.", args: badInput{base: catBase, spec: map[string]any{"imageFactoryURL": "https://user:pw@factory.talos.dev"}}, condition: condGold, want: `fatal: XWorkerImageCatalog "default": spec.imageFactoryURL: Invalid value: "https://REDACTED@factory.talos.dev": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"PoolFactoryURLWithLineSeparator":   {reason: "U+2028 is a line break to YAML and JavaScript.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"factory": map[string]any{"imageFactoryURL": "https://f.example/\u2028x"}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.factory.imageFactoryURL: Invalid value: "https://f.example/\u2028x": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"PoolMirrorEndpointWithNEL":         {reason: "U+0085 is a YAML line break.", args: badInput{base: poolBase, spec: map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{"https://m.example/\u0085x"}}}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.talos.registryMirrors[docker.io].endpoints[0]: Invalid value: "https://m.example/\u0085x": is not a registry mirror endpoint such as https://mirror.example.com:5000: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment`},
		"ClusterFactoryURLWithBidiOverride": {reason: "A bidi control can make a URL read as another.", args: badInput{base: tcBase, spec: map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.talos.dev/\u202egpj"}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.talos.imageFactoryURL: Invalid value: "https://factory.talos.dev/\u202egpj": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"ClusterMirrorEndpointWithFragment": {reason: "The cluster refuses the endpoint its pools would refuse.", args: badInput{base: tcBase, spec: map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{"https://m.example#x"}}}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.talos.registryMirrors[docker.io].endpoints[0]: Invalid value: "https://m.example#x": is not a registry mirror endpoint such as https://mirror.example.com:5000: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment`},
		"InputFactoryURLWithQuery":          {reason: "The Input's URL is in the same grammar.", args: badInput{base: poolBase, input: map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.talos.dev?x=1"}}}, condition: condPool, want: `fatal: input: talos.imageFactoryURL: Invalid value: "https://factory.talos.dev?x=1": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"InputFactoryURLWithPortOutOfRange": {reason: "65536 is not a port.", args: badInput{base: catBase, input: map[string]any{"talos": map[string]any{"imageFactoryURL": "https://factory.talos.dev:65536"}}}, condition: condGold, want: `fatal: input: talos.imageFactoryURL: Invalid value: "https://factory.talos.dev:65536": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"ClusterNameWithDots":               {reason: "A dotted cluster name makes no MachineDeployment name; the cluster refuses it rather than compose XNodePools the pool would refuse.", args: badInput{base: tcBase, name: "acme.prod"}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme.prod": metadata.name: Invalid value: "acme.prod": cannot be part of the MachineDeployment name <cluster>-<pool> (also a label value), which is a DNS-1123 label (must not contain dots); use lowercase letters, digits and '-', starting and ending with a letter or digit`},
		"PoolNameUppercase":                 {reason: "The pool's name is part of its MachineDeployment's name.", args: badInput{base: poolBase, spec: map[string]any{"poolName": "MD0"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.poolName: Invalid value: "MD0": cannot be part of the MachineDeployment name <cluster>-<pool> (also a label value), which is a DNS-1123 label (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); use lowercase letters, digits and '-', starting and ending with a letter or digit`},
		"CatalogGoldenNamespaceChanged": {reason: "Moving spec.goldenNamespace while goldens exist would re-create every golden elsewhere; it is fatal, naming both namespaces and the fix.", args: badInput{base: catBase, spec: map[string]any{"goldenNamespace": "golden-images"}}, condition: condGold,
			want: "fatal: XWorkerImageCatalog \"default\": the golden namespace is \"golden-images\", from spec.goldenNamespace, but the catalog's golden DataVolumes live in \"cozy-public\" (talos-worker-376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba-v1.12.4, talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6). Composing them in \"golden-images\" would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. Set the golden namespace back to \"cozy-public\"; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace \"golden-images\" and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)"},
		"CatalogInputGoldenNamespaceChanged": {reason: "The Input's goldenNamespace moved under a catalog that sets none is the same change, and names the Input.", args: badInput{base: catBase, spec: map[string]any{"goldenNamespace": nil}, input: map[string]any{"goldenNamespace": "golden-images"}}, condition: condGold,
			want: "fatal: XWorkerImageCatalog \"default\": the golden namespace is \"golden-images\", from the function Input's goldenNamespace (spec.goldenNamespace is not set), but the catalog's golden DataVolumes live in \"cozy-public\" (talos-worker-376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba-v1.12.4, talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6). Composing them in \"golden-images\" would import every golden again there, move the clone RoleBinding away from the goldens pools clone from now, and leave the old goldens unmanaged, so nothing is changed. Set the golden namespace back to \"cozy-public\"; or, to move the goldens, create a second XWorkerImageCatalog with goldenNamespace \"golden-images\" and the same images, list that namespace in the pools' Input goldenNamespaces and move the pools onto it (their goldenNamespace), then remove this catalog's images so its goldens retire once no template pins them, and only then change this catalog's namespace (or delete it)"},
		"CatalogObservedGoldenInCatalogUnreadable": {reason: "A golden of the catalog that is not a DataVolume the function can read is kept as observed and reported, never re-created.", args: badInput{base: catBase, observed: map[string]map[string]any{
			"golden-talos-worker-" + sidReal + "-v1.13.6": {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": map[string]any{"name": "talos-worker-" + sidReal + "-v1.13.6", "namespace": "cozy-public"}, "spec": map[string]any{"storage": "6Gi"}}}}, condition: condGold,
			want: "condition GoldenImagesReady=FALSE GoldenUnreadable: golden DataVolume cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6 cannot be read (cannot read DataVolume \"cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6\": cannot restore struct from: string), so it is kept exactly as it is, neither checked for drift nor re-created: fix it, or delete it so the catalog re-creates it."},

		// Node-pool mode.
		"PoolUnknownOSImageKey":                {reason: "An unknown osImage key is refused, not ignored.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"docker": map[string]any{}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.docker: Unsupported value: "docker": supported values: "builtin", "factory"`},
		"PoolBuiltinAndFactory":                {reason: "builtin and factory together are ambiguous.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"builtin": map[string]any{}, "factory": map[string]any{}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage: Invalid value: sets both builtin and factory; set only one: builtin clones the golden image of the catalog, factory imports over HTTP from the Image Factory`},
		"PoolBuiltinVersionWithNewline":        {reason: "A newline in a version never reaches the bootstrap config.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"builtin": map[string]any{"version": "v1.13.6\nmachine: {}"}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.builtin.version: Invalid value: "v1.13.6\nmachine: {}": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else`},
		"PoolFactoryURLWithDollar":             {reason: "Shell syntax in a factory URL is refused.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"factory": map[string]any{"imageFactoryURL": "https://f.example/${HOME}"}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.factory.imageFactoryURL: Invalid value: "https://f.example/${HOME}": is not an Image Factory base URL such as https://factory.talos.dev: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment (the image path is appended to it)`},
		"PoolFactoryUppercaseSchematic":        {reason: "An uppercase schematic is not a factory schematic.", args: badInput{base: poolBase, spec: map[string]any{"osImage": map[string]any{"factory": map[string]any{"schematicID": strings.ToUpper(sidReal)}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.osImage.factory.schematicID: Invalid value: "CE4C980550DD2AB1B17BBF2B08801C7EB59418EAFE8F279833297925D67C7515": is neither a schematic ID nor a schematic path: write the 64 lowercase hex characters the Image Factory returns, or '/'-separated lowercase segments of letters and digits (joined inside a segment by '.', '_' or '-') such as gpu/nvidia-open, as the disk URL and the installer image reference <installerRepository>/<schematic>:<version> both carry it`},
		"PoolNegativeReplicas":                 {reason: "Negative replicas are refused.", args: badInput{base: poolBase, spec: map[string]any{"replicas": -1}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.replicas: Invalid value: -1: is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`},
		"PoolAbsurdReplicas":                   {reason: "An absurd replica count is refused.", args: badInput{base: poolBase, spec: map[string]any{"replicas": 1e12}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.replicas: Invalid value: 1000000000000: is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`},
		"PoolReplicasWrappingInt32":            {reason: "2^32+1 replicas must be refused, not wrapped to 1.", args: badInput{base: poolBase, spec: map[string]any{"replicas": 4294967297}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.replicas: Invalid value: 4294967297: is not a whole number from 0 to 1000; set how many workers the pool runs, at most 1000 per pool (split a larger fleet into several pools)`},
		"PoolReplicasOfWrongType":              {reason: "A string where a count belongs is refused.", args: badInput{base: poolBase, spec: map[string]any{"replicas": "three"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.replicas: Invalid value: "three": is a string, but must be an integer; fix the field's type in the composite`},
		"PoolNegativeDiskSize":                 {reason: "A negative disk size is refused.", args: badInput{base: poolBase, spec: map[string]any{"diskSize": "-20Gi"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.diskSize: Invalid value: "-20Gi": is not a positive quantity such as 20Gi`},
		"PoolAbsurdDiskSize":                   {reason: "A size beyond what apimachinery can render is refused.", args: badInput{base: poolBase, spec: map[string]any{"diskSize": "1000000000000000000000"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.diskSize: Invalid value: "1000000000000000000000": is larger than 1Pi, the largest worker disk accepted; sizes this large do not survive the API server's quantity canonicalisation, so write a size such as 20Gi`},
		"PoolStorageClassWithYAMLMeta":         {reason: "YAML syntax in a class name is refused.", args: badInput{base: poolBase, spec: map[string]any{"storageClass": "fast: {x: y}"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.storageClass: Invalid value: "fast: {x: y}": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default`},
		"PoolWithoutClusterName":               {reason: "A pool must name its cluster.", args: badInput{base: poolBase, spec: map[string]any{"clusterName": nil}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.clusterName: Required value: set it to the Cluster API cluster this pool joins`},
		"PoolOversizedClusterName":             {reason: "A cluster name that would overflow the MachineDeployment name is refused.", args: badInput{base: poolBase, spec: map[string]any{"clusterName": long[:70]}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.clusterName: Invalid value: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...": is 70 characters and, with metadata.name "demo-md0" (8 characters), makes the MachineDeployment name <cluster>-<pool> (also a label value) 79 characters long, more than the 63 a DNS-1123 label holds; shorten spec.clusterName to at most 54 characters`},
		"PoolVersionNotAMinor":                 {reason: "latest is not a Kubernetes minor.", args: badInput{base: poolBase, spec: map[string]any{"version": "latest"}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.version: Invalid value: "latest": is not a Kubernetes minor such as v1.35; write vMAJOR.MINOR without leading zeros, Talos picks the patch`},
		"PoolInstallerRepositoryWithScheme":    {reason: "An installer repository is a registry path, not a URL.", args: badInput{base: poolBase, spec: map[string]any{"talos": map[string]any{"installerRepository": "https://factory.talos.dev/installer"}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.talos.installerRepository: Invalid value: "https://factory.talos.dev/installer": is not a lowercase registry repository such as factory.talos.dev/openstack-installer; it becomes the worker's installer image`},
		"PoolRegistryMirrorWithNewline":        {reason: "A mirror endpoint never injects YAML into the bootstrap config.", args: badInput{base: poolBase, spec: map[string]any{"talos": map[string]any{"registryMirrors": map[string]any{"docker.io": map[string]any{"endpoints": []any{"https://m.example\n  evil: true"}}}}}}, condition: condPool, want: `fatal: XNodePool "tenant-demo/demo-md0": spec.talos.registryMirrors[docker.io].endpoints[0]: Invalid value: "https://m.example\n  evil: true": is not a registry mirror endpoint such as https://mirror.example.com:5000: http(s), a DNS name or IP address, an optional port and path, no user, query or fragment`},
		"PoolStorageClassesWithoutAnnotations": {reason: "With no class marked default, an undeclared pool class cannot be resolved and CDI could not build the worker disks (ErrClaimNotValid); the gate says so and keeps what exists.", args: badInput{base: cloneBase, spec: map[string]any{"storageClass": nil}, pool: dropAnnotations("StorageClass")}, condition: condPool, want: `condition WorkerImageReady=FALSE CloneWouldFail: Node pool "tenant-demo/demo-md0": CDI would refuse every worker disk cloned from golden image "cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6" on StorageClass "<none>" (ErrClaimNotValid: PVC spec is missing accessMode and no storageClass to choose profile), so the new worker template is held back. To fix it, name an existing StorageClass, or mark one as default with storageclass.kubernetes.io/is-default-class or storageclass.kubevirt.io/is-default-virt-class (CDI ignores the beta annotation).`},
		"PoolGoldenWithoutStatus":              {reason: "A golden DataVolume without status is not Succeeded: the new template waits.", args: badInput{base: cloneBase, pool: dropStatus("DataVolume")}, condition: condPool, want: `condition WorkerImageReady=FALSE GoldenImporting: Node pool "tenant-demo/demo-md0" clones golden image "cozy-public/talos-worker-ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515-v1.13.6", which is still importing (phase <none>); the new worker template is held back until the golden is Succeeded and the pool's existing resources are kept as they are. No action is needed; if the import never finishes, check the importer pod in namespace cozy-public.`},

		// Tenant-cluster mode.
		"ClusterUppercasePoolName":        {reason: "A pool name becomes part of object names.", args: badInput{base: tcBase, spec: map[string]any{"nodePools": map[string]any{"GPU": map[string]any{"replicas": 1}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.nodePools[GPU]: Invalid value: "GPU": is not a pool name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names`},
		"ClusterOversizedPoolName":        {reason: "An oversized pool name would overflow the XNodePool name.", args: badInput{base: tcBase, spec: map[string]any{"nodePools": map[string]any{long[:64]: map[string]any{"replicas": 1}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.nodePools[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]: Invalid value: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": is not a pool name (must be no more than 63 characters); rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names`},
		"ClusterPoolNameWithDollar":       {reason: "Shell syntax in a pool name is refused.", args: badInput{base: tcBase, spec: map[string]any{"nodePools": map[string]any{"md$(id)": map[string]any{"replicas": 1}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.nodePools[md$(id)]: Invalid value: "md$(id)": is not a pool name (a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')); rename the pool: lowercase letters, digits and '-', starting and ending with a letter or digit, as its name becomes part of the XNodePool and MachineDeployment names`},
		"ClusterNodePoolsOfWrongType":     {reason: "nodePools is a map of pool name to spec.", args: badInput{base: tcBase, spec: map[string]any{"nodePools": []any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.nodePools: Invalid value: is an array, but must be an object; fix the field's type in the composite`},
		"ClusterWithoutVersion":           {reason: "Without spec.version (an XRD without a default) the pools take the Input's Kubernetes version; internal/tenantcluster asserts the composed XNodePools carry it.", args: badInput{base: tcBase, spec: map[string]any{"version": nil}}, condition: "NodePoolsReady", want: `condition NodePoolsReady=FALSE PoolsNotReady: 1 of 3 node pools are not ready: gpu (1/2 workers ready).`},
		"ClusterTalosVersionWithBacktick": {reason: "A backtick in the Talos version is refused.", args: badInput{base: tcBase, spec: map[string]any{"talos": map[string]any{"version": "v1.13.6`id`"}}}, condition: "NodePoolsReady", want: "fatal: XTenantCluster \"tenant-acme/acme\": spec.talos.version: Invalid value: \"v1.13.6`id`\": is not a vMAJOR.MINOR.PATCH Talos release (e.g. v1.13.6 or v1.14.0-alpha.0, no leading zeros); the Image Factory publishes no artifact for anything else"},
		"ClusterInvalidStorageClass":      {reason: "An invalid default class is refused.", args: badInput{base: tcBase, spec: map[string]any{"storageClass": "UPPER case"}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.storageClass: Invalid value: "UPPER case": is not a StorageClass name (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')); name an existing StorageClass, or leave it empty for the cluster default`},
		"ClusterPoolUnknownOSImageKey":    {reason: "An unknown osImage key in a pool is refused.", args: badInput{base: tcBase, spec: map[string]any{"nodePools": map[string]any{"workers": map[string]any{"osImage": map[string]any{"iso": map[string]any{}}}}}}, condition: "NodePoolsReady", want: `fatal: XTenantCluster "tenant-acme/acme": spec.nodePools[workers].osImage.iso: Unsupported value: "iso": supported values: "builtin", "factory"`},
		"ClusterObservedPoolOfWrongKind": {reason: "An object under a pool's name that is not an XNodePool is reported, and the pool is composed from the spec.", args: badInput{base: tcBase, observed: map[string]map[string]any{
			"nodepool-gpu": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "acme-gpu", "namespace": "tenant-acme"}}}}, condition: "NodePoolsReady",
			want: "condition NodePoolsReady=FALSE PoolsNotReady: 1 of 3 node pools are not ready: gpu (its XNodePool cannot be read (it is a v1 ConfigMap, not the workerimage.cozystack.io/v1alpha1 XNodePool this function composes there))."},
		"PoolObservedMachineDeploymentUnreadable": {reason: "A MachineDeployment of the wrong shape is reported; no template is retired while it cannot be read.", args: badInput{base: poolBase, observed: map[string]map[string]any{
			"machinedeployment": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment", "metadata": map[string]any{"name": "demo-md0", "namespace": "tenant-demo"}, "spec": map[string]any{"replicas": "two"}}}}, condition: "ObservedStateReadable",
			want: "condition ObservedStateReadable=FALSE UnreadableObject: Node pool \"tenant-demo/demo-md0\" ignores objects it cannot read: composed resource machinedeployment (MachineDeployment tenant-demo/demo-md0): cannot read MachineDeployment \"tenant-demo/demo-md0\": unrecognized type: int32. None of them is deleted by this function: a composed one is kept as observed, unless the spec alone decides it. Check them with kubectl."},
		"ClusterObservedPoolWithoutStatus": {reason: "An observed XNodePool without status is kept and reported not ready.", args: badInput{base: tcBase, observed: map[string]map[string]any{
			"nodepool-gpu": {"apiVersion": "workerimage.cozystack.io/v1alpha1", "kind": "XNodePool", "metadata": map[string]any{"name": "acme-gpu", "namespace": "tenant-acme"}}}}, condition: "NodePoolsReady", want: `condition NodePoolsReady=FALSE PoolsNotReady: 1 of 3 node pools are not ready: gpu (Ready is Unknown).`},
	}
}
