package observed

import (
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// Readers straight from the protobuf Struct, for the objects a call reads
// many of: request.GetRequiredResource copies the whole object into a map
// (structpb.AsMap) to be walked by reflection, and a worker DataVolume is
// ~6 KB of mostly clone tokens and managedFields no rule reads.

// WorkerDataVolume reads a worker DataVolume's identity, labels, the named
// annotations, status.phase, status.progress, status.restartCount,
// status.claimName and status.conditions from its wire form; a mistyped
// field is an error naming object and field.
func WorkerDataVolume(s *structpb.Struct, annotations ...string) (cdiv1.DataVolume, error) {
	dv := cdiv1.DataVolume{}
	f, meta, ref, err := wireMeta(s, CDIAPIVersion, KindDataVolume, &dv.TypeMeta, &dv.ObjectMeta)
	if err != nil {
		return dv, err
	}
	if len(annotations) > 0 {
		if dv.Annotations, err = stringMap(meta["annotations"], annotations); err != nil {
			return dv, fmt.Errorf("cannot read %s %q: metadata.annotations: %w", KindDataVolume, ref, err)
		}
	}
	status := f["status"]
	if status == nil {
		return dv, nil
	}
	st := status.GetStructValue()
	if st == nil {
		return dv, fmt.Errorf("cannot read %s %q: status is not an object", KindDataVolume, ref)
	}
	sf := st.GetFields()
	phase, err := stringField(sf, "phase")
	if err != nil {
		return dv, fmt.Errorf("cannot read %s %q: status.%w", KindDataVolume, ref, err)
	}
	dv.Status.Phase = cdiv1.DataVolumePhase(phase)
	if dv.Status.ClaimName, err = stringField(sf, "claimName"); err != nil {
		return dv, fmt.Errorf("cannot read %s %q: status.%w", KindDataVolume, ref, err)
	}
	// What moves while a clone runs (internal/stall).
	progress, err := stringField(sf, "progress")
	if err != nil {
		return dv, fmt.Errorf("cannot read %s %q: status.%w", KindDataVolume, ref, err)
	}
	dv.Status.Progress = cdiv1.DataVolumeProgress(progress)
	if dv.Status.RestartCount, err = int32Field(sf, "restartCount"); err != nil {
		return dv, fmt.Errorf("cannot read %s %q: status.%w", KindDataVolume, ref, err)
	}
	conds := sf["conditions"]
	if conds == nil {
		return dv, nil
	}
	list := conds.GetListValue()
	if list == nil {
		return dv, fmt.Errorf("cannot read %s %q: status.conditions is not a list", KindDataVolume, ref)
	}
	dv.Status.Conditions = make([]cdiv1.DataVolumeCondition, 0, len(list.GetValues()))
	for i, v := range list.GetValues() {
		c := v.GetStructValue()
		if c == nil {
			return dv, fmt.Errorf("cannot read %s %q: status.conditions[%d] is not an object", KindDataVolume, ref, i)
		}
		cf := c.GetFields()
		var t, stat, reason, msg string
		for _, kv := range []struct {
			key  string
			into *string
		}{{"type", &t}, {"status", &stat}, {"reason", &reason}, {"message", &msg}} {
			if *kv.into, err = stringField(cf, kv.key); err != nil {
				return dv, fmt.Errorf("cannot read %s %q: status.conditions[%d].%w", KindDataVolume, ref, i, err)
			}
		}
		dv.Status.Conditions = append(dv.Status.Conditions, cdiv1.DataVolumeCondition{
			Type: cdiv1.DataVolumeConditionType(t), Status: corev1.ConditionStatus(stat), Reason: reason, Message: msg,
		})
	}
	return dv, nil
}

// wireMeta reads an object's type and identity into tm and om, refusing
// another kind, and returns its and its metadata's fields and its ref.
func wireMeta(s *structpb.Struct, apiVersion, kind string, tm *metav1.TypeMeta, om *metav1.ObjectMeta) (fields, meta map[string]*structpb.Value, ref string, err error) {
	if s == nil {
		return nil, nil, "", fmt.Errorf("no object")
	}
	fields = s.GetFields()
	tm.APIVersion, tm.Kind = fields["apiVersion"].GetStringValue(), fields["kind"].GetStringValue()
	meta = fields["metadata"].GetStructValue().GetFields()
	om.Name, om.Namespace = meta["name"].GetStringValue(), meta["namespace"].GetStringValue()
	ref = om.Namespace + "/" + om.Name
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		return nil, nil, ref, fmt.Errorf("%s %q is a %s %s, not a %s %s", tm.Kind, ref, tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	if om.Labels, err = stringMap(meta["labels"], nil); err != nil {
		return nil, nil, ref, fmt.Errorf("cannot read %s %q: metadata.labels: %w", kind, ref, err)
	}
	return fields, meta, ref, nil
}

// stringField is fields[key] as a string: "" when absent or null, an error
// when of another type.
func stringField(fields map[string]*structpb.Value, key string) (string, error) {
	v, ok := fields[key]
	if !ok {
		return "", nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue, nil
	case *structpb.Value_NullValue:
		return "", nil
	}
	return "", fmt.Errorf("%s is not a string", key)
}

// int32Field reads an optional integer field that fits an int32; JSON
// carries it as a number.
func int32Field(fields map[string]*structpb.Value, key string) (int32, error) {
	v, ok := fields[key]
	if !ok {
		return 0, nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_NumberValue:
		n := k.NumberValue
		if n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), nil
		}
	case *structpb.Value_NullValue:
		return 0, nil
	}
	return 0, fmt.Errorf("%s is not a 32-bit integer", key)
}

