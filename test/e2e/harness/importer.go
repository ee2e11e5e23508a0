package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// CDI's own importer as the process of its importer pods.
//
// An importer pod whose IMPORTER_ENDPOINT names a host on the importer
// network (ImporterNetwork: a bridge on the test machine, whose host side
// the scenarios' servers listen on) runs the real cmd/cdi-importer of the
// CDI release the suite runs (hack/build-binaries.sh builds it unpatched),
// as a kubelet would run the pod's one container. Every other importer pod
// keeps the annotation stand-in (standins.go, ImporterAnnotation): their
// goldens name https://factory.talos.dev, which the suite never reaches.
//
// What the stand-in does for such a pod, from the pod spec the import
// controller wrote (pkg/controller/import-controller.go v1.65.0,
// makeImporterPodSpec, makeImporterContainerSpec, makeImportEnv,
// makeImporterVolumeSpec):
//   - a network namespace per pod (ip netns), with a veth on the bridge and
//     an address of the bridge's subnet: the pod IP written in its status,
//     which cdi-controller scrapes progress from (the container port
//     "metrics", 8443: controller-base.go updateProgressUsingPod), and on
//     which the importer's own metrics server listens. A restart keeps the
//     pod's namespace and address, as a pod sandbox does;
//   - per container start, a mount namespace (unshare --mount) whose root
//     is a tmpfs with the host's /usr, /etc, /var, /opt and the /bin, /lib
//     links, its own /proc, /sys, /tmp and a /dev of the usual character
//     devices, and the pod's volumes at the container's mount paths: a
//     claim's volume as the directory of its PersistentVolume
//     (<work dir>/volumes/<pv>: the data claim at /data, the scratch
//     claim at /scratch), a Secret or ConfigMap volume as one file per key
//     (the certConfigMap at /certs, each secretExtraHeaders Secret at
//     /extraheaders/<n>), an emptyDir as an empty directory. So the
//     importer's fixed paths are its own, and a path it was given no
//     volume for does not exist (the first pod of an import that needs
//     scratch space has no /scratch, so the importer asks for one);
//   - the container's environment from the spec: plain values, and
//     secretKeyRef/configMapKeyRef read from the API (the credentials of
//     source.http.secretRef); a missing Secret or key leaves the
//     container Waiting, CreateContainerConfigError, as the kubelet does;
//   - the termination message: /dev/termination-log is a file the stand-in
//     reads when the process exits (policy FallbackToLogsOnError: the log's
//     tail when the file is empty and the exit code is not 0), at most
//     4096 bytes;
//   - restartPolicy OnFailure: an exit code 0 ends the pod Succeeded; any
//     other ends the container Terminated (reason Error, the message) with
//     the pod Running, and after the kubelet's back-off, scaled down by
//     ImporterBackOffDivisor, starts it again with restartCount + 1 and
//     the previous state as lastState;
//   - a pod deleted (CDI deletes a finished or fatally failed importer, or
//     one that must restart with scratch space) has its process killed and
//     its network namespace removed;
//   - its own /etc/hosts (podHosts, hostclone.go: the pod, and the Services
//     backed by the stand-in's running pods) and, for a container with an
//     HTTP readiness probe, Ready only once the probe answers.
//
// The same runner runs CDI's cdi-cloner and cdi-uploadserver as the source
// and upload server pods of host-assisted clones (hostclone.go).
//
// Not honoured: block volumes (volumeDevices: the suite's classes are
// Filesystem), resource limits and OOM kills, the security context, init
// containers and the node-pull registry path (not used by an HTTP import),
// the CrashLoopBackOff waiting state between a failure and the restart
// (CDI ignores it: util.go setAnnotationsFromPodWithPrefix), and image
// pulls: the binary is the release's, run from the host.

// ImporterBackOffDivisor scales the kubelet's restart back-off (10 s,
// doubling, at most 300 s: pkg/kubelet/kubelet.go backOffPeriod,
// MaxContainerBackOff) down for the real importer's restarts: 2 s, 4 s,
// 8 s, ... at most 60 s.
const ImporterBackOffDivisor = 5

// importerBackOff is the wait before the restart after restarts restarts.
func importerBackOff(restarts int32) time.Duration {
	d := 10 * time.Second
	for i := int32(0); i < restarts && d < 300*time.Second; i++ {
		d *= 2
	}
	return min(d, 300*time.Second) / ImporterBackOffDivisor
}

