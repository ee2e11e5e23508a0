package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/template"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// Crossplane core runs as its own ServiceAccount, as the Helm chart installs
// it: crossplane in crossplane-system, authenticated by a real
// service-account token (TokenRequest), bound by the chart's
// ClusterRoleBinding to the chart's aggregated ClusterRole crossplane. That
// role aggregates, by the label rbac.crossplane.io/aggregate-to-crossplane:
// the chart's crossplane:system:aggregate-to-crossplane, the per-XRD roles
// Crossplane's RBAC manager would make, and this repository's
// package/rbac/clusterrole.yaml. Every scenario therefore proves that those
// rules are enough. Every other process (CDI, Cluster API and its providers,
// kube-controller-manager, the stand-ins, the test client) keeps the static
// system:masters token.
const (
	CrossplaneNamespace      = "crossplane-system"
	CrossplaneServiceAccount = "crossplane"
	// CrossplaneUser is the user name the apiserver authenticates
	// Crossplane's token as.
	CrossplaneUser = "system:serviceaccount:" + CrossplaneNamespace + ":" + CrossplaneServiceAccount
	// crossplaneRole is the chart's aggregated ClusterRole
	// (templates/clusterrole.yaml, {{ template "crossplane.name" . }}).
	crossplaneRole = "crossplane"
	// aggregateLabel selects what the crossplane role aggregates.
	aggregateLabel = "rbac.crossplane.io/aggregate-to-crossplane"
)

