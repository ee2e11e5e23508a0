package cloneplacement

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPredict(t *testing.T) {
	wffc := ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
	immediate := ptr.To(storagev1.VolumeBindingImmediate)
	class := func(name, provisioner string, mode *storagev1.VolumeBindingMode, params map[string]string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: mode, Parameters: params}
	}
	const linstor = "linstor.csi.linbit.com"
	linstorDriver := "LINSTOR clones a volume onto the nodes that hold its source and adds no replica while one is there, so each clone's only replica is on the golden's node, the only node allowed to attach it"
	topoLVMDriver := "TopoLVM keeps a volume in one node's LVM volume group and makes a clone or a snapshot restore only on its source's node"

	// Cozystack's two LINSTOR classes, as its installer creates them.
	local := class("local", linstor, wffc, map[string]string{
		"linstor.csi.linbit.com/storagePool":             "data",
		"linstor.csi.linbit.com/layerList":               "storage",
		"linstor.csi.linbit.com/allowRemoteVolumeAccess": "false",
	})
	replicated := class("replicated", linstor, immediate, map[string]string{
		"linstor.csi.linbit.com/storagePool":             "data",
		"linstor.csi.linbit.com/autoPlace":               "3",
		"linstor.csi.linbit.com/layerList":               "drbd storage",
		"linstor.csi.linbit.com/allowRemoteVolumeAccess": "true",
	})
	oneReplicaLocal := class("local", linstor, immediate, map[string]string{
		"linstor.csi.linbit.com/placementCount":          "1",
		"linstor.csi.linbit.com/allowRemoteVolumeAccess": "false",
	})

	cases := map[string]struct {
		reason         string
		golden, target *storagev1.StorageClass
		want           Placement
	}{
		// Node-local: held.
		"CozystackLocalLINSTORClass": {
			reason: "layerList storage without DRBD, remote access false, placementCount unset (1): one replica, on the golden's node, attachable there alone.",
			golden: local, target: local,
			want: Placement{OneNode: true, Class: "local", Provisioner: linstor, WaitForFirstConsumer: true, Driver: linstorDriver,
				Statement: `linstor.csi.linbit.com/allowRemoteVolumeAccess: "false" and one replica per volume (LINSTOR's default placementCount)`},
		},
		"LINSTOROneReplicaWithoutRemoteAccess": {
			reason: "placementCount 1 and allowRemoteVolumeAccess false, Immediate binding: every clone on the golden's node.",
			golden: oneReplicaLocal, target: oneReplicaLocal,
			want: Placement{OneNode: true, Class: "local", Provisioner: linstor, Driver: linstorDriver,
				Statement: `linstor.csi.linbit.com/allowRemoteVolumeAccess: "false" and one replica per volume (the class's parameter linstor.csi.linbit.com/placementCount)`},
		},
		"LINSTORUnprefixedKeysAnyCase": {
			reason: "linstor-csi reads a key without its prefix and without case; ParseBool takes False.",
			golden: class("l", linstor, nil, map[string]string{"AutoPlace": "1", "AllowRemoteVolumeAccess": "False"}),
			target: class("l", linstor, nil, map[string]string{"AutoPlace": "1", "AllowRemoteVolumeAccess": "False"}),
			want: Placement{OneNode: true, Class: "l", Provisioner: linstor, Driver: linstorDriver,
				Statement: `AllowRemoteVolumeAccess: "False" and one replica per volume (the class's parameter AutoPlace)`},
		},
		"LINSTORWithoutDRBDAllowsNoRemoteAccess": {
			reason: "Unset, allowRemoteVolumeAccess is local-only when layerList has no drbd or nvme layer.",
			golden: class("l", linstor, nil, map[string]string{"linstor.csi.linbit.com/layerList": "storage"}),
			target: class("l", linstor, nil, map[string]string{"linstor.csi.linbit.com/layerList": "storage"}),
			want: Placement{OneNode: true, Class: "l", Provisioner: linstor, Driver: linstorDriver,
				Statement: `linstor.csi.linbit.com/layerList: "storage" and no allowRemoteVolumeAccess (without a drbd or nvme layer linstor-csi allows no remote access) and one replica per volume (LINSTOR's default placementCount)`},
		},
		"LINSTORPolicyOfTheNodeAlone": {
			reason: "A fromSame rule on linbit.com/hostname is the local-only policy written out.",
			golden: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "- fromSame: [linbit.com/hostname]"}),
			target: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "- fromSame: [linbit.com/hostname]"}),
			want: Placement{OneNode: true, Class: "l", Provisioner: linstor, Driver: linstorDriver,
				Statement: `allowRemoteVolumeAccess: "- fromSame: [linbit.com/hostname]" (every rule fromSame linbit.com/hostname) and one replica per volume (LINSTOR's default placementCount)`},
		},
		"TopoLVMLateBinding": {
			reason: "TopoLVM makes a clone on its source's node whatever node the worker was scheduled to.",
			golden: class("topolvm", "topolvm.io", wffc, nil), target: class("topolvm", "topolvm.io", wffc, nil),
			want: Placement{OneNode: true, Class: "topolvm", Provisioner: "topolvm.io", WaitForFirstConsumer: true, Statement: "provisioner topolvm.io", Driver: topoLVMDriver},
		},
		"TopoLVMLegacyNameImmediate": {
			reason: "The legacy driver name behaves the same; Immediate binding puts every worker on the golden's node.",
			golden: class("lvm", "topolvm.cybozu.com", immediate, nil), target: class("lvm", "topolvm.cybozu.com", immediate, nil),
			want: Placement{OneNode: true, Class: "lvm", Provisioner: "topolvm.cybozu.com", Statement: "provisioner topolvm.cybozu.com", Driver: topoLVMDriver},
		},
		"TopoLVMGoldenClassUnknown": {
			reason: "Any TopoLVM source is on one node: the target's driver says it.",
			target: class("topolvm", "topolvm.io", wffc, nil),
			want:   Placement{OneNode: true, Class: "topolvm", Provisioner: "topolvm.io", WaitForFirstConsumer: true, Statement: "provisioner topolvm.io", Driver: topoLVMDriver},
		},
		"ZFSLocalPV": {
			reason: "ZFS LocalPV clones in the source's pool on its node.",
			golden: class("zfs", "zfs.csi.openebs.io", wffc, nil), target: class("zfs", "zfs.csi.openebs.io", wffc, nil),
			want: Placement{OneNode: true, Class: "zfs", Provisioner: "zfs.csi.openebs.io", WaitForFirstConsumer: true, Statement: "provisioner zfs.csi.openebs.io",
				Driver: "OpenEBS ZFS LocalPV keeps a volume in one node's ZFS pool and makes a clone in its source's pool, on its source's node"},
		},

		// Reachable: never held.
		"CozystackReplicatedLINSTORClass": {
			reason: "Three replicas and remote access: every node reaches a clone.",
			golden: replicated, target: replicated,
			want: Placement{Class: "replicated", Provisioner: linstor},
		},
		"LINSTOROneReplicaRemoteAccessUnset": {
			reason: "With the default DRBD layer, unset remote access is true: a diskless node attaches the clone.",
			golden: class("l", linstor, nil, map[string]string{"placementCount": "1"}), target: class("l", linstor, nil, map[string]string{"placementCount": "1"}),
			want: Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTOROneReplicaRemoteAccessTrue": {
			reason: "allowRemoteVolumeAccess true: one replica, reachable from every node.",
			golden: class("l", linstor, nil, map[string]string{"placementCount": "1", "allowRemoteVolumeAccess": "true"}),
			target: class("l", linstor, nil, map[string]string{"placementCount": "1", "allowRemoteVolumeAccess": "true"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORTwoReplicasWithoutRemoteAccess": {
			reason: "placementCount 2: each clone is on the golden's two nodes, not one.",
			golden: class("l", linstor, immediate, map[string]string{"placementCount": "2", "allowRemoteVolumeAccess": "false"}),
			target: class("l", linstor, immediate, map[string]string{"placementCount": "2", "allowRemoteVolumeAccess": "false"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORReplicasOnSameIsNoAccessRule": {
			reason: "replicasOnSame says where new replicas go, not who may attach a volume; with remote access every node reaches the clone.",
			golden: class("l", linstor, nil, map[string]string{"placementCount": "1", "replicasOnSame": "topology.kubernetes.io/zone"}),
			target: class("l", linstor, nil, map[string]string{"placementCount": "1", "replicasOnSame": "topology.kubernetes.io/zone"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORZonePolicy": {
			reason: "A fromSame zone rule lets the zone's nodes attach the clone: not one node.",
			golden: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "- fromSame: [topology.kubernetes.io/zone]", "layerList": "storage"}),
			target: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "- fromSame: [topology.kubernetes.io/zone]", "layerList": "storage"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORUnreadablePolicy": {
			reason: "A value linstor-csi refuses is no statement to hold on.",
			golden: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "maybe"}), target: class("l", linstor, nil, map[string]string{"allowRemoteVolumeAccess": "maybe"}),
			want: Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORNodeListPlacesByHand": {
			reason: "nodeList places volumes by hand, outside the autoplacer this package follows.",
			golden: class("l", linstor, nil, map[string]string{"nodeList": "n1", "allowRemoteVolumeAccess": "false"}),
			target: class("l", linstor, nil, map[string]string{"nodeList": "n1", "allowRemoteVolumeAccess": "false"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTOROtherScheduler": {
			reason: "FollowTopology places on the worker's preferred node; only the autoplacers are followed.",
			golden: class("l", linstor, nil, map[string]string{"placementPolicy": "FollowTopology", "allowRemoteVolumeAccess": "false"}),
			target: class("l", linstor, nil, map[string]string{"placementPolicy": "FollowTopology", "allowRemoteVolumeAccess": "false"}),
			want:   Placement{Class: "l", Provisioner: linstor},
		},
		"LINSTORGoldenOnMoreReplicas": {
			reason: "A golden with two replicas gives each clone two nodes, whatever the target keeps.",
			golden: class("replicated2", linstor, nil, map[string]string{"placementCount": "2"}),
			target: oneReplicaLocal,
			want:   Placement{Class: "local", Provisioner: linstor},
		},
		"LINSTORGoldenClassUnknown": {
			reason: "How many nodes hold the golden is its class's to say.",
			target: oneReplicaLocal,
			want:   Placement{Class: "local", Provisioner: linstor},
		},
		"CephRBD": {
			reason: "Ceph RBD volumes are reachable from every node.",
			golden: class("rbd", "rbd.csi.ceph.com", immediate, nil), target: class("rbd", "rbd.csi.ceph.com", immediate, nil),
			want: Placement{Class: "rbd", Provisioner: "rbd.csi.ceph.com"},
		},
		"UnknownProvisionerLateBinding": {
			reason: "WaitForFirstConsumer alone says nothing of node locality (zonal drivers bind late too): never held on guesswork.",
			golden: class("x", "csi.example.com", wffc, nil), target: class("x", "csi.example.com", wffc, nil),
			want: Placement{Class: "x", Provisioner: "csi.example.com", WaitForFirstConsumer: true},
		},
		"LocalPathIsCopiedNotCloned": {
			reason: "rancher.io/local-path is no CSI driver: CDI copies each disk to its worker's node (cloneplan's NoPopulator).",
			golden: class("local-path", "rancher.io/local-path", wffc, nil), target: class("local-path", "rancher.io/local-path", wffc, nil),
			want: Placement{Class: "local-path", Provisioner: "rancher.io/local-path", WaitForFirstConsumer: true},
		},
		"OpenEBSHostpathIsCopiedNotCloned": {
			reason: "openebs.io/local is no CSI driver either.",
			golden: class("openebs-hostpath", "openebs.io/local", wffc, nil), target: class("openebs-hostpath", "openebs.io/local", wffc, nil),
			want: Placement{Class: "openebs-hostpath", Provisioner: "openebs.io/local", WaitForFirstConsumer: true},
		},
		"AcrossDrivers": {
			reason: "CDI hands no clone across drivers to either of them.",
			golden: replicated, target: class("topolvm", "topolvm.io", wffc, nil),
		},
		"NoTargetClass": {
			reason: "Without the target class nothing is stated.",
			golden: local,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Predict(tc.golden, tc.target)); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
