package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// pollEvery is how often the wait helpers look again.
const pollEvery = 250 * time.Millisecond

// Eventually polls check until it returns nil. It fails the test, naming
// what it waited for and the last thing check saw, when timeout passes
// first or when a control-plane process exits meanwhile. A wait never ends
// quietly: either the expectation is met or the test fails.
func (cp *ControlPlane) Eventually(t testing.TB, timeout time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if err := cp.Healthy(); err != nil {
			t.Fatalf("while waiting for %s: %v", what, err)
		}
		// Each check gets its own short deadline, independent of the
		// wait's, so that one hung request cannot eat the whole budget and
		// the last observation reported is a real one, not a cancellation.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		last := check(ctx)
		cancel()
		if last == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not met within %s; last observation: %v", what, timeout, last)
		}
		time.Sleep(pollEvery)
	}
}

// Consistently checks, for the whole of d, that check keeps returning nil,
// and fails the test on the first observation that it does not. Use it only
// after something proves the system had the chance to act (for example a
// condition the function set), so that it asserts "did not change" rather
// than "was too slow to change".
func (cp *ControlPlane) Consistently(t testing.TB, d time.Duration, what string, check func(ctx context.Context) error) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if err := cp.Healthy(); err != nil {
			t.Fatalf("while checking that %s: %v", what, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := check(ctx)
		cancel()
		if err != nil {
			t.Fatalf("expected that %s for %s, but: %v", what, d, err)
		}
		time.Sleep(pollEvery)
	}
}

// MustGet returns the object or fails the test if it is missing.
func (cp *ControlPlane) MustGet(t testing.TB, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := cp.Get(ctx, gvk, ns, name)
	if err != nil {
		t.Fatalf("cannot get %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	if u == nil {
		t.Fatalf("%s %s/%s does not exist", gvk.Kind, ns, name)
	}
	return u
}

// MustApply applies objs or fails the test.
func (cp *ControlPlane) MustApply(t testing.TB, objs ...*unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.Apply(ctx, objs...); err != nil {
		t.Fatal(err)
	}
}

// MustDelete deletes the object or fails the test.
func (cp *ControlPlane) MustDelete(t testing.TB, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.Delete(ctx, gvk, ns, name); err != nil {
		t.Fatalf("cannot delete %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
}

// WaitCondition waits until the object's condition typ has status and a
// message containing every one of contains.
func (cp *ControlPlane) WaitCondition(t testing.TB, timeout time.Duration, gvk schema.GroupVersionKind, ns, name, typ, status string, contains ...string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	what := fmt.Sprintf("%s %s to have condition %s=%s", gvk.Kind, joinName(ns, name), typ, status)
	if len(contains) > 0 {
		what += fmt.Sprintf(" with a message containing %q", contains)
	}
	cp.Eventually(t, timeout, what, func(ctx context.Context) error {
		u, err := cp.Get(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("%s does not exist", joinName(ns, name))
		}
		c := Condition(u, typ)
		msg, _ := c["message"].(string)
		met := c != nil && c["status"] == status
		for _, s := range contains {
			met = met && strings.Contains(msg, s)
		}
		if !met {
			return fmt.Errorf("conditions are %s; %s", ConditionsString(u), cp.lastEvents(ctx, u, 3))
		}
		got = u
		return nil
	})
	return got
}

// WaitExists waits until the object exists and returns it.
func (cp *ControlPlane) WaitExists(t testing.TB, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	cp.Eventually(t, timeout, fmt.Sprintf("%s %s to exist", gvk.Kind, joinName(ns, name)), func(ctx context.Context) error {
		u, err := cp.Get(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if u == nil {
			return fmt.Errorf("not found")
		}
		got = u
		return nil
	})
	return got
}

// WaitGone waits until the object no longer exists.
func (cp *ControlPlane) WaitGone(t testing.TB, timeout time.Duration, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	cp.Eventually(t, timeout, fmt.Sprintf("%s %s to be deleted", gvk.Kind, joinName(ns, name)), func(ctx context.Context) error {
		u, err := cp.Get(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if u != nil {
			return fmt.Errorf("still exists (deletionTimestamp %v, finalizers %v, owners %v)", u.GetDeletionTimestamp(), u.GetFinalizers(), ownerNames(u))
		}
		return nil
	})
}

// Events returns the events recorded for obj, least recently seen first.
func (cp *ControlPlane) Events(ctx context.Context, obj *unstructured.Unstructured) ([]corev1.Event, error) {
	l, err := cp.Kube.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(obj.GetUID())})
	if err != nil {
		return nil, err
	}
	ev := l.Items
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].LastTimestamp.Before(&ev[j].LastTimestamp) })
	return ev, nil
}

