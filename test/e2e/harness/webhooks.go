package harness

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// UsageWebhookName is the webhook of Crossplane's
// ValidatingWebhookConfiguration crossplane-no-usages
// (cluster/webhookconfigurations/usage.yaml) that refuses the DELETE of any
// object labelled InUseLabel while a Usage of it exists
// (internal/webhook/protection/usage/handler.go).
const UsageWebhookName = "nousages.protection.crossplane.io"

// InUseLabel is the label Crossplane's usage controller puts on the object a
// Usage protects and removes when the last Usage of it goes
// (internal/controller/protection/usage/reconciler.go, inUseLabelKey). The
// webhook configuration's objectSelector matches it, so the kube-apiserver
// sends only the deletes of labelled objects to the webhook.
const InUseLabel = "crossplane.io/in-use"

// DeletionAttemptAnnotation is the annotation the nousages webhook writes on
// an object whose delete it refused, holding the refused propagation policy
// (internal/protection/usage.go, AnnotationKeyDeletionAttempt); a Usage with
// replayDeletion re-issues that delete when it goes.
const DeletionAttemptAnnotation = "usage.crossplane.io/deletion-attempt-with-policy"

// CrossplaneWebhookConfigurations reads Crossplane's webhook configurations
// from cluster/webhookconfigurations of its module (the directory the Helm
// chart mounts for `crossplane core init`).
func CrossplaneWebhookConfigurations(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, CrossplaneModule, CrossplaneVersion)
	if err != nil {
		return nil, err
	}
	objs, err := ReadYAMLFiles(filepath.Join(dir, "cluster", "webhookconfigurations"))
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no webhook configurations in %s@%s/cluster/webhookconfigurations", CrossplaneModule, CrossplaneVersion)
	}
	return objs, nil
}

// URLClientConfigs rewrites every webhook of the Validating and Mutating
// WebhookConfigurations objs, in place, to call baseURL + the upstream
// service path and to trust caBundle. It is what Crossplane's `core init`
// does (internal/initializer/webhook_configurations.go: it sets each
// webhook's caBundle and clientConfig.service name, namespace and port and
// keeps the path), except that the suite runs Crossplane out of cluster, so
// there is no Service and the kube-apiserver is given a url instead. Like
// the initializer it refuses any other kind, and it refuses a webhook
// without a service clientConfig: either means the upstream files changed
// shape and this conversion must be re-checked.
func URLClientConfigs(objs []*unstructured.Unstructured, baseURL string, caBundle []byte) error {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != "admissionregistration.k8s.io" || (gvk.Kind != "ValidatingWebhookConfiguration" && gvk.Kind != "MutatingWebhookConfiguration") {
			return fmt.Errorf("only MutatingWebhookConfiguration and ValidatingWebhookConfiguration kinds are expected among Crossplane's webhook configurations, got %s %s", gvk, o.GetName())
		}
		webhooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		for i, w := range webhooks {
			wh, ok := w.(map[string]any)
			if !ok {
				return fmt.Errorf("%s %s: webhooks[%d] is not an object", gvk.Kind, o.GetName(), i)
			}
			svc, ok, _ := unstructured.NestedMap(wh, "clientConfig", "service")
			if !ok {
				return fmt.Errorf("%s %s: webhook %v has no clientConfig.service to turn into a url", gvk.Kind, o.GetName(), wh["name"])
			}
			path, _ := svc["path"].(string)
			cc := map[string]any{
				"url":      strings.TrimSuffix(baseURL, "/") + path,
				"caBundle": base64.StdEncoding.EncodeToString(caBundle),
			}
			if err := unstructured.SetNestedMap(wh, cc, "clientConfig"); err != nil {
				return err
			}
			webhooks[i] = wh
		}
		if err := unstructured.SetNestedSlice(o.Object, webhooks, "webhooks"); err != nil {
			return err
		}
	}
	return nil
}

