package decide

import (
	"testing"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/nodepool/pool"
)

func TestInstallerCondition(t *testing.T) {
	cases := map[string]struct {
		reason  string
		repo    string
		version string
		want    compose.ConditionStatus
		reasonW string
	}{
		"DerivedOpenstackInstaller":  {reason: "The derived flavour matches.", repo: "factory.talos.dev/openstack-installer", version: "v1.13.6", want: compose.StatusTrue, reasonW: ReasonInstallerMatches},
		"MetalInstallerFromTalos112": {reason: "From 1.12 the metal installer turns an openstack worker into metal on upgrade.", repo: "factory.talos.dev/installer", version: "v1.12.0", want: compose.StatusFalse, reasonW: ReasonInstallerOtherPlatform},
		"MetalInstallerBefore112":    {reason: "Before 1.12 the installer does not set the kernel command line: nothing to warn about.", repo: "factory.talos.dev/installer", version: "v1.11.5", want: compose.StatusTrue, reasonW: ReasonInstallerMatches},
		"CustomRepositoryIsUnknown":  {reason: "A mirror's name says nothing about its flavour.", repo: "registry.local/talos", version: "v1.13.6", want: compose.StatusUnknown, reasonW: ReasonInstallerPlatformUnknown},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := InstallerCondition(testPool, pool.Setting{Value: tc.repo, Field: "spec.talos.installerRepository"}, "openstack", tc.version)
			if got.Status != tc.want || got.Reason != tc.reasonW {
				t.Errorf("%s\ngot %s/%s, want %s/%s: %s", tc.reason, got.Status, got.Reason, tc.want, tc.reasonW, got.Message)
			}
		})
	}
}

var testPool = pool.Pool{Namespace: "tenant-a", Cluster: "demo", Name: "md0"}