// lastEvents summarises the newest n events of obj, for failure messages:
// Crossplane reports what it could not do (an invalid status, an
// unreachable function) in events, not in conditions.
func (cp *ControlPlane) lastEvents(ctx context.Context, obj *unstructured.Unstructured, n int) string {
	ev, err := cp.Events(ctx, obj)
	if err != nil {
		return fmt.Sprintf("cannot list events: %v", err)
	}
	if len(ev) > n {
		ev = ev[len(ev)-n:]
	}
	parts := make([]string, 0, len(ev))
	for _, e := range ev {
		parts = append(parts, fmt.Sprintf("%s %s (x%d): %s", e.Type, e.Reason, e.Count, e.Message))
	}
	if len(parts) == 0 {
		return "no events"
	}
	return "latest events: " + strings.Join(parts, " | ")
}

// WaitEvent waits until obj has an event of type typ whose message contains
// every one of contains, and returns it.
func (cp *ControlPlane) WaitEvent(t testing.TB, timeout time.Duration, obj *unstructured.Unstructured, typ string, contains ...string) corev1.Event {
	t.Helper()
	var got corev1.Event
	cp.Eventually(t, timeout, fmt.Sprintf("a %s event on %s %s containing %q", typ, obj.GetKind(), joinName(obj.GetNamespace(), obj.GetName()), contains), func(ctx context.Context) error {
		ev, err := cp.Events(ctx, obj)
		if err != nil {
			return err
		}
		var seen []string
	next:
		for _, e := range ev {
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Message)
			if e.Type != typ {
				continue
			}
			for _, s := range contains {
				if !strings.Contains(e.Message, s) {
					continue next
				}
			}
			got = e
			return nil
		}
		// client-go's event sink drops an object's events once it has
		// emitted 25 from one source and refills one token every five
		// minutes (k8s.io/client-go tools/record events_cache.go,
		// EventSourceObjectSpamFilter). A composite whose resources are
		// not ready yet gets a "Composed resource ... is not yet ready"
		// event from Crossplane on every reconcile, and real CDI makes for
		// many reconciles, so a function result can be recorded by
		// Crossplane and still never reach the API. Crossplane's
		// recorder logs every event it records (crossplane.events), so
		// that log is the proof that the function's result became one.
		if line := cp.recordedEvent(obj, typ, contains); line != "" {
			got = corev1.Event{Type: typ, Message: line}
			t.Logf("event %q on %s %s was recorded by Crossplane but dropped by client-go's spam filter before the API (%d events there)", contains, obj.GetKind(), obj.GetName(), len(ev))
			return nil
		}
		return fmt.Errorf("events so far: %q", seen)
	})
	return got
}

// recordedEvent returns the line of Crossplane's log in which its event
// recorder recorded an event of type typ on obj whose message contains
// every string in contains, or "".
func (cp *ControlPlane) recordedEvent(obj *unstructured.Unstructured, typ string, contains []string) string {
	b, err := os.ReadFile(filepath.Join(cp.LogDir, "crossplane.log"))
	if err != nil {
		return ""
	}
	object := fmt.Sprintf(`"kind":%q,"name":%q`, obj.GetKind(), obj.GetName())
	typed := fmt.Sprintf(`"type": %q`, typ)
next:
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, "crossplane.events") || !strings.Contains(line, object) || !strings.Contains(line, typed) {
			continue
		}
		for _, c := range contains {
			if !strings.Contains(line, c) {
				continue next
			}
		}
		return line
	}
	return ""
}

func joinName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func ownerNames(u *unstructured.Unstructured) []string {
	var out []string
	for _, o := range u.GetOwnerReferences() {
		out = append(out, o.Kind+"/"+o.Name)
	}
	return out
}