// stringMap reads a map of strings (labels, annotations); only keys in
// want when want is not nil. nil when absent or empty.
func stringMap(v *structpb.Value, want []string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	if _, isNull := v.GetKind().(*structpb.Value_NullValue); isNull {
		return nil, nil
	}
	s := v.GetStructValue()
	if s == nil {
		return nil, fmt.Errorf("is not an object")
	}
	fields := s.GetFields()
	var out map[string]string
	add := func(k string, val *structpb.Value) error {
		str, ok := val.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return fmt.Errorf("%s is not a string", k)
		}
		if out == nil {
			// Sized for what is read, so that it never grows.
			n := len(fields)
			if want != nil {
				n = min(n, len(want))
			}
			out = make(map[string]string, n)
		}
		out[k] = str.StringValue
		return nil
	}
	if want != nil {
		for _, k := range want {
			if val, ok := fields[k]; ok {
				if err := add(k, val); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	for k, val := range fields {
		if err := add(k, val); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WorkerPVC reads a worker disk claim's identity, labels and
// spec.storageClassName from its wire form.
func WorkerPVC(s *structpb.Struct) (corev1.PersistentVolumeClaim, error) {
	pvc := corev1.PersistentVolumeClaim{}
	f, _, ref, err := wireMeta(s, CoreAPIVersion, KindPVC, &pvc.TypeMeta, &pvc.ObjectMeta)
	if err != nil {
		return pvc, err
	}
	spec := f["spec"]
	if spec == nil {
		return pvc, nil
	}
	st := spec.GetStructValue()
	if st == nil {
		return pvc, fmt.Errorf("cannot read %s %q: spec is not an object", KindPVC, ref)
	}
	class, err := stringField(st.GetFields(), "storageClassName")
	if err != nil {
		return pvc, fmt.Errorf("cannot read %s %q: spec.%w", KindPVC, ref, err)
	}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	return pvc, nil
}

// CloneClaim reads a claim CDI runs a clone through (clone/planner.go
// createDesiredClaim, CDI v1.65.0): what WorkerPVC reads, and what tells a
// clone that runs from a claim left behind, metadata.creationTimestamp,
// metadata.deletionTimestamp and status.phase.
func CloneClaim(s *structpb.Struct) (corev1.PersistentVolumeClaim, error) {
	pvc, err := WorkerPVC(s)
	if err != nil {
		return pvc, err
	}
	ref := pvc.Namespace + "/" + pvc.Name
	meta := s.GetFields()["metadata"].GetStructValue().GetFields()
	for _, t := range []struct {
		key  string
		into func(metav1.Time)
	}{
		{"creationTimestamp", func(v metav1.Time) { pvc.CreationTimestamp = v }},
		{"deletionTimestamp", func(v metav1.Time) { pvc.DeletionTimestamp = &v }},
	} {
		v, err := stringField(meta, t.key)
		if err != nil {
			return pvc, fmt.Errorf("cannot read %s %q: metadata.%w", KindPVC, ref, err)
		}
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return pvc, fmt.Errorf("cannot read %s %q: metadata.%s %q is not an RFC 3339 time", KindPVC, ref, t.key, v)
		}
		t.into(metav1.NewTime(at))
	}
	status := s.GetFields()["status"]
	if _, isNull := status.GetKind().(*structpb.Value_NullValue); status == nil || isNull {
		return pvc, nil
	}
	st := status.GetStructValue()
	if st == nil {
		return pvc, fmt.Errorf("cannot read %s %q: status is not an object", KindPVC, ref)
	}
	phase, err := stringField(st.GetFields(), "phase")
	if err != nil {
		return pvc, fmt.Errorf("cannot read %s %q: status.%w", KindPVC, ref, err)
	}
	pvc.Status.Phase = corev1.PersistentVolumeClaimPhase(phase)
	return pvc, nil
}
