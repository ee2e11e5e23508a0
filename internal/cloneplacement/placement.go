// Package cloneplacement predicts where a clone of a golden can land when
// the storage driver makes it, as it does for CDI's csi-clone and snapshot
// strategies, from what the golden's and the worker disk's StorageClasses
// state: the provisioner, its parameters and volumeBindingMode. A node-local
// driver makes a clone beside its source, so from a golden bound on one node
// (the catalog binds it at once, cdi.kubevirt.io/storage.bind.immediate.requested)
// every worker disk lands on that node, or never reaches a worker scheduled
// elsewhere. A host-assisted copy is not the driver's clone and lands on its
// worker's node; internal/cloneplan says which of the two CDI makes.
//
// Only what a class states confines a clone: an unknown provisioner, a
// parameter this package cannot read, or a class its driver lets every node
// reach, is not held on guesswork. The drivers, read from their source:
//
//   - LINSTOR (linstor.csi.linbit.com; piraeusdatastore/linstor-csi v1.12.0):
//     pkg/volume/parameter.go NewParameters reads each key without case, bare
//     or under linstor.csi.linbit.com/; placementCount (legacy autoPlace)
//     defaults to 1; allowRemoteVolumeAccess is a bool or a list of
//     fromSame rules (pkg/volume/remoteaccess.go UnmarshalText; "false" is
//     fromSame linbit.com/hostname), and unset it is "true" only with a
//     drbd or nvme layer in layerList (default "drbd storage"); nodeList or
//     clientList place volumes by hand. pkg/client/linstor.go Clone has
//     LINSTOR clone the resource definition onto the nodes that hold the
//     source (LINBIT/linstor-server #487); the AutoPlaceTopology scheduler
//     (pkg/topology/scheduler/autoplacetopology/autoplacetopology.go Create,
//     step 1a) adds no replica once placementCount replicas exist with one on
//     a requisite node, which is every node under external-provisioner
//     without --strict-topology (Piraeus Operator v2.6 deploys none:
//     pkg/resources/cluster/csi-controller/csi-controller-deployment.yaml);
//     and a local-only volume is reachable from its diskful nodes alone
//     (pkg/linstor/highlevelclient/high_level_client.go
//     GenericAccessibleTopologies).
//   - TopoLVM (topolvm.io, legacy topolvm.cybozu.com; topolvm/topolvm
//     v0.41.0): internal/driver/controller.go CreateVolume provisions a
//     volume with a source on the source's node and refuses a request
//     whose topology does not contain it ("cannot find source volume's
//     node"); CreateSnapshot likewise.
//   - OpenEBS ZFS LocalPV (zfs.csi.openebs.io; openebs/zfs-localpv):
//     pkg/driver/controller.go CreateVolClone copies the source volume's
//     spec, its node and pool included.
//
// Provisioners that are no CSI driver (rancher.io/local-path, OpenEBS's
// openebs.io/local) never get a clone from CDI: cloneplan predicts the copy.
package cloneplacement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/yaml"

	"github.com/cozystack/function-worker-image/internal/capacity"
)

// Provisioners whose every volume lives on one node.
const (
	ProvisionerTopoLVM       = "topolvm.io"
	ProvisionerTopoLVMLegacy = "topolvm.cybozu.com"
	ProvisionerZFSLocalPV    = "zfs.csi.openebs.io"
)

// linstorNodeKey is the topology key LINSTOR CSI's local-only policy
// restricts access by (pkg/topology/topology.go LinstorNodeKey).
const linstorNodeKey = "linbit.com/hostname"

// Placement is where the clones the driver makes of a golden can land.
type Placement struct {
	// OneNode is true when the classes state that every such clone lands
	// on the one node that holds the golden.
	OneNode bool
	// Class and Provisioner are the worker disk's class.
	Class, Provisioner string
	// Statement is what the class states that confines the clone, with the
	// parameter and its value as written.
	Statement string
	// Driver is how the driver places a clone, a clause.
	Driver string
	// WaitForFirstConsumer is true when the worker disk's class binds a
	// claim only once a pod using it is scheduled.
	WaitForFirstConsumer bool
}

