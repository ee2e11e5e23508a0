package cdistate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

func TestStalledFix(t *testing.T) {
	g := Golden{Namespace: "cozy-public", Name: "talos-worker-a-v1.13.6", URL: "https://factory.talos.dev/image/a/v1.13.6/openstack-amd64.raw.xz", SchematicID: "a", Version: "v1.13.6"}
	cases := map[string]struct {
		reason string
		state  State
		want   string
	}{
		"ClaimNotBoundNamesTheClaim": {
			reason: "A golden Pending for the bound waits on its claim: the PVC and its provisioner are what to check.",
			state:  State{Kind: Pending, Phase: cdiv1.Pending},
			want:   "its claim is not bound, or not handed to the importer: check the golden's PVC and its StorageClass's provisioner (kubectl -n cozy-public describe pvc talos-worker-a-v1.13.6; kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer); CDI continues by itself once the claim binds",
		},
		"WhatCDIAwaitsIsTheFix": {
			reason: "A golden waiting for a StorageClass to exist says so; no claim will bind before it does.",
			state:  State{Kind: Pending, Awaits: `CDI waits for StorageClass "fast", named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does`},
			want:   `CDI waits for StorageClass "fast", named in spec.storage.storageClassName, to exist and creates the PVC by itself once it does`,
		},
		"ImporterNotStartedNamesTheScratchClaim": {
			reason: "cozystack #3513: an importer that waits on a scratch claim that never binds.",
			state:  State{Kind: Importing, Phase: cdiv1.ImportScheduled},
			want:   "CDI's importer pod has not started: check whether it waits for scheduling or for its scratch claim (*-scratch), which CDI needs for an image it cannot stream (kubectl -n cozy-public get pods,pvc -l app=containerized-data-importer, and CDIConfig's scratchSpaceStorageClass); the import starts by itself once they bind",
		},
		"ImporterWaitingOnTheServerNamesTheEntryByImage": {
			reason: "A pool does not know the catalog entry's index: the entry is named by its image.",
			state:  State{Kind: Importing, Phase: cdiv1.ImportInProgress, Progress: "12.5%"},
			want:   "CDI's importer is waiting on https://factory.talos.dev/image/a/v1.13.6/openstack-amd64.raw.xz, which accepted the connection but sends nothing: the importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check that it serves the image (kubectl -n cozy-public logs -l app=containerized-data-importer), then delete the importer pod so CDI starts a new attempt; or point the imageFactoryURL of the XWorkerImageCatalog entry for schematicID a, version v1.13.6 (or the catalog's spec.imageFactoryURL) at a mirror that answers: " + recreated,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, StalledFix(tc.state, g)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
