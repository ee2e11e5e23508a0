package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// CDI's host-assisted clone on its own programs.
//
// A host-assisted clone (CDI v1.65.0 pkg/controller/clone/host-clone.go)
// copies the source claim into the target's PVC' (tmp-pvc-<uid>) through two
// pods: the upload server pod cdi-upload-tmp-pvc-<uid> in the target's
// namespace (upload-controller.go makeUploadPodSpec: cmd/cdi-uploadserver,
// its serving certificate and the client CA as Secret cdi-upload-tmp-pvc-<uid>
// at /etc/tls/, PVC' at /data, a readiness probe HTTPS GET /healthz on
// 8443), behind a Service of the same name (port 8443), and, once CDI saw
// that pod ready (the PVC's cdi.kubevirt.io/storage.pod.ready), the source
// pod <target uid>-source-pod in the source's namespace
// (clone-controller.go MakeCloneSourcePodSpec: the cloner image's
// entrypoint cloner_startup.sh, which runs cmd/cdi-cloner on the source
// claim at /var/run/cdi/clone/source; its client certificate from Secret
// <pod name> as CLIENT_KEY and CLIENT_CERT, the server CA bundle as
// SERVER_CA_CERT, UPLOAD_URL https://cdi-upload-tmp-pvc-<uid>.<ns>.svc:8443/v1beta1/upload). The cloner
// tars the source volume, compresses it with snappy and POSTs it; the
// upload server unpacks it into PVC' and both exit 0 with "Clone Complete".
//
// For a clone into a namespace RunHostAssistedCopies named, the kubelet
// stand-in runs both pods as it runs real importers (importer.go): their
// own network namespace on the importer network, their own mount namespace
// with the pod's volumes (claims as their PV directories), the release's
// unpatched binaries at the image's paths (/usr/bin/cdi-uploadserver with
// the image's -alsologtostderr; /usr/bin/cloner_startup.sh and
// /usr/bin/cdi-cloner), the environment from the spec (the client
// certificate read from CDI's Secret). What a cluster's DNS and kube-proxy
// do for the cloner's URL, podHosts does: the pod's /etc/hosts names every
// Service whose selector matches a running pod of the stand-in by that
// pod's address (the Service's port is the container's, 8443), so the
// cloner reaches the upload server by the Service's name and verifies its
// certificate, which CDI issued for that name. Clones into other
// namespaces keep their pods Pending (standins.go).

// RunHostAssistedCopies makes the kubelet stand-in run the source and upload
// server pods of every host-assisted clone into namespace ns with CDI's own
// cdi-cloner and cdi-uploadserver, on the importer network (which it sets
// up).
func (cp *ControlPlane) RunHostAssistedCopies(ns string) error {
	if _, err := cp.ImporterNetwork(); err != nil {
		return err
	}
	if cp.clonerBin == "" || cp.uploadServerBin == "" || cp.clonerStartup == "" {
		return fmt.Errorf("CDI's cloner and upload server were not built (hack/build-binaries.sh)")
	}
	cp.copyNamespaces.Store(ns, true)
	return nil
}

