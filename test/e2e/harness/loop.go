package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// loop runs a set of stand-ins as one goroutine of the test binary. It
// polls rather than watches: the cluster holds a few dozen objects, and a
// poll every 300 ms keeps the stand-ins simple and their reactions well
// under the scenarios' bounds. Each step of a round gets at most 20 s.
type loop struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	log *os.File
	// acted remembers the last log line per object, so that a repeated
	// failure is logged once.
	acted map[string]string
}

// newLoop creates logDir/logName for a loop that start runs.
func newLoop(logDir, logName string) (*loop, error) {
	f, err := os.Create(filepath.Join(logDir, logName))
	if err != nil {
		return nil, err
	}
	return &loop{done: make(chan struct{}), log: f, acted: map[string]string{}}, nil
}

// start runs steps, in order, every 300 ms until stop.
func (l *loop) start(steps ...func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() {
		defer close(l.done)
		for {
			for _, step := range steps {
				s, cancel := context.WithTimeout(ctx, 20*time.Second)
				step(s)
				cancel()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
}

func (l *loop) stop() {
	l.cancel()
	<-l.done
	_ = l.log.Close()
}

// logf logs a line for key, once until the line for key changes.
func (l *loop) logf(key, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.acted[key] == line {
		return
	}
	l.acted[key] = line
	_, _ = fmt.Fprintf(l.log, "%s %s\n", time.Now().Format("15:04:05.000"), line)
}
