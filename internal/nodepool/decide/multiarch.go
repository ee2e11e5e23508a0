package decide

import (
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
	"github.com/cozystack/function-worker-image/internal/nodepool/read"
)

// ArchAdmission is what the gate decides for a VM of an architecture.
type ArchAdmission int

const (
	// ArchAdmitted: the gate is on, or the architecture is the control
	// plane's.
	ArchAdmitted ArchAdmission = iota
	// ArchNoKubeVirt: no KubeVirt CR in this cluster. KubeVirt is not
	// deployed yet, or runs the VMs elsewhere (CAPK's
	// infraClusterSecretRef): there is no gate here to read, so the pool
	// goes through, as before the gate.
	ArchNoKubeVirt
	// ArchRefused: the gate is off and the control plane is of another
	// architecture: virt-api would refuse every worker VM.
	ArchRefused
	// ArchUndecided: the KubeVirt CR cannot be read, or has no default
	// architecture yet, and the gate is off: whether virt-api admits the VM
	// is unknown, so the pool waits rather than make VMs it may refuse.
	ArchUndecided
)

// AdmitArchitecture is the gate's rule for a VM that names arch.
func AdmitArchitecture(arch string, kv read.KubeVirtGate) ArchAdmission {
	switch {
	case !kv.Found:
		return ArchNoKubeVirt
	case kv.Unreadable != "":
		return ArchUndecided
	case kv.MultiArchitecture || kv.Default == arch:
		return ArchAdmitted
	case kv.Default == "":
		return ArchUndecided
	}
	return ArchRefused
}

// GateOnMultiArchitecture holds a new template of a pool whose VM names an
// architecture KubeVirt does not admit. A template that is composed already
// is never held (decideHold): the hold keeps what runs.
func GateOnMultiArchitecture(p pool.Pool, img pool.Image, kv read.KubeVirtGate) *Hold {
	switch AdmitArchitecture(img.Arch.Value, kv) {
	case ArchRefused, ArchUndecided:
		return &Hold{Reason: ReasonArchitectureNotAdmitted, Message: msgArchitectureNotAdmitted(p, img, kv)}
	}
	return nil
}
