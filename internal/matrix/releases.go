package matrix

import (
	"github.com/cozystack/function-worker-image/internal/config"
)

// BuiltinReleases is the patch release each Kubernetes minor's pools run, as
// kubernetes-nodes ships it (files/versions.yaml@69da032, which _versions.tpl
// kubernetes.versionMap reads for the Machine version and kubelet image tag).
// It is updated with the support matrix: a new Talos minor brings a new one.
var BuiltinReleases = map[string]string{
	"v1.31": "v1.31.14",
	"v1.32": "v1.32.13",
	"v1.33": "v1.33.13",
	"v1.34": "v1.34.9",
	"v1.35": "v1.35.6",
}

// Release is the Kubernetes release a pool of minor runs: the Input's row,
// else the built-in one (unless the Input replaces the table), else minor.0.
// The chart refuses an unlisted minor; this fails open, as the support
// matrix does, so a new minor needs no function release.
func Release(c config.Config, minor string) string {
	if r, ok := c.KubernetesReleases[minor]; ok {
		return r
	}
	if r, ok := BuiltinReleases[minor]; ok && !c.MatrixReplace {
		return r
	}
	return minor + ".0"
}
