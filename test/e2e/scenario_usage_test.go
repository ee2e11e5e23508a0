package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cozystack/function-worker-image/test/e2e/harness"
)

// usageNamespace holds the Usage scenarios' objects. It is never deleted:
// the namespace controller's deletes of a still-protected object would be
// refused and leave it Terminating, which proves nothing.
const usageNamespace = "e2e-usage"

// These scenarios prove that Crossplane's Usages are enforced by the real
// kube-apiserver through Crossplane's nousages webhook, independently of the
// function. The behaviour asserted is Crossplane v2.2.0's:
//   - the usage controller labels the used (spec.of) object
//     crossplane.io/in-use=true and owns the Usage by the using (spec.by)
//     object (internal/controller/protection/usage/reconciler.go);
//   - the webhook refuses the DELETE of a labelled object while a Usage of
//     it exists, whoever sends it, and records the refused propagation
//     policy in an annotation (internal/webhook/protection/usage/handler.go);
//   - a Usage that goes (not composed, so it does not wait for its user)
//     removes the label and, with replayDeletion, re-issues the refused
//     delete about 2 s later (reconciler.go).

// TestUsageRefusesDeletion: a Usage of ConfigMap A by ConfigMap B makes the
// apiserver refuse the deletion of A with the webhook's message; once B is
// deleted, the garbage collector removes the Usage (B owns it) and the
// Usage's replayDeletion deletes A.
func TestUsageRefusesDeletion(t *testing.T) {
	const ns, usedName, userName, usageName = usageNamespace, "used-a", "user-b", "used-a-by-user-b"
	ensureNamespace(t, ns)
	used, user := configMap(ns, usedName, nil), configMap(ns, userName, nil)
	usage := usageOf(ns, usageName, usedName, "by:\n    apiVersion: v1\n    kind: ConfigMap\n    resourceRef:\n      name: "+userName)
	cleanupUsage(t, usage, used, user)
	cp.MustApply(t, used, user, usage)

	userObj := cp.WaitExists(t, reconcileTimeout, harness.ConfigMap, ns, userName)
	waitUsageEnforced(t, ns, usageName, usedName, string(userObj.GetUID()))

	err := deleteConfigMap(ns, usedName)
	wantDenied(t, err, ns, usedName,
		fmt.Sprintf("%q (in namespace %q) by resource ConfigMap/%s", usageName, ns, userName))
	a := cp.MustGet(t, harness.ConfigMap, ns, usedName)
	if a.GetDeletionTimestamp() != nil {
		t.Fatalf("ConfigMap %s/%s is being deleted although its delete was refused", ns, usedName)
	}
	// The webhook records the refused delete's policy; cp.Delete sends
	// Background. This is what replayDeletion replays.
	if got := a.GetAnnotations()[harness.DeletionAttemptAnnotation]; got != "Background" {
		t.Fatalf("ConfigMap %s/%s has annotation %s=%q after the refused delete, want \"Background\"; annotations: %v", ns, usedName, harness.DeletionAttemptAnnotation, got, a.GetAnnotations())
	}

	// The user goes: B owns the Usage, so the garbage collector deletes the
	// Usage, whose controller takes the label off A and replays A's delete.
	cp.MustDelete(t, harness.ConfigMap, ns, userName)
	cp.WaitGone(t, reconcileTimeout, harness.ConfigMap, ns, userName)
	cp.WaitGone(t, gcTimeout, harness.Usage, ns, usageName)
	cp.WaitGone(t, reconcileTimeout, harness.ConfigMap, ns, usedName)
}

