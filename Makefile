# function-worker-image. The two commands that matter:
#   make render   render the shipped catalog example against the local function
#   make test     every test CI runs
SHELL := /usr/bin/env bash
GO ?= go
EXAMPLE ?= example/catalog
SCENARIO ?=
FUZZTIME ?= 10s
# One set of build flags for all that make builds and tests. The tools and the
# e2e control-plane binaries are built with CGO_ENABLED=0 -trimpath
# (hack/cached-tool.sh, test/e2e/hack/build-binaries.sh); tests built the same
# way reuse their compiled packages from the build cache (the e2e suite shares
# 360 of its 366 dependency packages with Crossplane core and kube-apiserver),
# and the standard library is compiled once. Nothing here needs cgo.
export CGO_ENABLED := 0
# The Go compiler spends a fifth of its CPU in garbage collection at the
# default GOGC=100: building k8s.io/client-go/kubernetes from a cold cache took
# 314 s of CPU at 100 and 253 s at 400 (/usr/bin/time, this 2-core machine).
# Tests and the e2e control plane inherit it too, trading memory (24 GiB here)
# for CPU.
export GOGC ?= 400
export GOFLAGS := -trimpath $(GOFLAGS)

.PHONY: all
all: test

## run: serve the function locally without TLS on :9443 (for crossplane render).
.PHONY: run
run:
	$(GO) run . --insecure --debug

## render: render $(EXAMPLE) (optionally SCENARIO=<name>) with crossplane render (CLI v2.5.0 through a local Crossplane core v2.4.2, no Docker).
.PHONY: render
render:
	hack/render-example.sh $(EXAMPLE) $(SCENARIO)

## crossplane: build (once per version) and print the pinned crossplane CLI.
.PHONY: crossplane
crossplane:
	@hack/crossplane-cli.sh

## generate: regenerate the XRDs from apis/v1alpha1 (hack/genxrd), the Input deepcopy and CRD,
## then what test/schema derives from the XRDs (the legacy variant, the docs/platform.md reference).
.PHONY: generate
generate:
	$(GO) generate ./...
	cd test/schema && $(GO) test -count=1 -run '^(TestLegacyVariantIsUpToDate|TestPlatformDocIsUpToDate)$$' . -update

# GENERATED is where make generate writes.
GENERATED := input package/input package/configuration docs/platform.md

## check-generate: fail when make generate would change the tree (a changed or a new, untracked
## file anywhere) or go mod tidy would change any module's go.mod or go.sum (hack/check-tidy.sh).
## Work in progress is fine: the tree is compared before and after generating.
.PHONY: check-generate
check-generate:
	@before=$$(hack/tree-state.sh) && \
	$(MAKE) --no-print-directory generate && \
	after=$$(hack/tree-state.sh) && \
	{ [ "$$before" = "$$after" ] || { git status --short; echo "make generate changed the tree (see above): run make generate and commit"; exit 1; }; } && \
	untracked=$$(git ls-files --others --exclude-standard -- $(GENERATED)) && \
	{ [ -z "$$untracked" ] || { echo "generated but not tracked: $$untracked (git add them)"; exit 1; }; }
	hack/check-tidy.sh

## check-tree: fail when git tracks a compiled binary or a file over 1 MiB (hack/check-tree.sh).
.PHONY: check-tree
check-tree:
	hack/check-tree.sh

## vet: gofmt and go vet.
.PHONY: vet
vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$unformatted" ] || { echo "gofmt needed: $$unformatted"; exit 1; }
	$(GO) vet ./...

## lint: golangci-lint (pinned in hack/tools/golangci-lint, built once per version) on the function module.
.PHONY: lint
lint:
	hack/golangci-lint.sh ./...

## unit: unit, golden-file and render tests of the function module.
.PHONY: unit
unit:
	$(GO) test -count=1 -timeout 60m ./...

## quick: the loop to run after each edit: make vet, the unit and golden-file tests with -short from the
## test cache (only what an edit touched runs again), then the render tests (test/render, never cached: the
## function they build is not in their cache key). No e2e, fuzzing or lint.
.PHONY: quick
quick: vet
	$(GO) test -short -timeout 60m ./...
	$(GO) test -count=1 -timeout 60m ./test/render

## fuzz: run every fuzz target of the function module for FUZZTIME each (seed corpora in testdata/fuzz/<FuzzName>/; a crasher is written there, commit it as a regression).
.PHONY: fuzz
fuzz:
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

## test: everything CI runs: the e2e suite at normal priority and, beside it at nice 19, the
## checks (hack/test.sh; TEST_LANES=serial runs them one after the other).
.PHONY: test
test:
	@hack/test.sh

## checks: everything make test runs but the e2e suite, one after the other.
.PHONY: checks
checks: check-tree vet lint check-generate test-schema test-talos test-packages unit fuzz

## e2e-binaries: build (once per version, cached under ~/.cache/function-worker-image/bin) the etcd, kube-apiserver, kube-controller-manager, Crossplane core, CDI (with its importer: apt-installs libnbd-dev, qemu-utils and iproute2 when missing), Cluster API core manager, its providers and the CSI snapshot controller the e2e suite runs.
.PHONY: e2e-binaries
e2e-binaries:
	test/e2e/hack/build-binaries.sh