// ImporterNetwork is the bridge the real importers' network namespaces are
// attached to.
type ImporterNetwork struct {
	// Bridge is the bridge's name, HostIP its address on the host side
	// (servers the importers reach listen there), Prefix the subnet's first
	// two octets.
	Bridge, HostIP, Prefix string

	mu   sync.Mutex
	next int
	// netns are the namespaces made, to remove at the end.
	netns map[string]bool
}

// ImporterNetwork returns the importer network, setting it up on the first
// call: a bridge named after the test process, with the first free 10.x/16
// of 10.200-10.249 on its host side.
func (cp *ControlPlane) ImporterNetwork() (*ImporterNetwork, error) {
	cp.importerNetMu.Lock()
	defer cp.importerNetMu.Unlock()
	if cp.importerNet != nil {
		return cp.importerNet, nil
	}
	used := map[string]bool{}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				ip := ipn.IP.To4()
				used[fmt.Sprintf("%d.%d", ip[0], ip[1])] = true
			}
		}
	}
	prefix := ""
	for i := 0; i < 50; i++ {
		p := fmt.Sprintf("10.%d", 200+(os.Getpid()+i)%50)
		if !used[p] {
			prefix = p
			break
		}
	}
	if prefix == "" {
		return nil, fmt.Errorf("no free 10.200-249.0.0/16 for the importer network")
	}
	n := &ImporterNetwork{Bridge: fmt.Sprintf("fwibr%x", os.Getpid()%0xfffff), HostIP: prefix + ".0.1", Prefix: prefix, next: 2, netns: map[string]bool{}}
	for _, args := range [][]string{
		{"link", "add", n.Bridge, "type", "bridge"},
		{"addr", "add", n.HostIP + "/16", "dev", n.Bridge},
		{"link", "set", n.Bridge, "up"},
	} {
		if err := ipCmd(args...); err != nil {
			_ = ipCmd("link", "del", n.Bridge)
			return nil, fmt.Errorf("cannot set up the importer network (the real importer needs root and iproute2): %w", err)
		}
	}
	cp.importerNet = n
	return n, nil
}

// importerNetwork is the importer network, nil until ImporterNetwork set
// it up.
func (cp *ControlPlane) importerNetwork() *ImporterNetwork {
	cp.importerNetMu.Lock()
	defer cp.importerNetMu.Unlock()
	return cp.importerNet
}

// close removes the network namespaces and the bridge.
func (n *ImporterNetwork) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ns := range n.netns {
		_ = ipCmd("netns", "del", ns)
	}
	_ = ipCmd("link", "del", n.Bridge)
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// sandbox makes a network namespace for pod uid and returns its name and
// the pod's address.
func (n *ImporterNetwork) sandbox(uid types.UID) (string, string, error) {
	sum := sha256.Sum256([]byte(uid))
	id := hex.EncodeToString(sum[:])[:8]
	ns, veth := "fwi-"+id, "fwv"+id
	n.mu.Lock()
	i := n.next
	n.next++
	n.netns[ns] = true
	n.mu.Unlock()
	ip := fmt.Sprintf("%s.%d.%d", n.Prefix, i/250, 2+i%250)
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"link", "set", veth, "master", n.Bridge, "up"},
		{"-n", ns, "addr", "add", ip + "/16", "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "route", "add", "default", "via", n.HostIP},
	} {
		if err := ipCmd(args...); err != nil {
			n.release(ns)
			return "", "", err
		}
	}
	return ns, ip, nil
}

func (n *ImporterNetwork) release(ns string) {
	_ = ipCmd("netns", "del", ns)
	n.mu.Lock()
	delete(n.netns, ns)
	n.mu.Unlock()
}

// onNetwork reports whether an importer pod's endpoint is on the importer
// network.
func (n *ImporterNetwork) onNetwork(pod *corev1.Pod) bool {
	if n == nil || len(pod.Spec.Containers) == 0 {
		return false
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.Name == "IMPORTER_ENDPOINT" {
			u, err := url.Parse(e.Value)
			return err == nil && u.Hostname() == n.HostIP
		}
	}
	return false
}