// runsCopy reports whether pod is the source or upload server pod of a
// host-assisted clone into a namespace of RunHostAssistedCopies. Both work
// for CDI's temporary claim (the upload server mounts it; the source pod's
// AnnOwnerRef names it, clone-controller.go MakeCloneSourcePodSpec), which
// CDI makes in the source's namespace for a clone across namespaces and
// moves to the target's afterwards (host-clone.go, ObjectTransfer); its
// annotation cdi.kubevirt.io/events.source names the target claim.
func (s *standIns) runsCopy(ctx context.Context, pod *corev1.Pod) bool {
	if s.cp.importerNetwork() == nil {
		return false
	}
	ns, claim := pod.Namespace, ""
	switch pod.Labels[cdiComponentLabel] {
	case cdiCloneSourceComponent:
		var ok bool
		if ns, claim, ok = strings.Cut(pod.Annotations["cdi.kubevirt.io/storage.ownerRef"], "/"); !ok {
			return false
		}
	case cdiUploadServerComponent:
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.Name == "cdi-data-vol" {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	if claim == "" {
		return false
	}
	pvc, err := s.cp.Kube.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return false
	}
	if target, _, ok := strings.Cut(pvc.Annotations["cdi.kubevirt.io/events.source"], "/"); ok {
		ns = target
	}
	_, ok := s.cp.copyNamespaces.Load(ns)
	return ok
}

// Components of CDI's pods (label cdi.kubevirt.io; pkg/common/common.go).
const (
	cdiImporterComponent     = "importer"
	cdiUploadServerComponent = "cdi-upload-server"
	cdiCloneSourceComponent  = "cdi-clone-source"
)

// podProgram is what the stand-in runs as a CDI pod's one container: the
// release's binaries bound at the image's paths and the image's entrypoint
// (the container's args follow it).
type podProgram struct {
	// component names the container's logs.
	component string
	// binds are host file, container path pairs; the first is the program.
	binds   [][2]string
	command []string
}

// podProgramFor is the program of pod, by its CDI component.
func (s *standIns) podProgramFor(pod *corev1.Pod) podProgram {
	switch pod.Labels[cdiComponentLabel] {
	case cdiUploadServerComponent:
		// cmd/cdi-uploadserver/BUILD.bazel: entrypoint
		// /usr/bin/cdi-uploadserver -alsologtostderr.
		return podProgram{component: "uploadserver", binds: [][2]string{{s.cp.uploadServerBin, "/usr/bin/cdi-uploadserver"}}, command: []string{"/usr/bin/cdi-uploadserver", "-alsologtostderr"}}
	case cdiCloneSourceComponent:
		// cmd/cdi-cloner/BUILD.bazel: both files in /usr/bin, entrypoint
		// /usr/bin/cloner_startup.sh.
		return podProgram{component: "cloner", binds: [][2]string{{s.cp.clonerBin, "/usr/bin/cdi-cloner"}, {s.cp.clonerStartup, "/usr/bin/cloner_startup.sh"}}, command: []string{"/usr/bin/cloner_startup.sh"}}
	default:
		return podProgram{component: "importer", binds: [][2]string{{s.cp.importerBin, "/cdi-importer"}}, command: []string{"/cdi-importer"}}
	}
}

// podHosts is the pod's /etc/hosts: the kubelet's managed file (localhost,
// the pod's address and name) plus, for DNS and kube-proxy, each Service
// whose selector matches a running, ready pod of the stand-in, by that
// pod's address, under <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local.
func (s *standIns) podHosts(ctx context.Context, pod *corev1.Pod, ip string) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (the e2e kubelet stand-in).\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "%s\t%s\n", ip, pod.Name)
	svcs, err := s.cp.Kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return b.String()
	}
	pods, err := s.cp.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: cdiAppSelector})
	if err != nil {
		return b.String()
	}
	var lines []string
	for _, svc := range svcs.Items {
		if len(svc.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		for _, p := range pods.Items {
			if p.Namespace != svc.Namespace || p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning || !podReady(&p) || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			if r := s.importers[p.UID]; r == nil || r.ip != p.Status.PodIP {
				continue
			}
			lines = append(lines, fmt.Sprintf("%s\t%s.%s.svc %s.%s.svc.cluster.local", p.Status.PodIP, svc.Name, svc.Namespace, svc.Name, svc.Namespace))
			break
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readinessAnswers runs the container's HTTP(S) readiness probe once
// against the pod's address, as the kubelet's prober does (no certificate
// verification, success on 200-399); a container without a probe is ready.
func readinessAnswers(pod *corev1.Pod, ip string) bool {
	p := pod.Spec.Containers[0].ReadinessProbe
	if p == nil {
		return true
	}
	g := p.HTTPGet
	if g == nil || g.Port.IntValue() == 0 {
		return false
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the kubelet's prober does not verify
	resp, err := c.Get(scheme + "://" + net.JoinHostPort(ip, strconv.Itoa(g.Port.IntValue())) + g.Path)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}