## e2e: end-to-end suite (test/e2e, its own module) against a real kube-apiserver, Crossplane core (v2.4.2, or CROSSPLANE_VERSION=v2.2.0|v2.3.4), CDI v1.65.0 and Cluster API v1.11.4 on 127.0.0.1; no Docker. Builds the control plane on its first run.
.PHONY: e2e
e2e:
	@unformatted=$$(cd test/e2e && gofmt -l .); [ -z "$$unformatted" ] || { echo "gofmt needed in test/e2e: $$unformatted"; exit 1; }
	@# The control plane's build (cold: ~26 min of both cores) starts at once, beside the vet and
	@# the compile of the suite, which share most of its packages; the suite's own call of the
	@# script waits for this one (a lock) and finds every binary cached, or builds and reports.
	@test/e2e/hack/build-binaries.sh > /dev/null 2> >(sed -u 's/^/[e2e binaries] /' >&2) &
	cd test/e2e && $(GO) vet ./... && $(GO) test -count=1 -timeout 75m -v ./...

# The scenarios whose course depends on how Crossplane core delivers required
# resources: v2.4 seeds a reconcile's first call with what the step required
# last time and watches the required objects, v2.2 and v2.3 do neither (a
# reconcile asks again, and a change waits for the poll). Each waits on an
# object the function only reads: the clone grant, a golden's import, a
# StorageClass, the pins, the Join facts, the MachineSets, the chained
# adoption requirements.
E2E_OLDEST_CROSSPLANE := v2.2.0
E2E_VERSION_SCENARIOS := ^(TestFirstPoolOfANamespaceWaitsForTheCloneGrant|TestBuiltinPoolWaitsWhileGoldenImports|TestClassWithoutVolumeExpansionHoldsTheNewPool|TestCatalogKeepsPinnedGoldenUntilThePoolMovesAway|TestJoinPoolBootsOnRealCABPT|TestHTTPPoolSwitchesToBuiltinKeepingTheOldTemplateWhileReferenced|TestAChartMadePoolIsAdoptedWithoutARoll)$$

## e2e-oldest: the e2e scenarios that differ by Crossplane version ($(E2E_VERSION_SCENARIOS)) on the oldest supported core, $(E2E_OLDEST_CROSSPLANE); make test runs it after make e2e.
.PHONY: e2e-oldest
e2e-oldest:
	CROSSPLANE_VERSION=$(E2E_OLDEST_CROSSPLANE) test/e2e/hack/build-binaries.sh > /dev/null
	cd test/e2e && CROSSPLANE_VERSION=$(E2E_OLDEST_CROSSPLANE) $(GO) test -count=1 -timeout 45m -v -run '$(E2E_VERSION_SCENARIOS)' ./...

## e2e-measure: measure reconcile rates and Crossplane's memory on the e2e control plane (TestMeasureReconcileRates;
## E2E_MEASURE_WORKERS=50, E2E_MEASURE_WINDOW=10m, E2E_MEASURE_STEADY=1m the Input's polling.steady, CROSSPLANE_VERSION as for make e2e). Not part of make test: it
## rolls 50 workers and waits out the window. Prints MEASURE lines; docs/performance.md records them.
E2E_MEASURE_WORKERS ?= 50
E2E_MEASURE_WINDOW ?= 10m
E2E_MEASURE_STEADY ?= 1m
## e2e-measure-budget: opt-in; a pool scaled 0 -> 30 on the real CDI and Cluster API with a clone budget of 5 and unbounded, 5 s CSI clones: clones in flight over time and the time to all Succeeded (docs/performance.md, "Clones in flight").
.PHONY: e2e-measure-budget
e2e-measure-budget:
	test/e2e/hack/build-binaries.sh > /dev/null
	@mkdir -p _output
	set -o pipefail; cd test/e2e && E2E_MEASURE_BUDGET=1 $(GO) test -count=1 -timeout 60m -v -run '^TestMeasureCloneBudget$$' . 2>&1 | tee $(CURDIR)/_output/e2e-measure-budget.log

.PHONY: e2e-measure
e2e-measure:
	test/e2e/hack/build-binaries.sh > /dev/null
	@mkdir -p _output
	set -o pipefail; cd test/e2e && E2E_MEASURE=1 E2E_MEASURE_WORKERS=$(E2E_MEASURE_WORKERS) E2E_MEASURE_WINDOW=$(E2E_MEASURE_WINDOW) E2E_MEASURE_STEADY=$(E2E_MEASURE_STEADY) $(GO) test -count=1 -timeout 150m -v -run '^TestMeasureReconcileRates$$' . 2>&1 | tee $(CURDIR)/_output/e2e-measure.log
	@grep -h 'MEASURE ' _output/e2e-measure.log