// importerRun is the real importer of one pod.
type importerRun struct {
	pod      types.UID
	key      string
	netns    string
	ip       string
	dir      string
	restarts int32
	started  metav1.Time

	cmd  *exec.Cmd
	done chan struct{}
	// set before done is closed
	exitCode   int32
	finishedAt metav1.Time
	// last is the container's termination, once reported; prev the one
	// before the current start (its lastState).
	last, prev *corev1.ContainerStateTerminated
	// waiting is why the container cannot be created, while it cannot.
	waiting string
	// final: the pod ended Succeeded.
	final bool
	// ready: the container's readiness probe answered since its start
	// (always, for a container without one).
	ready bool
	// termLog is the file bound at /dev/termination-log, logPath the
	// container's log, of the last start.
	termLog, logPath string
}

func (r *importerRun) exited() bool {
	if r.cmd == nil {
		return false
	}
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *importerRun) kill() {
	if r.cmd != nil && !r.exited() {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
}

// realImporter plays the kubelet for a pod the stand-in runs a real CDI
// program for (podProgramFor): an importer pod on the importer network, or
// the source or target pod of a host-assisted clone into a namespace of
// RunHostAssistedCopies.
func (s *standIns) realImporter(ctx context.Context, pod *corev1.Pod) {
	key := "pod/" + pod.Namespace + "/" + pod.Name
	r := s.importers[pod.UID]
	if r == nil {
		ns, ip, err := s.cp.importerNetwork().sandbox(pod.UID)
		if err != nil {
			s.logf(key, "kubelet: pod %s/%s: cannot make its network namespace: %v", pod.Namespace, pod.Name, err)
			return
		}
		r = &importerRun{pod: pod.UID, key: key, netns: ns, ip: ip, dir: filepath.Join(s.cp.WorkDir, "pods", string(pod.UID))}
		s.importers[pod.UID] = r
		s.logf(key, "kubelet: pod %s/%s: sandbox %s, IP %s", pod.Namespace, pod.Name, ns, ip)
	}
	switch {
	case r.final:
		return
	case r.cmd == nil || (r.exited() && r.last != nil && r.exitCode != 0 && time.Since(r.finishedAt.Time) >= importerBackOff(r.restarts)):
		attempt := r.restarts
		if r.cmd != nil {
			attempt++
		}
		if err := s.startImporter(ctx, pod, r, attempt); err != nil {
			if r.waiting != err.Error() {
				r.waiting = err.Error()
				s.containerWaiting(ctx, pod, r, "CreateContainerConfigError", err.Error())
			}
			return
		}
		r.waiting = ""
		s.importerStatus(ctx, pod, r, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: r.started}})
	case !r.exited():
		// The kubelet's readiness probe (the upload server's HTTPS GET
		// /healthz on 8443; upload-controller.go makeUploadPodContainers):
		// the container is Ready once it answers, as a prober that does
		// not verify the certificate does (pkg/probe/http).
		if !r.ready && readinessAnswers(pod, r.ip) {
			r.ready = true
			s.importerStatus(ctx, pod, r, corev1.PodRunning, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: r.started}})
		}
		return
	case r.last == nil:
		term := &corev1.ContainerStateTerminated{ExitCode: r.exitCode, Reason: "Completed", Message: r.terminationMessage(), StartedAt: r.started, FinishedAt: r.finishedAt}
		phase := corev1.PodSucceeded
		if r.exitCode != 0 {
			term.Reason = "Error"
			phase = corev1.PodRunning // OnFailure: the kubelet restarts it
		}
		if !s.importerStatus(ctx, pod, r, phase, corev1.ContainerState{Terminated: term}) {
			return
		}
		r.last = term
		if r.exitCode == 0 {
			r.final = true
			s.cp.importerNetwork().release(r.netns)
		}
	}
}