// TestUsageRefusesGarbageCollection: ConfigMap C is owned by ConfigMap D and
// protected by a Usage. Deleting D makes the garbage collector delete C,
// which the webhook refuses, so C survives as long as the Usage exists;
// once the Usage is deleted, C goes: the usage controller removes the in-use
// label, after which either the collector's next retry (it requeues a
// failed delete with back-off) or the Usage's replay of the recorded delete
// succeeds, whichever comes first. replayDeletion bounds the wait whatever
// the collector's back-off has grown to.
func TestUsageRefusesGarbageCollection(t *testing.T) {
	const ns, ownedName, ownerName, usageName = usageNamespace, "owned-c", "owner-d", "owned-c-protected"
	ensureNamespace(t, ns)
	owner := configMap(ns, ownerName, nil)
	cp.MustApply(t, owner)
	ownerObj := cp.WaitExists(t, reconcileTimeout, harness.ConfigMap, ns, ownerName)
	owned := configMap(ns, ownedName, ownerObj)
	usage := usageOf(ns, usageName, ownedName, "reason: e2e proves the garbage collector cannot delete it")
	cleanupUsage(t, usage, owned, owner)
	cp.MustApply(t, owned, usage)
	waitUsageEnforced(t, ns, usageName, ownedName, "")
	ownedUID := string(cp.MustGet(t, harness.ConfigMap, ns, ownedName).GetUID())

	cp.MustDelete(t, harness.ConfigMap, ns, ownerName)
	cp.WaitGone(t, reconcileTimeout, harness.ConfigMap, ns, ownerName)

	// The garbage collector demonstrably tried: the webhook recorded its
	// refused (Background, the collector's default for an object without
	// finalizers) delete on C, and kube-controller-manager logged the
	// webhook's refusal for C's uid when it requeued C.
	cp.Eventually(t, gcTimeout, fmt.Sprintf("the garbage collector's delete of ConfigMap %s/%s to be refused by %s", ns, ownedName, harness.UsageWebhookName), func(ctx context.Context) error {
		c, err := cp.Existing(ctx, harness.ConfigMap, ns, ownedName)
		if err != nil {
			return err
		}
		if got := c.GetAnnotations()[harness.DeletionAttemptAnnotation]; got != "Background" {
			return fmt.Errorf("annotation %s=%q, want \"Background\"", harness.DeletionAttemptAnnotation, got)
		}
		return logHasLine(controllerManagerLog(), harness.UsageWebhookName, ownedUID)
	})
	cp.Consistently(t, 10*time.Second, fmt.Sprintf("ConfigMap %s/%s survives its owner while Usage %s exists", ns, ownedName, usageName), func(ctx context.Context) error {
		c, err := cp.Existing(ctx, harness.ConfigMap, ns, ownedName)
		if err != nil {
			return err
		}
		if c.GetDeletionTimestamp() != nil {
			return fmt.Errorf("it is being deleted (deletionTimestamp %v)", c.GetDeletionTimestamp())
		}
		_, err = cp.Existing(ctx, harness.Usage, ns, usageName)
		return err
	})

	// The protection goes: the usage controller takes the label off C; the
	// collector's retry or the replay of its recorded delete removes C.
	cp.MustDelete(t, harness.Usage, ns, usageName)
	cp.WaitGone(t, reconcileTimeout, harness.Usage, ns, usageName)
	cp.WaitGone(t, reconcileTimeout, harness.ConfigMap, ns, ownedName)
}

// ensureNamespace creates ns or fails the test.
func ensureNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cp.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// configMap returns ConfigMap ns/name, owned by owner when not nil.
func configMap(ns, name string, owner *unstructured.Unstructured) *unstructured.Unstructured {
	doc := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	if owner != nil {
		doc += fmt.Sprintf("  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: %s\n    uid: %s\n", owner.GetName(), owner.GetUID())
	}
	return harness.MustObject(doc + "data:\n  scenario: usage\n")
}

// usageOf returns a namespaced protection.crossplane.io/v1beta1 Usage of
// ConfigMap ns/of with replayDeletion, plus the spec lines in extra (its
// `by:` or its `reason:`, at spec indentation).
func usageOf(ns, name, of, extra string) *unstructured.Unstructured {
	return harness.MustObject(fmt.Sprintf(`
apiVersion: protection.crossplane.io/v1beta1
kind: Usage
metadata:
  name: %s
  namespace: %s
spec:
  of:
    apiVersion: v1
    kind: ConfigMap
    resourceRef:
      name: %s
  replayDeletion: true
  %s
`, name, ns, of, extra))
}

