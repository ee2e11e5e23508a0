package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// FieldManager is the server-side apply field manager of everything the
// suite writes as a user.
const FieldManager = "e2e"

// DecodeYAML decodes a multi-document YAML stream into objects, skipping
// empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := d.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
}

// ReadYAMLFiles decodes every .yaml file of dirs (not recursive), sorted by
// name, or the files themselves when given files.
func ReadYAMLFiles(paths ...string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		if err != nil {
			return nil, err
		}
		sort.Strings(m)
		files = append(files, m...)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := DecodeYAML(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// MustObject decodes one YAML document, panicking on a typo in the suite.
func MustObject(doc string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		panic(fmt.Sprintf("bad object in the suite: %v\n%s", err, doc))
	}
	return u
}

// Resource returns the dynamic client of gvk in namespace ns ("" for
// cluster-scoped kinds or all namespaces). A kind the mapper does not know
// yet triggers one rediscovery: CRDs and XRDs appear during the run.
func (cp *ControlPlane) Resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, error) {
	m, err := cp.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		cp.Mapper.Reset()
		m, err = cp.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("no resource for %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && ns != "" {
		return cp.Dynamic.Resource(m.Resource).Namespace(ns), nil
	}
	return cp.Dynamic.Resource(m.Resource), nil
}

// Apply server-side applies objs, in order, as the suite's field manager.
func (cp *ControlPlane) Apply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	return cp.ApplyAs(ctx, FieldManager, objs...)
}

// ApplyAs server-side applies objs as manager.
func (cp *ControlPlane) ApplyAs(ctx context.Context, manager string, objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		ri, err := cp.Resource(o.GroupVersionKind(), o.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
			return fmt.Errorf("cannot apply %s %s: %w", o.GetKind(), objectName(o), err)
		}
	}
	return nil
}

// ApplyStatus server-side applies the status of obj as manager, the way a
// controller would.
func (cp *ControlPlane) ApplyStatus(ctx context.Context, manager string, obj *unstructured.Unstructured) error {
	ri, err := cp.Resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return err
	}
	if _, err := ri.ApplyStatus(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
		return fmt.Errorf("cannot apply the status of %s %s: %w", obj.GetKind(), objectName(obj), err)
	}
	return nil
}

// Get returns the object, or nil and no error when it does not exist.
func (cp *ControlPlane) Get(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	ri, err := cp.Resource(gvk, ns)
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if isNotFound(err) {
		return nil, nil
	}
	return u, err
}

// Existing returns the object, or an error saying that it does not exist.
func (cp *ControlPlane) Existing(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
	u, err := cp.Get(ctx, gvk, ns, name)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, fmt.Errorf("%s %s does not exist", gvk.Kind, joinName(ns, name))
	}
	return u, nil
}

// List returns the objects of gvk in ns ("" for all) matching the label
// selector, sorted by namespace and name.
func (cp *ControlPlane) List(ctx context.Context, gvk schema.GroupVersionKind, ns, selector string) ([]unstructured.Unstructured, error) {
	ri, err := cp.Resource(gvk, ns)
	if err != nil {
		return nil, err
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	items := l.Items
	sort.Slice(items, func(i, j int) bool { return objectName(&items[i]) < objectName(&items[j]) })
	return items, nil
}

// Delete deletes the object in the background; a missing object is fine.
func (cp *ControlPlane) Delete(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) error {
	ri, err := cp.Resource(gvk, ns)
	if err != nil {
		return err
	}
	p := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &p})
	if isNotFound(err) {
		return nil
	}
	return err
}

// InstallCRDs applies the CustomResourceDefinitions among objs and waits
// until each is Established.
func (cp *ControlPlane) InstallCRDs(ctx context.Context, objs []*unstructured.Unstructured) error {
	var names []string
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		// The apiserver refuses a CRD that carries a status on create.
		delete(o.Object, "status")
		if err := cp.Apply(ctx, o); err != nil {
			return err
		}
		names = append(names, o.GetName())
	}
	return cp.WaitEstablished(ctx, CRD, names, 60*time.Second)
}

// WaitEstablished waits until every named object of gvk (CRDs or XRDs) has
// condition Established=True.
func (cp *ControlPlane) WaitEstablished(ctx context.Context, gvk schema.GroupVersionKind, names []string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range names {
		for {
			u, err := cp.Get(ctx, gvk, "", n)
			if err == nil && u != nil && ConditionStatus(u, "Established") == "True" {
				break
			}
			if err := cp.Healthy(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				if err != nil {
					return fmt.Errorf("%s %s not Established within %s: %w", gvk.Kind, n, timeout, err)
				}
				return fmt.Errorf("%s %s not Established within %s (conditions: %s)", gvk.Kind, n, timeout, conditionsOf(u))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	cp.Mapper.Reset()
	return nil
}

// ConditionStatus returns the status of the condition of type typ, or "".
func ConditionStatus(u *unstructured.Unstructured, typ string) string {
	c := Condition(u, typ)
	if c == nil {
		return ""
	}
	s, _ := c["status"].(string)
	return s
}

// Condition returns the condition of type typ of u, or nil.
func Condition(u *unstructured.Unstructured, typ string) map[string]any {
	if u == nil {
		return nil
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func conditionsOf(u *unstructured.Unstructured) string {
	if u == nil {
		return "(object not found)"
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var parts []string
	for _, c := range cs {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
	}
	if len(parts) == 0 {
		return "(no conditions)"
	}
	return strings.Join(parts, "; ")
}

// ConditionsString summarises u's conditions for failure messages.
func ConditionsString(u *unstructured.Unstructured) string { return conditionsOf(u) }

func objectName(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