// startImporter starts the container of pod once more.
func (s *standIns) startImporter(ctx context.Context, pod *corev1.Pod, r *importerRun, attempt int32) error {
	c := pod.Spec.Containers[0]
	prog := s.podProgramFor(pod)
	env, err := s.containerEnv(ctx, pod.Namespace, c)
	if err != nil {
		return err
	}
	run := filepath.Join(r.dir, fmt.Sprintf("run-%d", attempt))
	if err := os.MkdirAll(filepath.Join(run, "root"), 0o755); err != nil {
		return err
	}
	mounts, err := s.podMounts(ctx, pod, c, r)
	if err != nil {
		return err
	}
	hosts := filepath.Join(run, "hosts")
	if err := os.WriteFile(hosts, []byte(s.podHosts(ctx, pod, r.ip)), 0o644); err != nil {
		return err
	}
	mounts = append(mounts, hosts+" /etc/hosts")
	for _, b := range prog.binds {
		mounts = append(mounts, b[0]+" "+b[1])
	}
	over := filepath.Join(run, "over")
	if err := overlayPlaceholders(over, mounts); err != nil {
		return err
	}
	termLog := filepath.Join(run, "termination-log")
	if err := os.WriteFile(termLog, nil, 0o666); err != nil {
		return err
	}
	mountsFile := filepath.Join(run, "mounts")
	if err := os.WriteFile(mountsFile, []byte(strings.Join(mounts, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	script := filepath.Join(run, "launch.sh")
	if err := os.WriteFile(script, []byte(launchScript), 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(s.cp.LogDir, fmt.Sprintf("%s-%s-%s-%s-%d.log", prog.component, pod.Namespace, pod.Name, string(pod.UID)[:8], attempt))
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	command := prog.command
	if len(c.Command) > 0 {
		command = c.Command
	}
	args := append(append([]string{"netns", "exec", r.netns, "unshare", "--mount", "--propagation", "private", "--", "/bin/sh", script, filepath.Join(run, "root"), termLog, mountsFile, over}, command...), c.Args...)
	cmd := exec.Command("ip", args...)
	cmd.Env = append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=" + pod.Name}, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	_, _ = fmt.Fprintf(logFile, "# %s (restart %d) in %s, IP %s\n", c.Name, attempt, r.netns, r.ip)
	started := make(chan error)
	spawner() <- func() { started <- cmd.Start() }
	if err := <-started; err != nil {
		_ = logFile.Close()
		return fmt.Errorf("cannot start %s: %w", prog.component, err)
	}
	if r.cmd != nil && r.last != nil {
		r.prev = r.last
	}
	r.cmd, r.done, r.started, r.last, r.restarts = cmd, make(chan struct{}), metav1.Now(), nil, attempt
	r.ready = c.ReadinessProbe == nil
	r.termLog, r.logPath = termLog, logPath
	go func(done chan struct{}) {
		err := cmd.Wait()
		_ = logFile.Close()
		code := int32(0)
		if err != nil {
			code = 1
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
				code = int32(ee.ExitCode())
			}
		}
		r.exitCode, r.finishedAt = code, metav1.Now()
		close(done)
	}(r.done)
	s.logf(r.key, "kubelet: pod %s/%s: %s started (restart %d, log %s)", pod.Namespace, pod.Name, prog.component, attempt, filepath.Base(logPath))
	return nil
}

// launchScript assembles the container's root in the new mount namespace
// and runs the container's command in it: launch.sh ROOT TERMLOG MOUNTS
// OVER COMMAND ARGS..., MOUNTS holding "source target" lines (the pod's
// volumes, its /etc/hosts and the program's binaries). The host's /usr,
// /etc, /var and /opt are bound into the root as they are, except one that
// a target lies under: that one is a read-only overlay of OVER/<dir>, which
// holds an empty file or directory for each such target, on the host's, so
// the target exists to bind onto and nothing is created on the host.
const launchScript = `set -eu
root=$1 termlog=$2 mounts=$3 over=$4
shift 4
mount -t tmpfs -o mode=0755 rootfs "$root"
for d in usr etc var opt; do
  if [ -d "/$d" ] && [ ! -L "/$d" ]; then
    mkdir -p "$root/$d"
    if [ -d "$over/$d" ]; then mount -t overlay overlay -o "lowerdir=$over/$d:/$d" "$root/$d"; else mount --rbind "/$d" "$root/$d"; fi
  fi
done
for l in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$l" ]; then cp -P "/$l" "$root/$l"; elif [ -d "/$l" ]; then mkdir -p "$root/$l"; mount --rbind "/$l" "$root/$l"; fi
done
mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount -t tmpfs -o mode=0755 dev "$root/dev"
for n in null zero full random urandom tty; do touch "$root/dev/$n"; mount --bind "/dev/$n" "$root/dev/$n"; done
ln -s /proc/self/fd "$root/dev/fd"
mkdir -p "$root/dev/shm"
mount -t tmpfs -o mode=1777 tmp "$root/tmp"
touch "$root/dev/termination-log"
mount --bind "$termlog" "$root/dev/termination-log"
while read -r src dst; do
  [ -n "$src" ] || continue
  if [ ! -e "$root$dst" ]; then
    if [ -d "$src" ]; then mkdir -p "$root$dst"; else mkdir -p "$(dirname "$root$dst")"; touch "$root$dst"; fi
  fi
  mount --bind "$src" "$root$dst"
done < "$mounts"
exec chroot "$root" "$@"
`

// hostDirs are the host directories the launch script binds into a
// container's root.
var hostDirs = []string{"usr", "etc", "var", "opt"}

// overlayPlaceholders makes, under over/<dir>, an empty file or directory
// for each mount target that lies under one of hostDirs (see
// launchScript).
func overlayPlaceholders(over string, mounts []string) error {
	for _, m := range mounts {
		src, dst, ok := strings.Cut(m, " ")
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(strings.TrimPrefix(dst, "/"), "/")
		if !slices.Contains(hostDirs, top) {
			continue
		}
		p := filepath.Join(over, filepath.Clean(dst))
		if st, err := os.Stat(src); err == nil && st.IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// containerEnv is the container's environment as the kubelet makes it.
func (s *standIns) containerEnv(ctx context.Context, ns string, c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if f := e.ValueFrom; f != nil {
			switch {
			case f.SecretKeyRef != nil:
				sec, err := s.cp.Kube.CoreV1().Secrets(ns).Get(ctx, f.SecretKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					if apierrors.IsNotFound(err) {
						return nil, fmt.Errorf("secret %q not found", f.SecretKeyRef.Name)
					}
					return nil, err
				}
				b, ok := sec.Data[f.SecretKeyRef.Key]
				if !ok {
					return nil, fmt.Errorf("couldn't find key %s in Secret %s/%s", f.SecretKeyRef.Key, ns, f.SecretKeyRef.Name)
				}
				v = string(b)
			case f.ConfigMapKeyRef != nil:
				cm, err := s.cp.Kube.CoreV1().ConfigMaps(ns).Get(ctx, f.ConfigMapKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					if apierrors.IsNotFound(err) {
						return nil, fmt.Errorf("configmap %q not found", f.ConfigMapKeyRef.Name)
					}
					return nil, err
				}
				d, ok := cm.Data[f.ConfigMapKeyRef.Key]
				if !ok {
					return nil, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", f.ConfigMapKeyRef.Key, ns, f.ConfigMapKeyRef.Name)
				}
				v = d
			default:
				return nil, fmt.Errorf("env %s: only secretKeyRef and configMapKeyRef are honoured by the stand-in", e.Name)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// podMounts materialises the volumes the container mounts and returns
// "source target" lines.
func (s *standIns) podMounts(ctx context.Context, pod *corev1.Pod, c corev1.Container, r *importerRun) ([]string, error) {
	if len(c.VolumeDevices) > 0 {
		return nil, fmt.Errorf("block volumes (volumeDevices) are not honoured by the importer stand-in")
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	var lines []string
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			return nil, fmt.Errorf("volume %s is not in the pod", m.Name)
		}
		var src string
		switch {
		case v.PersistentVolumeClaim != nil:
			pvc, err := s.cp.Kube.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			if pvc.Spec.VolumeName == "" {
				return nil, fmt.Errorf("PVC %s is not bound", pvc.Name)
			}
			src = PVDir(s.cp.WorkDir, pvc.Spec.VolumeName)
			if err := os.MkdirAll(src, 0o777); err != nil {
				return nil, err
			}
		case v.Secret != nil:
			sec, err := s.cp.Kube.CoreV1().Secrets(pod.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("secret %q not found", v.Secret.SecretName)
				}
				return nil, err
			}
			files := map[string][]byte{}
			for k, b := range sec.Data {
				files[k] = b
			}
			if src, err = writeVolume(filepath.Join(r.dir, "volumes", m.Name), files); err != nil {
				return nil, err
			}
		case v.ConfigMap != nil:
			cm, err := s.cp.Kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("configmap %q not found", v.ConfigMap.Name)
				}
				return nil, err
			}
			files := map[string][]byte{}
			for k, d := range cm.Data {
				files[k] = []byte(d)
			}
			for k, b := range cm.BinaryData {
				files[k] = b
			}
			if src, err = writeVolume(filepath.Join(r.dir, "volumes", m.Name), files); err != nil {
				return nil, err
			}
		case v.EmptyDir != nil:
			src = filepath.Join(r.dir, "volumes", m.Name)
			if err := os.MkdirAll(src, 0o777); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("volume %s: only claims, Secrets, ConfigMaps and emptyDirs are honoured by the stand-in", m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, m.SubPath)
		}
		lines = append(lines, src+" "+m.MountPath)
	}
	sort.Strings(lines)
	return lines, nil
}

// writeVolume writes files, one per key, into a fresh dir (the kubelet's
// atomic writer publishes a new set the same way).
func writeVolume(dir string, files map[string][]byte) (string, error) {
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for k, b := range files {
		if err := os.WriteFile(filepath.Join(dir, k), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// PVDir is the directory that backs PersistentVolume pv for the real
// importer.
func PVDir(workDir, pv string) string { return filepath.Join(workDir, "volumes", pv) }

// terminationMessage is what the kubelet reports as the container's
// termination message (pkg/kubelet/kuberuntime, at most 4096 bytes;
// FallbackToLogsOnError: the log's last 80 lines when the file is empty and
// the container failed).
func (r *importerRun) terminationMessage() string {
	b, _ := os.ReadFile(r.termLog)
	if len(b) == 0 && r.exitCode != 0 {
		log, _ := os.ReadFile(r.logPath)
		lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
		if len(lines) > 80 {
			lines = lines[len(lines)-80:]
		}
		b = []byte(strings.Join(lines, "\n"))
		if len(b) > 2048 {
			b = b[len(b)-2048:]
		}
	}
	if len(b) > 4096 {
		b = b[:4096]
	}
	return string(b)
}

// importerStatus writes the pod's status with the container in state.
func (s *standIns) importerStatus(ctx context.Context, pod *corev1.Pod, r *importerRun, phase corev1.PodPhase, state corev1.ContainerState) bool {
	c := pod.Spec.Containers[0]
	pod = pod.DeepCopy()
	now := metav1.Now()
	pod.Status.Phase = phase
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	pod.Status.HostIP, pod.Status.PodIP = s.cp.importerNetwork().HostIP, r.ip
	pod.Status.HostIPs = []corev1.HostIP{{IP: s.cp.importerNetwork().HostIP}}
	pod.Status.PodIPs = []corev1.PodIP{{IP: r.ip}}
	readyCond := corev1.ConditionFalse
	ready := state.Running != nil && r.ready
	if ready {
		readyCond = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}, {Type: corev1.PodReady, Status: readyCond, LastTransitionTime: now}}
	cs := corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: "e2e://" + s.podProgramFor(pod).binds[0][0], Ready: ready, Started: ptrTo(state.Running != nil),
		RestartCount: r.restarts, State: state,
	}
	if r.prev != nil {
		cs.LastTerminationState = corev1.ContainerState{Terminated: r.prev}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	if _, err := s.cp.Kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		s.logf(r.key, "kubelet: cannot write the status of pod %s/%s (retrying): %v", pod.Namespace, pod.Name, err)
		return false
	}
	what := "Running"
	if ready {
		what = "Running and Ready"
	}
	if t := state.Terminated; t != nil {
		what = fmt.Sprintf("%s, container exited %d (%s), termination message %s", phase, t.ExitCode, t.Reason, strconv.Quote(t.Message))
	}
	s.logf(r.key, "kubelet: pod %s/%s %s, restartCount %d, podIP %s", pod.Namespace, pod.Name, what, r.restarts, r.ip)
	return true
}

// containerWaiting reports the container waiting for reason: the pod
// Pending before its first start, Running after (a restart the kubelet
// cannot make keeps the phase).
func (s *standIns) containerWaiting(ctx context.Context, pod *corev1.Pod, r *importerRun, reason, message string) {
	phase := corev1.PodPending
	if r.cmd != nil {
		phase = corev1.PodRunning
	}
	s.importerStatus(ctx, pod, r, phase, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
}

// reapImporters kills the importers of pods that are gone (or being
// deleted) and removes their network namespaces.
func (s *standIns) reapImporters(live map[types.UID]bool) {
	for uid, r := range s.importers {
		if live[uid] {
			continue
		}
		r.kill()
		if !r.final {
			s.cp.importerNetwork().release(r.netns)
		}
		s.logf(r.key, "kubelet: %s gone; its container stopped, sandbox %s removed", strings.TrimPrefix(r.key, "pod/"), r.netns)
		delete(s.importers, uid)
	}
}

// stopImporters kills every importer (the control plane stops).
func (s *standIns) stopImporters() {
	for _, r := range s.importers {
		r.kill()
	}
	if n := s.cp.importerNetwork(); n != nil {
		n.close()
	}
}