// auditPolicy logs, at Metadata level (verb, resource, namespace, name,
// user; no bodies, so no Secret values), every request Crossplane's identity
// makes, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["` + CrossplaneUser + `"]
- level: None
`

// auditArgs writes the audit policy and returns the kube-apiserver flags
// that log to AuditLogPath.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	policy := filepath.Join(cp.WorkDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json",
		// Written before the request returns, so that a test reading
		// the log after an action sees the action's requests.
		"--audit-log-mode=blocking",
	}, nil
}

// AuditLogPath is the kube-apiserver's audit log: one JSON event per line.
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.LogDir, "audit.log") }

// AuditEvent is the part of an audit.k8s.io/v1 Event the suite reads.
type AuditEvent struct {
	Stage string `json:"stage"`
	// RequestReceived is when the apiserver received the request.
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	Verb            string    `json:"verb"`
	RequestURI      string    `json:"requestURI"`
	User            struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// AuditEvents reads the audit log: every request of Crossplane's identity
// so far.
func (cp *ControlPlane) AuditEvents() ([]AuditEvent, error) {
	f, err := os.Open(cp.AuditLogPath())
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []AuditEvent
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 16<<20)
	for s.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %w", cp.AuditLogPath(), err)
		}
		out = append(out, e)
	}
	return out, s.Err()
}

// crossplaneKubeconfig is the kubeconfig Crossplane core starts with: its
// own identity's once SetUpCrossplaneIdentity has run, else the suite's.
func (cp *ControlPlane) crossplaneKubeconfig() string {
	if p := filepath.Join(cp.WorkDir, "crossplane.kubeconfig"); exists(p) {
		return p
	}
	return cp.Kubeconfig
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// SetUpCrossplaneIdentity gives Crossplane core its own identity before it
// starts: the ServiceAccount, the chart's ClusterRoles and
// ClusterRoleBinding (rendered from the module's Helm templates), the
// function's ClusterRole (package/rbac/clusterrole.yaml), a
// kube-controller-manager running only the clusterrole-aggregation
// controller, and a kubeconfig holding a token of the ServiceAccount. It
// returns once the aggregated crossplane role holds every rule of the roles
// labelled for it.
func (cp *ControlPlane) SetUpCrossplaneIdentity(ctx context.Context) error {
	// The aggregation runs in a kube-controller-manager of its own because
	// Crossplane needs its aggregated role before it starts, while the
	// suite's other kube-controller-manager must start after every CRD and
	// XRD is served (StartControllerManager). In a cluster both are the
	// one kube-controller-manager, whose default controllers include it.
	agg, err := StartProcess(cp.LogDir, "kube-controller-manager-rbac", cp.Bin.ControllerManager, []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--controllers=clusterrole-aggregation-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--profiling=false",
	}, nil)
	if err != nil {
		return err
	}
	cp.adopt(agg)

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: CrossplaneServiceAccount, Namespace: CrossplaneNamespace}}
	if _, err := cp.Kube.CoreV1().ServiceAccounts(CrossplaneNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	chart, err := CrossplaneChartRBAC(ctx)
	if err != nil {
		return err
	}
	fn, err := ReadYAMLFiles(filepath.Join(cp.RepoRoot, "package", "rbac", "clusterrole.yaml"))
	if err != nil {
		return err
	}
	if err := cp.Apply(ctx, append(chart, fn...)...); err != nil {
		return err
	}

	// A bound token, as the kubelet mounts in the pod; long enough for any
	// run (the suite's own runs last minutes, the measurements an hour).
	exp := int64((24 * time.Hour).Seconds())
	tr, err := cp.Kube.CoreV1().ServiceAccounts(CrossplaneNamespace).CreateToken(ctx, CrossplaneServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cannot request a token for ServiceAccount %s/%s: %w", CrossplaneNamespace, CrossplaneServiceAccount, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.apiServerURL, CertificateAuthorityData: cp.PKI.CAData()}
	kc.AuthInfos["crossplane"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["crossplane"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "crossplane"}
	kc.CurrentContext = "crossplane"
	if err := cp.WaitAggregated(ctx, 60*time.Second); err != nil {
		return err
	}
	if err := cp.checkCrossplaneAccess(ctx); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, filepath.Join(cp.WorkDir, "crossplane.kubeconfig"))
}

// checkCrossplaneAccess asks the apiserver (SubjectAccessReview) what
// Crossplane's identity may do: what only the function's ClusterRole grants
// must be allowed, what no role grants must be refused, so that the suite
// never runs on an identity that is not the one described.
func (cp *ControlPlane) checkCrossplaneAccess(ctx context.Context) error {
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + CrossplaneNamespace, "system:authenticated"}
	for _, c := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "infrastructure.cluster.x-k8s.io", Resource: "kubevirtmachinetemplates", Namespace: "e2e"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "cdi.kubevirt.io", Resource: "datavolumes", Subresource: "source", Namespace: "e2e"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "e2e"}, false},
		{authorizationv1.ResourceAttributes{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: CrossplaneUser, Groups: groups, ResourceAttributes: &c.attrs}}
		got, err := cp.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if got.Status.Allowed != c.want {
			return fmt.Errorf("%s may %s %s/%s (%s): %v, want %v (%s)", CrossplaneUser, c.attrs.Verb, c.attrs.Resource, c.attrs.Subresource, c.attrs.Group, got.Status.Allowed, c.want, got.Status.Reason)
		}
	}
	return nil
}

// WaitAggregated waits until the aggregated crossplane ClusterRole holds
// every rule of every ClusterRole labelled to aggregate into it, as
// kube-controller-manager's clusterrole-aggregation controller writes them.
func (cp *ControlPlane) WaitAggregated(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		missing, err := cp.missingAggregatedRules(ctx)
		if err == nil && missing == "" {
			return nil
		}
		last = missing
		if err != nil {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ClusterRole %s does not aggregate every role labelled %s=true within %s: %s", crossplaneRole, aggregateLabel, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (cp *ControlPlane) missingAggregatedRules(ctx context.Context) (string, error) {
	agg, err := cp.Existing(ctx, ClusterRole, "", crossplaneRole)
	if err != nil {
		return "", err
	}
	have, _, _ := unstructured.NestedSlice(agg.Object, "rules")
	parts, err := cp.List(ctx, ClusterRole, "", aggregateLabel+"=true")
	if err != nil {
		return "", err
	}
	for _, p := range parts {
		rules, _, _ := unstructured.NestedSlice(p.Object, "rules")
		for _, r := range rules {
			if !containsRule(have, r) {
				return fmt.Sprintf("rule %v of %s missing", r, p.GetName()), nil
			}
		}
	}
	return "", nil
}

func containsRule(rules []any, r any) bool {
	for _, h := range rules {
		if reflect.DeepEqual(h, r) {
			return true
		}
	}
	return false
}

// XRDRoles returns, for every XRD in objs, the ClusterRole Crossplane's
// RBAC manager makes for Crossplane itself
// (internal/controller/rbac/definition/roles.go, RenderClusterRoles:
// crossplane:composite:<xrd name>:aggregate-to-crossplane, labelled to
// aggregate into the crossplane role, all verbs on the composite's plural
// and its status, update on its finalizers; the claim rules only for an XRD
// with claimNames, which none of the suite's v2 XRDs has). The RBAC
// manager also makes the edit, view and browse roles, which are users',
// not Crossplane's; the suite does not run the RBAC manager because its
// controller-runtime metrics server binds :8080 on every interface and
// has no flag for it.
func XRDRoles(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() != XRD.GroupKind() {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
		if group == "" || plural == "" {
			return nil, fmt.Errorf("XRD %s names no spec.group or spec.names.plural", o.GetName())
		}
		rules := []any{
			map[string]any{"apiGroups": []any{group}, "resources": []any{plural, plural + "/status"}, "verbs": []any{"*"}},
			map[string]any{"apiGroups": []any{group}, "resources": []any{plural + "/finalizers"}, "verbs": []any{"update"}},
		}
		if claim, _, _ := unstructured.NestedString(o.Object, "spec", "claimNames", "plural"); claim != "" {
			rules = append(rules,
				map[string]any{"apiGroups": []any{group}, "resources": []any{claim, claim + "/status"}, "verbs": []any{"*"}},
				map[string]any{"apiGroups": []any{group}, "resources": []any{claim + "/finalizers"}, "verbs": []any{"update"}})
		}
		r := &unstructured.Unstructured{Object: map[string]any{"rules": rules}}
		r.SetGroupVersionKind(ClusterRole)
		r.SetName("crossplane:composite:" + o.GetName() + ":aggregate-to-crossplane")
		r.SetLabels(map[string]string{aggregateLabel: "true"})
		out = append(out, r)
	}
	return out, nil
}

// GrantXRDRoles applies XRDRoles(objs) and waits until the crossplane role
// aggregates them. Call it before the XRDs are applied: the RBAC manager
// makes them once it sees an XRD (controlled by it), so in a cluster
// Crossplane's first reconciles of a new XRD may be refused and retried;
// made first, the suite has no such window (and no owner reference: no
// scenario deletes an XRD).
func (cp *ControlPlane) GrantXRDRoles(ctx context.Context, objs []*unstructured.Unstructured) error {
	roles, err := XRDRoles(objs)
	if err != nil {
		return err
	}
	if err := cp.Apply(ctx, roles...); err != nil {
		return err
	}
	return cp.WaitAggregated(ctx, 60*time.Second)
}

// CrossplaneChartRBAC renders Crossplane core's ClusterRoles and
// ClusterRoleBinding from the Helm chart in Crossplane's module
// (cluster/charts/crossplane/templates/clusterrole.yaml and
// clusterrolebinding.yaml, with _helpers.tpl) with Go's text/template, the
// engine Helm uses, and the chart's default values that matter here:
// rbacManager.deploy true (so crossplane is an aggregated role and its
// rules live in crossplane:system:aggregate-to-crossplane),
// serviceAccount.create true (so the subject is ServiceAccount crossplane),
// release namespace crossplane-system. The few Sprig functions the
// templates call are implemented below as Sprig defines them.
func CrossplaneChartRBAC(ctx context.Context) ([]*unstructured.Unstructured, error) {
	dir, err := ModuleDir(ctx, CrossplaneModule, CrossplaneVersion)
	if err != nil {
		return nil, err
	}
	chartDir := filepath.Join(dir, "cluster", "charts", "crossplane")
	var chart struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	raw, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		return nil, fmt.Errorf("%s/Chart.yaml: %w", chartDir, err)
	}
	values := map[string]any{
		"Chart": map[string]any{"Name": chart.Name, "Version": chart.Version, "AppVersion": chart.AppVersion},
		"Release": map[string]any{
			"Name": "crossplane", "Namespace": CrossplaneNamespace, "Service": "Helm",
		},
		"Values": map[string]any{
			"nameOverride":   "",
			"customLabels":   map[string]any{},
			"rbacManager":    map[string]any{"deploy": true},
			"serviceAccount": map[string]any{"create": true, "name": ""},
		},
	}
	var out []*unstructured.Unstructured
	for _, f := range []string{"clusterrole.yaml", "clusterrolebinding.yaml"} {
		doc, err := renderChartTemplate(filepath.Join(chartDir, "templates"), f, values)
		if err != nil {
			return nil, err
		}
		objs, err := DecodeYAML(doc)
		if err != nil {
			return nil, fmt.Errorf("the chart's %s rendered to invalid YAML: %w\n%s", f, err, doc)
		}
		out = append(out, objs...)
	}
	// The suite relies on these; fail loudly if the chart changes shape.
	want := map[string]bool{"ClusterRole/" + crossplaneRole: false, "ClusterRole/crossplane:system:aggregate-to-crossplane": false, "ClusterRoleBinding/" + crossplaneRole: false}
	for _, o := range out {
		k := o.GetKind() + "/" + o.GetName()
		if _, ok := want[k]; ok {
			want[k] = true
		}
	}
	for k, ok := range want {
		if !ok {
			return nil, fmt.Errorf("Crossplane %s's chart no longer renders %s (from %s/templates); re-check the suite's identity for Crossplane", CrossplaneVersion, k, chartDir)
		}
	}
	return out, nil
}

func renderChartTemplate(dir, name string, values map[string]any) ([]byte, error) {
	t := template.New(name)
	t.Funcs(template.FuncMap{
		"include": func(n string, data any) (string, error) {
			var b bytes.Buffer
			err := t.ExecuteTemplate(&b, n, data)
			return b.String(), err
		},
		"default": func(d any, v ...any) any {
			if len(v) == 0 || v[0] == nil || v[0] == "" {
				return d
			}
			return v[0]
		},
		"trunc": func(n int, s string) string {
			if len(s) > n {
				return s[:n]
			}
			return s
		},
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"replace":    func(old, replacement, s string) string { return strings.ReplaceAll(s, old, replacement) },
		"quote":      func(s any) string { return fmt.Sprintf("%q", fmt.Sprint(s)) },
		"indent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
	})
	for _, f := range []string{"_helpers.tpl", name} {
		src, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		if _, err := t.New(f).Parse(string(src)); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, f, err)
		}
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, values); err != nil {
		return nil, fmt.Errorf("%s/%s: %w", dir, name, err)
	}
	return b.Bytes(), nil
}