// waitUsageEnforced waits until the usage controller has set up Usage
// ns/usage: Ready=True, the used ConfigMap labelled in-use, and, when
// userUID is set, the Usage owned by its user.
func waitUsageEnforced(t *testing.T, ns, usage, used, userUID string) {
	t.Helper()
	u := cp.WaitCondition(t, reconcileTimeout, harness.Usage, ns, usage, "Ready", "True")
	if userUID != "" {
		owned := false
		for _, o := range u.GetOwnerReferences() {
			owned = owned || string(o.UID) == userUID
		}
		if !owned {
			t.Fatalf("Usage %s/%s is Ready but not owned by its user (uid %s); owners: %v", ns, usage, userUID, u.GetOwnerReferences())
		}
	}
	cp.Eventually(t, reconcileTimeout, fmt.Sprintf("ConfigMap %s/%s to be labelled %s=true", ns, used, harness.InUseLabel), func(ctx context.Context) error {
		c, err := cp.Existing(ctx, harness.ConfigMap, ns, used)
		if err != nil {
			return err
		}
		if c.GetLabels()[harness.InUseLabel] != "true" {
			return fmt.Errorf("labels are %v", c.GetLabels())
		}
		return nil
	})
}

// deleteConfigMap deletes ConfigMap ns/name (background propagation) and
// returns what the apiserver answered.
func deleteConfigMap(ns, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return cp.Delete(ctx, harness.ConfigMap, ns, name)
}

// wantDenied fails the test unless err is the nousages webhook refusing the
// delete of ns/name with a message containing detail. The webhook
// answers 409 Conflict and the message of inUseMessage (handler.go); the
// apiserver prefixes `admission webhook "<name>" denied the request: `.
func wantDenied(t *testing.T, err error, ns, name, detail string) {
	t.Helper()
	if err == nil {
		t.Fatalf("DELETE of %s/%s was allowed; want it refused by webhook %s", ns, name, harness.UsageWebhookName)
	}
	if !harness.DeniedByUsageWebhook(err) {
		t.Fatalf("DELETE of %s/%s failed with %v; want a refusal by webhook %s", ns, name, err, harness.UsageWebhookName)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("DELETE of %s/%s: %v is not an API status", ns, name, err)
	}
	if code := status.Status().Code; code != http.StatusConflict {
		t.Errorf("DELETE of %s/%s refused with code %d, want %d: %v", ns, name, code, http.StatusConflict, err)
	}
	if !strings.Contains(err.Error(), detail) {
		t.Errorf("DELETE of %s/%s refused with %q, want it to contain %q", ns, name, err.Error(), detail)
	}
}

// cleanupUsage removes a scenario's objects when it ends, even half-way:
// the Usage first, waiting (bounded) until its controller has removed it and
// the in-use label, then the ConfigMaps, whose deletes would be refused
// before.
func cleanupUsage(t *testing.T, usage *unstructured.Unstructured, cms ...*unstructured.Unstructured) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := cp.Delete(ctx, harness.Usage, usage.GetNamespace(), usage.GetName()); err != nil {
			t.Logf("cleanup: cannot delete Usage %s: %v", usage.GetName(), err)
		}
		for {
			u, err := cp.Get(ctx, harness.Usage, usage.GetNamespace(), usage.GetName())
			if err == nil && u == nil {
				break
			}
			if ctx.Err() != nil {
				t.Logf("cleanup: Usage %s still exists: %v", usage.GetName(), err)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		for _, cm := range cms {
			if err := cp.Delete(ctx, harness.ConfigMap, cm.GetNamespace(), cm.GetName()); err != nil {
				t.Logf("cleanup: cannot delete ConfigMap %s: %v", cm.GetName(), err)
			}
		}
	})
}

// controllerManagerLog is the path of kube-controller-manager's log.
func controllerManagerLog() string { return cp.LogDir + "/kube-controller-manager.log" }

// logHasLine returns nil when one line of the log at path contains every
// one of parts.
func logHasLine(path string, parts ...string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
next:
	for _, line := range strings.Split(string(b), "\n") {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		return nil
	}
	return fmt.Errorf("no line of %s contains all of %q yet", path, parts)
}
