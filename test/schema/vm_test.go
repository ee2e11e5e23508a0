package schema

import (
	"strings"
	"testing"
)

// TestVMDetailsAcceptAndReject runs the VM details of a pool (issue 12:
// roles, the virt-launcher CPU pair, ephemeral storage, the system disk)
// through the shipped schemas, on an XNodePool and on a tenant cluster's pool.
func TestVMDetailsAcceptAndReject(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"EverythingIsAdmitted": {
			reason: "Every VM detail at once, as the vm-details scenario sets them.",
			obj: nodePoolHead + `spec: {clusterName: acme, resources: {cpu: "2", memory: 4Gi}, roles: [ingress-nginx, edge.v2], logSerialConsole: true,
  podCpuRequest: 500m, podCpuLimit: "3", ephemeralStorage: {request: 256Mi, limit: 4Gi}, disk: {pciAddress: "0000:08:00.0", blockSize: {logical: 512, physical: 4096}}}`,
		},
		"RoleWithSlashIsRejected": {
			reason: "node-role.kubernetes.io/<role> must be a label key: the role is a label name.",
			obj:    nodePoolHead + `spec: {clusterName: acme, roles: [a/b]}`,
			want:   []string{"spec.roles[0]", "should match"},
		},
		"DuplicateRoleIsRejected": {
			reason: "roles is a set.",
			obj:    nodePoolHead + `spec: {clusterName: acme, roles: [edge, edge]}`,
			want:   []string{"spec.roles[1]", "Duplicate value"},
		},
		"NegativePodCPUIsRejected": {
			reason: "A negative quantity never reaches a Pod.",
			obj:    nodePoolHead + `spec: {clusterName: acme, podCpuLimit: "-1"}`,
			want:   []string{"spec.podCpuLimit", "should match"},
		},
		"EphemeralRequestAboveLimitIsRejected": {
			reason: "A container cannot request more than its limit; quantities compare as quantities.",
			obj:    nodePoolHead + `spec: {clusterName: acme, ephemeralStorage: {request: 3Gi, limit: 2048Mi}}`,
			want:   []string{"spec.ephemeralStorage", "cannot exceed ephemeralStorage.limit"},
		},
		"EphemeralRequestBelowLimitInOtherUnitsIsAdmitted": {
			reason: "1Gi is below 2000M.",
			obj:    nodePoolHead + `spec: {clusterName: acme, ephemeralStorage: {request: 1Gi, limit: 2000M}}`,
		},
		"UppercasePCIAddressIsRejected": {
			reason: "One spelling of an address, so one template hash.",
			obj:    nodePoolHead + `spec: {clusterName: acme, disk: {pciAddress: "0000:0A:00.0"}}`,
			want:   []string{"spec.disk.pciAddress", "should match"},
		},
		"OddBlockSizeIsRejected": {
			reason: "Sector sizes are 512 or 4096.",
			obj:    nodePoolHead + `spec: {clusterName: acme, disk: {blockSize: {logical: 1024}}}`,
			want:   []string{"spec.disk.blockSize.logical", "Unsupported value"},
		},
		"LogicalAbovePhysicalIsRejected": {
			reason: "A physical sector holds whole logical sectors.",
			obj:    nodePoolHead + `spec: {clusterName: acme, disk: {blockSize: {logical: 4096, physical: 512}}}`,
			want:   []string{"spec.disk.blockSize", "cannot exceed blockSize.physical"},
		},
		"TenantClusterPoolCarriesTheSameRules": {
			reason: "A tenant cluster's pools have the same shape.",
			obj:    tenantHead + `spec: {nodePools: {ingress: {roles: ["in gress"]}}}`,
			want:   []string{"spec.nodePools.ingress.roles[0]", "should match"},
		},
		"TenantClusterPoolWithRolesIsAdmitted": {
			reason: "The chart's ingress pool.",
			obj:    tenantHead + `spec: {nodePools: {ingress: {roles: [ingress-nginx], logSerialConsole: true}}}`,
		},
	}
	vs := validators(t, configurationDir)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := fromYAML(t, tc.obj)
			_, errs := vs[obj["kind"].(string)].Admit(obj)
			got := errString(errs.ToAggregate())
			if len(tc.want) == 0 && got != "" {
				t.Errorf("%s\nwant admitted, got: %s", tc.reason, got)
			}
			if len(tc.want) > 0 && got == "" {
				t.Errorf("%s\nwant rejected with %q, got admitted", tc.reason, tc.want)
			}
			for _, w := range tc.want {
				if got != "" && !strings.Contains(got, w) {
					t.Errorf("%s\nwant an error containing %q, got: %s", tc.reason, w, got)
				}
			}
		})
	}
}
