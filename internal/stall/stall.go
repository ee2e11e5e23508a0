// Package stall decides whether a CDI DataVolume that is still being
// imported or cloned has stopped moving.
//
// CDI gives up on neither. Its importer cancels a transfer only after 10
// minutes without a byte (CDI v1.65.0 pkg/importer/http-datasource.go,
// NewHTTPDataSource starts pollProgress once the response headers are in),
// so a server that accepts the connection and never answers holds it for
// ever: createHTTPClient sets no timeout, and the HEAD of getContentLength
// and the GET of createHTTPReader wait without one. A claim or scratch claim
// that never binds, an importer pod never scheduled, a clone's temporary
// claim left Pending or Lost (CDI #2323, #3470) all leave the DataVolume in
// its phase with nothing to say why.
//
// CDI keeps no time that moves with progress either: a condition's
// lastTransitionTime changes only with its status, its lastHeartbeatTime
// with its reason or message (pkg/controller/datavolume/conditions.go
// updateCondition), and status.progress is a bare percentage
// (controller-base.go reconcileProgressUpdate). So the function keeps the
// time itself: a Record of when it first saw a DataVolume at its present
// Fingerprint, written into the composite's status and read back on the
// next call (compose.PreviousStatus), so that a restart of the function or
// of Crossplane loses nothing.
package stall

import (
	"encoding/json"
	"strings"
	"time"

	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// Fingerprint is what changes while CDI works on a DataVolume: its phase,
// its progress as CDI writes it ("45.53%", "N/A") and its worker pod's
// restart count (controller-base.go updateStatus copies it from the claim's
// cdi.kubevirt.io/storage.pod.restarts). Any change is movement: a restart
// is CDI trying again, which cdistate reports from three on.
type Fingerprint struct {
	Phase    string `json:"phase"`
	Progress string `json:"progress,omitempty"`
	Restarts int32  `json:"restarts,omitempty"`
}

// Of is a DataVolume's fingerprint.
func Of(dv *cdiv1.DataVolume) Fingerprint {
	return Fingerprint{Phase: string(dv.Status.Phase), Progress: string(dv.Status.Progress), Restarts: dv.Status.RestartCount}
}

// Record is when the function first saw a DataVolume at Fingerprint.
type Record struct {
	Fingerprint
	Since time.Time
}

// Track is the record of a DataVolume seen at fp now: prev, when it was
// recorded for fp, else a new one from now. A caller without a time (the
// zero now) records nothing: ok is false.
func Track(prev *Record, fp Fingerprint, now time.Time) (Record, bool) {
	if now.IsZero() {
		return Record{}, false
	}
	if prev != nil && prev.Fingerprint == fp && !prev.Since.IsZero() && !prev.Since.After(now) {
		return *prev, true
	}
	return Record{Fingerprint: fp, Since: now}, true
}

// Stalled reports whether the DataVolume has not moved for after or longer
// at now.
func (r Record) Stalled(now time.Time, after time.Duration) bool {
	return !r.Since.IsZero() && !now.IsZero() && now.Sub(r.Since) >= after
}

// Bound is a bound as messages say it: 30m, 1h30m, 2h, 90s.
func Bound(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// FormatSince is a record's time as a status carries it (RFC 3339, UTC).
func FormatSince(t time.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// ParseSince reads a status's time back; ok is false for none or one that
// does not parse, which starts the record afresh.
func ParseSince(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Recorded is the record a status entry carries, its phase, progress,
// restarts and progressSince; nil when it carries no time or one that does
// not parse, which starts the record afresh.
func Recorded(phase, progress string, restarts int32, since string) *Record {
	t, ok := ParseSince(since)
	if !ok {
		return nil
	}
	return &Record{Fingerprint: Fingerprint{Phase: phase, Progress: progress, Restarts: restarts}, Since: t}
}

// Mark is the catalog's verdict on a golden it finds stalled, written on
// the golden DataVolume (labels.AnnImportStalled) for the pools that clone
// it: the fingerprint it stalled at and the bound it was held to. A pool
// reads a golden, not the catalog, and the mark saves every pool keeping a
// record of its own (and a pool made later from waiting the bound again).
type Mark struct {
	Fingerprint
	After time.Duration
}

// markJSON is Mark as the annotation carries it.
type markJSON struct {
	Fingerprint
	After string `json:"after"`
}

// String is the annotation's value.
func (m Mark) String() string {
	b, err := json.Marshal(markJSON{Fingerprint: m.Fingerprint, After: m.After.String()})
	if err != nil {
		// A struct of strings and an integer always encodes.
		return ""
	}
	return string(b)
}

// MarkOf reads a golden's mark from the annotation value v and holds it
// against the golden: ok only when the golden is still where the catalog
// found it stalled, since a mark outlives the golden's movement until the
// catalog's next call.
func MarkOf(v string, dv *cdiv1.DataVolume) (Mark, bool) {
	if v == "" || dv == nil {
		return Mark{}, false
	}
	var m markJSON
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return Mark{}, false
	}
	after, err := time.ParseDuration(m.After)
	if err != nil || m.Fingerprint != Of(dv) {
		return Mark{}, false
	}
	return Mark{Fingerprint: m.Fingerprint, After: after}, true
}

// clonePhases are the phases of a clone in flight: what CDI v1.65.0 maps
// the clone populator's phases to (pkg/controller/datavolume/
// clone-controller-base.go populatorPhaseMap: CloneScheduled for a pending
// or unplanned one, CSICloneInProgress, CloneInProgress for a host-assisted
// copy, PrepClaimInProgress, RebindInProgress,
// CloneFromSnapshotSourceInProgress, SnapshotForSmartCloneInProgress), what
// the legacy host-assisted path sets (updateStatusPhase: CloneScheduled,
// CloneInProgress), and PendingPopulation, a populated claim on a
// WaitForFirstConsumer class whose consumer is not scheduled yet
// (controller-base.go updateStatusPVCPending, shouldBeMarkedPendingPopulation).
// SmartClonePVCInProgress, ExpansionInProgress and
// NamespaceTransferInProgress are API phases (api types.go) v1.65.0 no
// longer sets; a DataVolume an older CDI left in one is in flight too.
var clonePhases = map[cdiv1.DataVolumePhase]bool{
	cdiv1.CloneScheduled:                    true,
	cdiv1.CloneInProgress:                   true,
	cdiv1.CSICloneInProgress:                true,
	cdiv1.SnapshotForSmartCloneInProgress:   true,
	cdiv1.CloneFromSnapshotSourceInProgress: true,
	cdiv1.PrepClaimInProgress:               true,
	cdiv1.RebindInProgress:                  true,
	cdiv1.PendingPopulation:                 true,
	cdiv1.SmartClonePVCInProgress:           true,
	cdiv1.ExpansionInProgress:               true,
	cdiv1.NamespaceTransferInProgress:       true,
}

// importPhases are the phases of an import in flight, as CDI v1.65.0's
// import controller sets them on a DataVolume (pkg/controller/datavolume/
// import-controller.go updateStatusPhase: ImportScheduled until the
// importer pod runs, ImportInProgress while it does).
var importPhases = map[cdiv1.DataVolumePhase]bool{
	cdiv1.ImportScheduled:  true,
	cdiv1.ImportInProgress: true,
}

// Importing reports whether a DataVolume is in one of the import phases.
func Importing(dv *cdiv1.DataVolume) bool {
	return importPhases[dv.Status.Phase]
}

// Cloning reports whether a DataVolume is in one of the clone phases.
func Cloning(dv *cdiv1.DataVolume) bool {
	return clonePhases[dv.Status.Phase]
}
