package cdistate

import (
	"fmt"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/cozystack/function-worker-image/internal/redact"
)

// importerSelector selects CDI's importer pods and scratch claims: both
// carry app=containerized-data-importer (pkg/common/common.go
// CDILabelKey, CDILabelValue; pkg/controller/util.go
// newScratchPersistentVolumeClaimSpec).
const importerSelector = "app=containerized-data-importer"

// ReasonPodRunning is CDI's Running reason for a worker pod that runs
// (pkg/controller/util.go PodRunningReason, set by
// setAnnotationsFromPodWithPrefix): no cause, so a stall does not quote it.
const ReasonPodRunning = "Pod is running"

// StallCause is the reason and message CDI gives for a stalled
// DataVolume, when it gives one that says more than that its pod runs.
func (s State) StallCause() (reason, message string) {
	if s.Reason == ReasonPodRunning {
		return "", ""
	}
	return s.Reason, s.Message
}

// StalledFix is the fix of a golden's import that has not moved for the
// stall bound (internal/stall), by where it stopped, in the catalog's
// fields. CDI waits for a claim without limit, and re-creates the importer
// pod of an unfinished claim when it is gone (pkg/controller/
// import-controller.go ImportReconciler.reconcilePvc), so deleting a hung
// one starts a new attempt; its HTTP client has no timeout until the
// response headers are in (pkg/importer/http-datasource.go
// createHTTPClient, createHTTPReader), after which it gives up on 10
// minutes without a byte (pollProgress), which shows as restarts.
func StalledFix(s State, g Golden) string {
	pods := fmt.Sprintf("kubectl -n %s get pods,pvc -l %s", g.Namespace, importerSelector)
	switch {
	case s.Kind == Pending && s.Awaits != "":
		// What CDI waits for says more than any claim does.
		return s.Awaits
	case s.Kind == Pending || s.Phase == cdiv1.PVCBound:
		return fmt.Sprintf("its claim is not bound, or not handed to the importer: check the golden's PVC and its StorageClass's provisioner (kubectl -n %s describe pvc %s; %s); CDI continues by itself once the claim binds", g.Namespace, g.Name, pods)
	case s.Phase == cdiv1.ImportScheduled:
		return fmt.Sprintf("CDI's importer pod has not started: check whether it waits for scheduling or for its scratch claim (*-scratch), which CDI needs for an image it cannot stream (%s, and CDIConfig's scratchSpaceStorageClass); the import starts by itself once they bind", pods)
	}
	return fmt.Sprintf("CDI's importer is waiting on %s, which accepted the connection but sends nothing: the importer has no timeout for response headers and gives up on a body only after 10 minutes without a byte. Check that it serves the image (kubectl -n %s logs -l %s), then delete the importer pod so CDI starts a new attempt; or point %s (or the catalog's spec.imageFactoryURL) at a mirror that answers: %s",
		redact.Text(g.URL), g.Namespace, importerSelector, g.entry("imageFactoryURL"), recreated)
}
