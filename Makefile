# function-worker-image. The two commands that matter:
#   make render   render the shipped catalog example against the local function
#   make test     every test CI runs
SHELL := /usr/bin/env bash
GO ?= go
EXAMPLE ?= example/catalog
SCENARIO ?=
FUZZTIME ?= 10s

.PHONY: all
all: test

## run: serve the function locally without TLS on :9443 (for crossplane render).
.PHONY: run
run:
	$(GO) run . --insecure --debug

## render: render $(EXAMPLE) (optionally SCENARIO=<name>) with crossplane render v2.2.0.
.PHONY: render
render:
	hack/render-example.sh $(EXAMPLE) $(SCENARIO)

## crossplane: build (once per version) and print the pinned crossplane CLI.
.PHONY: crossplane
crossplane:
	@hack/crossplane-cli.sh

## generate: regenerate the Input deepcopy and CRD.
.PHONY: generate
generate:
	$(GO) generate ./...

## check-generate: fail when go generate or go mod tidy would change the tree.
.PHONY: check-generate
check-generate:
	$(GO) generate ./...
	$(GO) mod tidy
	@git diff --exit-code -- go.mod go.sum input package/input || { echo "go generate / go mod tidy changed the tree: run make generate and commit"; exit 1; }

## vet: gofmt and go vet.
.PHONY: vet
vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$unformatted" ] || { echo "gofmt needed: $$unformatted"; exit 1; }
	$(GO) vet ./...

## unit: unit, golden-file and render tests of the function module.
.PHONY: unit
unit:
	$(GO) test -count=1 ./...

## test: everything CI runs.
.PHONY: test
test: vet check-generate unit