// webhookNames returns the names of the webhooks of objs.
func webhookNames(objs []*unstructured.Unstructured) []string {
	var names []string
	for _, o := range objs {
		webhooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, w := range webhooks {
			if m, ok := w.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// InstallCrossplaneWebhooks installs Crossplane's webhook configurations,
// read from its module, with url clientConfigs pointing at the running
// Crossplane's webhook server and the run's CA as their caBundle. Call it
// after StartCrossplane: the nousages webhook fails closed
// (failurePolicy: Fail), so it must not be registered before its server
// runs.
func (cp *ControlPlane) InstallCrossplaneWebhooks(ctx context.Context) error {
	if cp.WebhookURL == "" {
		return errors.New("InstallCrossplaneWebhooks called before StartCrossplane")
	}
	objs, err := CrossplaneWebhookConfigurations(ctx)
	if err != nil {
		return err
	}
	names := webhookNames(objs)
	found := false
	for _, n := range names {
		found = found || n == UsageWebhookName
	}
	if !found {
		return fmt.Errorf("the cluster/webhookconfigurations of Crossplane %s define webhooks %v but not %s, which the suite relies on; re-check them", CrossplaneVersion, names, UsageWebhookName)
	}
	if err := URLClientConfigs(objs, cp.WebhookURL, cp.PKI.CAData()); err != nil {
		return err
	}
	return cp.Apply(ctx, objs...)
}

// DeniedByUsageWebhook reports whether err is the kube-apiserver refusing a
// request because the nousages webhook denied it. The apiserver words a
// denial as `admission webhook "<name>" denied the request: <message>`
// (k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go,
// ToStatusErr), and the webhook's message says the object is in use
// (handler.go, inUseMessage). A webhook that cannot be reached fails
// differently ("failed calling webhook"), so that does not count.
func DeniedByUsageWebhook(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	msg := status.Status().Message
	return strings.Contains(msg, fmt.Sprintf("admission webhook %q denied the request", UsageWebhookName)) &&
		strings.Contains(msg, "This resource is in-use by")
}

// DeleteDryRun asks the kube-apiserver to delete the object without
// deleting it: admission, webhooks included, runs as for a real delete
// (Crossplane's webhook declares sideEffects: None, so the apiserver calls
// it on dry runs too).
func (cp *ControlPlane) DeleteDryRun(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, err := cp.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	return ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
}

// WaitUsageWebhook proves, before any scenario runs, that Usages are
// enforced end to end: it creates a throwaway ConfigMap and a Usage of it in
// crossplane-system, waits until a dry-run DELETE of the ConfigMap is
// refused by the nousages webhook (which needs the usage controller to have
// labelled it, the kube-apiserver to reach the webhook at its url and trust
// its certificate, and the webhook to find the Usage), then removes both.
// On timeout the error says what the last DELETE returned and ends with the
// tail of Crossplane's log.
func (cp *ControlPlane) WaitUsageWebhook(ctx context.Context, timeout time.Duration) error {
	const ns, name = "crossplane-system", "e2e-webhook-probe"
	probe := MustObject(fmt.Sprintf(`
apiVersion: v1
kind: ConfigMap
metadata:
  name: %s
  namespace: %s
data:
  purpose: the harness deletes this ConfigMap (dry run) to prove the nousages webhook answers
`, name, ns))
	usage := MustObject(fmt.Sprintf(`
apiVersion: protection.crossplane.io/v1beta1
kind: Usage
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  of:
    apiVersion: v1
    kind: ConfigMap
    resourceRef:
      name: %[1]s
  reason: e2e harness probe of the nousages webhook
`, name, ns))
	if err := cp.Apply(ctx, probe, usage); err != nil {
		return err
	}
	what := fmt.Sprintf("refusal by webhook %s (at %s) of a dry-run DELETE of ConfigMap %s/%s, which Usage %s/%s protects,", UsageWebhookName, cp.WebhookURL, ns, name, ns, name)
	if err := poll(ctx, cp.crossplane, timeout, what, func(ctx context.Context) error {
		err := cp.DeleteDryRun(ctx, probe)
		switch {
		case DeniedByUsageWebhook(err):
			return nil
		case err != nil:
			return err
		}
		u, gerr := cp.Get(ctx, ConfigMap, ns, name)
		if gerr != nil {
			return fmt.Errorf("dry-run DELETE allowed; cannot read the probe: %w", gerr)
		}
		return fmt.Errorf("dry-run DELETE allowed: the probe's labels are %v (the usage controller adds %s=true)", u.GetLabels(), InUseLabel)
	}); err != nil {
		return err
	}
	// Remove the probe. The Usage goes first: its finalizer is removed by
	// the usage controller, which takes the in-use label off the ConfigMap
	// on the way (reconciler.go), after which the ConfigMap's delete is no
	// longer sent to the webhook.
	if err := cp.Delete(ctx, Usage, ns, name); err != nil {
		return fmt.Errorf("cannot delete the probe Usage: %w", err)
	}
	if err := cp.waitGone(ctx, cp.crossplane, Usage, ns, name, timeout); err != nil {
		return err
	}
	if err := cp.Delete(ctx, ConfigMap, ns, name); err != nil {
		return fmt.Errorf("cannot delete the probe ConfigMap after its Usage went: %w", err)
	}
	return cp.waitGone(ctx, cp.crossplane, ConfigMap, ns, name, timeout)
}

// waitGone waits until the object does not exist, reporting p's log tail
// when it does not go within timeout.
func (cp *ControlPlane) waitGone(ctx context.Context, p *Process, gvk schema.GroupVersionKind, ns, name string, timeout time.Duration) error {
	return poll(ctx, p, timeout, fmt.Sprintf("%s %s to be deleted", gvk.Kind, joinName(ns, name)), func(ctx context.Context) error {
		u, err := cp.Get(ctx, gvk, ns, name)
		if err != nil {
			return err
		}
		if u != nil {
			return fmt.Errorf("still exists (deletionTimestamp %v, finalizers %v, labels %v)", u.GetDeletionTimestamp(), u.GetFinalizers(), u.GetLabels())
		}
		return nil
	})
}