// Predict says where a clone of a golden on class golden lands on class
// target, when the driver makes it. golden is nil when the golden's class
// is unknown; a nil target confines nothing.
func Predict(golden, target *storagev1.StorageClass) Placement {
	if target == nil || (golden != nil && golden.Provisioner != target.Provisioner) {
		// Across drivers CDI copies (cloneplan); no driver clone to place.
		return Placement{}
	}
	p := Placement{
		Class: target.Name, Provisioner: target.Provisioner,
		WaitForFirstConsumer: target.VolumeBindingMode != nil && *target.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer,
	}
	switch target.Provisioner {
	case ProvisionerTopoLVM, ProvisionerTopoLVMLegacy:
		p.OneNode = true
		p.Statement = "provisioner " + target.Provisioner
		p.Driver = "TopoLVM keeps a volume in one node's LVM volume group and makes a clone or a snapshot restore only on its source's node"
	case ProvisionerZFSLocalPV:
		p.OneNode = true
		p.Statement = "provisioner " + target.Provisioner
		p.Driver = "OpenEBS ZFS LocalPV keeps a volume in one node's ZFS pool and makes a clone in its source's pool, on its source's node"
	case capacity.ProvisionerLINSTOR:
		// How many nodes hold the golden is its class's to say.
		statement, ok := "", golden != nil
		if ok {
			statement, ok = linstorOneNode(golden, target)
		}
		if !ok {
			return p
		}
		p.OneNode = true
		p.Statement = statement
		p.Driver = "LINSTOR clones a volume onto the nodes that hold its source and adds no replica while one is there, so each clone's only replica is on the golden's node, the only node allowed to attach it"
	}
	return p
}

// linstorOneNode says whether a clone on target of a golden on golden has
// one replica, on the golden's node, reachable from that node alone, and
// what the classes state to make it so.
func linstorOneNode(golden, target *storagev1.StorageClass) (string, bool) {
	access, localOnly := linstorLocalOnly(target)
	if !localOnly || !linstorAutoPlaced(target) || !linstorAutoPlaced(golden) {
		return "", false
	}
	// The golden's one replica is where the clone starts; the target's
	// count is what the scheduler tops it up to.
	n, from := capacity.Replicas(target)
	if n != 1 {
		return "", false
	}
	if golden.Name != target.Name {
		if g, _ := capacity.Replicas(golden); g != 1 {
			return "", false
		}
	}
	return fmt.Sprintf("%s and one replica per volume (%s)", access, from), true
}

// linstorParams are a LINSTOR class's parameters by linstor-csi's key
// (lower case, without the driver's prefix), with the key as written, in
// key order; keys in other namespaces are left out.
func linstorParams(sc *storagev1.StorageClass) map[string][2]string {
	out := map[string][2]string{}
	for _, k := range slices.Sorted(maps.Keys(sc.Parameters)) {
		key := strings.ToLower(strings.TrimPrefix(k, capacity.ProvisionerLINSTOR+"/"))
		if strings.Contains(key, "/") {
			continue
		}
		out[key] = [2]string{k, sc.Parameters[k]}
	}
	return out
}

// linstorLocalOnly is the class's remote access policy when it allows a
// volume to be attached on its replicas' nodes alone, with the statement
// that makes it so.
func linstorLocalOnly(sc *storagev1.StorageClass) (string, bool) {
	params := linstorParams(sc)
	if kv, ok := params["allowremotevolumeaccess"]; ok && kv[1] != "" {
		if b, err := strconv.ParseBool(kv[1]); err == nil {
			return fmt.Sprintf("%s: %q", kv[0], kv[1]), !b
		}
		var rules []struct {
			FromSame []string `json:"fromSame"`
		}
		if err := yaml.Unmarshal([]byte(kv[1]), &rules); err != nil || len(rules) == 0 {
			return "", false
		}
		for _, r := range rules {
			if !slices.Contains(r.FromSame, linstorNodeKey) {
				return "", false
			}
		}
		return fmt.Sprintf("%s: %q (every rule fromSame %s)", kv[0], kv[1], linstorNodeKey), true
	}
	// Unset, linstor-csi allows remote access only to DRBD and NVMe layers.
	kv, ok := params["layerlist"]
	if !ok {
		return "", false
	}
	for _, l := range strings.Split(kv[1], " ") {
		switch strings.ToLower(l) {
		case "drbd", "nvme":
			return "", false
		case "storage", "luks", "cache", "writecache":
		default:
			// linstor-csi refuses an unknown layer: nothing to predict.
			return "", false
		}
	}
	return fmt.Sprintf("%s: %q and no allowRemoteVolumeAccess (without a drbd or nvme layer linstor-csi allows no remote access)", kv[0], kv[1]), true
}

// linstorAutoPlaced reports a class whose volumes LINSTOR places by its
// autoplacer: no nodeList or clientList, and the default
// AutoPlaceTopology (or plain AutoPlace) scheduler.
func linstorAutoPlaced(sc *storagev1.StorageClass) bool {
	params := linstorParams(sc)
	for _, manual := range []string{"nodelist", "clientlist"} {
		if _, ok := params[manual]; ok {
			return false
		}
	}
	kv, ok := params["placementpolicy"]
	if !ok {
		return true
	}
	switch strings.ToLower(kv[1]) {
	case "autoplacetopology", "autoplace":
		return true
	}
	return false
}
