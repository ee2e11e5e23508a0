package matrix

import (
	"github.com/cozystack/function-worker-image/internal/config"
)

// BuiltinReleases is the patch release each Kubernetes minor's pools run,
// the table cozystack's kubernetes-nodes chart ships
// (packages/apps/kubernetes-nodes/files/versions.yaml@69da032, read by
// _versions.tpl kubernetes.versionMap for the Machine version and the kubelet
// image tag). It lives beside the support matrix because the two are updated
// together: a new Talos minor brings a new Kubernetes minor and its release.
var BuiltinReleases = map[string]string{
	"v1.31": "v1.31.14",
	"v1.32": "v1.32.13",
	"v1.33": "v1.33.13",
	"v1.34": "v1.34.9",
	"v1.35": "v1.35.6",
}

// Release is the Kubernetes release a pool of minor runs: the Input's row,
// else the built-in one (unless the Input replaces the table), else the
// minor's .0 release. The chart refuses a minor it has no row for; the
// function runs the first release instead, because new minors must need no
// function release (the support matrix fails open the same way), and every
// released minor has a .0.
func Release(c config.Config, minor string) string {
	if r, ok := c.KubernetesReleases[minor]; ok {
		return r
	}
	if r, ok := BuiltinReleases[minor]; ok && !c.MatrixReplace {
		return r
	}
	return minor + ".0"
}