## e2e-load: opt-in; the control plane under load (TestMeasureControlPlaneLoad): E2E_LOAD_POOLS=200 pools of 0-1 worker in
## E2E_LOAD_TENANTS=20 namespaces, two function replicas behind one name (a line in /etc/hosts: needs root), then
## E2E_LOAD_ROLL=50 rolled and E2E_LOAD_DELETE=50 deleted, then that many created alone and beside E2E_LOAD_HOSTILE=10
## tenants rewriting invalid pools, each as its own user (E2E_LOAD_HOSTILE_AS=admin: as the suite's admin, exempt from
## API Priority and Fairness; E2E_LOAD_TENANT_SHARES=N: in a priority level of N shares of their own, not global-default);
## E2E_LOAD_RUNS=3 runs. Prints LOAD lines; docs/performance.md records them.
.PHONY: e2e-load
e2e-load:
	test/e2e/hack/build-binaries.sh > /dev/null
	@mkdir -p _output
	set -o pipefail; cd test/e2e && E2E_LOAD=1 $(GO) test -count=1 -timeout 300m -v -run '^TestMeasureControlPlaneLoad$$' . 2>&1 | tee $(CURDIR)/_output/e2e-load.log
	@grep -h 'LOAD ' _output/e2e-load.log

## e2e-chaos: opt-in; every chaos scenario (test/e2e/scenario_chaos_test.go: a pool roll, a 0 -> 30 scale-up under a clone
## budget of 5, a catalog deletion while a pool pins a golden, a pool deletion waiting on its Machines, a chart pool's
## adoption, a mirror switch on the catalog) with a restart of
## every component (the function, Crossplane core, kube-apiserver, CDI's controller, Cluster API's manager) at the step's
## named point, E2E_CHAOS_COUNT=3 times in a row. make e2e runs one restart per component. Prints CHAOS lines;
## docs/reliability.md records them.
E2E_CHAOS_COUNT ?= 3
.PHONY: e2e-chaos
e2e-chaos:
	test/e2e/hack/build-binaries.sh > /dev/null
	@mkdir -p _output
	@set -o pipefail; (cd test/e2e && E2E_CHAOS=all $(GO) test -count=$(E2E_CHAOS_COUNT) -timeout 300m -v -run '^TestChaos$$' . 2>&1) | tee _output/e2e-chaos.log; \
	rc=$$?; grep -h 'CHAOS ' _output/e2e-chaos.log; [ $$rc = 0 ] || hack/test-failures.sh _output/e2e-chaos.log; exit $$rc

## packages: build the Function package (runtime image embedded, no Docker), the Configuration and its legacy variant into _output/.
.PHONY: packages
packages:
	hack/build-packages.sh

## test-packages: build the packages, then read them back and check their contents (runtime image, package.yaml objects).
.PHONY: test-packages
test-packages: packages
	@unformatted=$$(cd hack/tools/xpkg && gofmt -l .); [ -z "$$unformatted" ] || { echo "gofmt needed in hack/tools/xpkg: $$unformatted"; exit 1; }
	cd hack/tools/xpkg && $(GO) vet ./... && $(GO) test -count=1 ./...
	hack/check-packages.sh

## test-schema: the XRDs as the API server sees them (test/schema, its own module): CRD validation, defaults, every example, accept/reject cases, legacy variant and docs/platform.md up to date.
.PHONY: test-schema
test-schema:
	@unformatted=$$(cd test/schema && gofmt -l .); [ -z "$$unformatted" ] || { echo "gofmt needed in test/schema: $$unformatted"; exit 1; }
	cd test/schema && $(GO) vet ./... && $(GO) test -count=1 ./...

## test-talos: the node pool's Talos bootstrap patches against Talos' own machinery (test/talos, its own module, github.com/siderolabs/talos/pkg/machinery pinned in its go.mod): generate a worker config as CABPT does, apply the rendered strategic patches, validate strictly, for Talos below and from 1.12, with and without registry mirrors, with the node patch (labels, taints, kernel modules, kubelet).
.PHONY: test-talos
test-talos:
	@unformatted=$$(cd test/talos && gofmt -l .); [ -z "$$unformatted" ] || { echo "gofmt needed in test/talos: $$unformatted"; exit 1; }
	cd test/talos && $(GO) vet ./... && $(GO) test -count=1 ./...

## bench: RunFunction benchmarks per mode and size plus per-rule micro-benchmarks,
## printed as a table with scaling ratios (hack/benchtable). Not part of make test.
BENCH ?= .
BENCHTIME ?= 1s
BENCHCOUNT ?= 3
.PHONY: bench
bench:
	@set -o pipefail; uptime; $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) . | tee /dev/stderr | $(GO) run ./hack/benchtable

## load: gRPC load generator against the built function and an echo floor, as
## separate processes (peak RSS from VmHWM); bounded: LOADTIME per concurrency
## level per server per case. Not part of make test.
LOADTIME ?= 5s
LOADCASES ?= nodepool-cdi50,nodepool-cdi50-rolling,nodepool-cdi2000,catalog-examples,tenantcluster-examples
.PHONY: load
load:
	$(GO) build -o bin/function-worker-image .
	$(GO) build -o bin/loadgen ./cmd/loadgen
	@uptime
	bin/loadgen -function-binary bin/function-worker-image -cases $(LOADCASES) -concurrency 1,16,64 -duration $(LOADTIME)
