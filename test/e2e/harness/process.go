package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one control-plane process started by the suite. Its stdout and
// stderr go to a log file that is kept when the run fails. A process can be
// killed and started again with the same command line (Restart), which is
// how the chaos scenarios (chaos.go) fault a component: the Process value
// every holder keeps stays the same, only its incarnation changes.
type Process struct {
	Name    string
	LogPath string

	bin       string
	args, env []string
	// metrics is the URL of its Prometheus metrics, when it serves them.
	metrics string
	// ready, when set by the starter, proves a new incarnation serves
	// (the same probe its start waited for).
	ready func(context.Context) error

	mu  sync.Mutex
	cur *incarnation
	// restarting is set while Restart has killed the process and not yet
	// started it again, so that Healthy does not report a planned kill as
	// a crash.
	restarting bool
	restarts   int
	// supervised makes an exit on the process's own a crash the harness
	// restarts, as the kubelet restarts a pod's container
	// (restartPolicy: Always); crashes records when each happened.
	supervised bool
	stopping   bool
	crashes    []time.Time
}

// crashBackOff is how long a supervised process stays down after it exits
// on its own: the kubelet's first container restart back-off
// (k8s.io/kubernetes v1.35.0 pkg/kubelet/kubelet.go, backOffPeriod, which
// doubles on each further crash).
const crashBackOff = 10 * time.Second

// incarnation is one run of a Process's command.
type incarnation struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	err     error // set before done is closed
}

// spawner starts every child from one OS thread that never exits. The
// children carry Pdeathsig, which Linux delivers when the thread that forked
// them exits: pinning that thread means the children die exactly when the
// test binary dies, even if it is killed with SIGKILL and no cleanup runs.
var spawner = sync.OnceValue(func() chan func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread()
		for f := range ch {
			f()
		}
	}()
	return ch
})

// StartProcess starts bin with args and env (added to the suite's own
// environment), logging to logDir/<name>.log.
func StartProcess(logDir, name, bin string, args, env []string) (*Process, error) {
	p := &Process{Name: name, LogPath: filepath.Join(logDir, name+".log"), bin: bin, args: args, env: env}
	if err := p.start(os.O_CREATE | os.O_TRUNC | os.O_WRONLY); err != nil {
		return nil, err
	}
	return p, nil
}

// start runs a new incarnation, opening the log with flags (truncating on
// the first start, appending on a restart).
func (p *Process) start(flags int) error {
	logFile, err := os.OpenFile(p.LogPath, flags, 0o644)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(logFile, "# %s %s %s\n", time.Now().UTC().Format(time.RFC3339Nano), p.bin, strings.Join(p.args, " "))

	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}

	started := make(chan error)
	spawner() <- func() { started <- cmd.Start() }
	if err := <-started; err != nil {
		_ = logFile.Close()
		return fmt.Errorf("cannot start %s: %w", p.Name, err)
	}
	in := &incarnation{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	p.mu.Lock()
	p.cur = in
	p.mu.Unlock()
	go func() {
		in.err = cmd.Wait()
		_ = logFile.Close()
		close(in.done)
		p.exited(in)
	}()
	return nil
}

// exited restarts a supervised process that exited on its own, after
// crashBackOff, appending to its log.
func (p *Process) exited(in *incarnation) {
	p.mu.Lock()
	if !p.supervised || p.stopping || p.restarting || p.cur != in {
		p.mu.Unlock()
		return
	}
	p.restarting = true
	p.crashes = append(p.crashes, time.Now())
	p.mu.Unlock()
	time.Sleep(crashBackOff)
	// If it cannot start, nothing runs and Healthy reports the exit.
	_ = p.start(os.O_APPEND | os.O_WRONLY)
	p.mu.Lock()
	p.restarting = false
	p.mu.Unlock()
}

// Supervise turns the kubelet's restart of an exited container on or off
// for p: while on, an exit of p's own is restarted after crashBackOff and
// recorded (Crashes) instead of failing Healthy. The chaos scenarios turn
// it on: a component that exits when another is restarted (CDI's
// controller when it loses its leader lease during an apiserver outage)
// is, in a cluster, restarted by the kubelet.
func (p *Process) Supervise(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.supervised = on
}

// Crashes returns when p exited on its own while supervised.
func (p *Process) Crashes() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.crashes...)
}

func (p *Process) current() *incarnation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Exited reports whether the process has exited, and how. A process
// Restart is bringing back has not exited.
func (p *Process) Exited() (bool, error) {
	p.mu.Lock()
	in, restarting := p.cur, p.restarting
	p.mu.Unlock()
	if restarting {
		return false, nil
	}
	select {
	case <-in.done:
		return true, in.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, and SIGKILL if it has not exited
// within grace.
func (p *Process) Stop(grace time.Duration) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	in := p.current()
	select {
	case <-in.done:
		return
	default:
	}
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-in.done:
	case <-time.After(grace):
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
		<-in.done
	}
}

// Restart kills the process group with SIGKILL, as a crash or an OOM kill
// would (no graceful shutdown: leases are not released, in-flight requests
// are cut), waits down, starts the same command again, appending to the same
// log, and waits until the new incarnation passes the start's probe.
func (p *Process) Restart(ctx context.Context, down time.Duration) error {
	p.mu.Lock()
	in := p.cur
	p.restarting = true
	p.restarts++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.restarting = false
		p.mu.Unlock()
	}()
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	<-in.done
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	if err := p.start(os.O_APPEND | os.O_WRONLY); err != nil {
		return err
	}
	p.mu.Lock()
	p.restarting = false
	p.mu.Unlock()
	if p.ready == nil {
		return nil
	}
	if err := p.ready(ctx); err != nil {
		return fmt.Errorf("%s did not come back after a restart: %w", p.Name, err)
	}
	return nil
}

// Restarts is how many times Restart has run.
func (p *Process) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// StartedAt is when the current incarnation started.
func (p *Process) StartedAt() time.Time { return p.current().started }

// Pid is the process id of the current incarnation.
func (p *Process) Pid() int { return p.current().cmd.Process.Pid }

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogPath, err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// FreeLoopbackPorts returns n distinct TCP ports that were free on 127.0.0.1
// when asked. They are held until all n are chosen so that no two collide.
func FreeLoopbackPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
