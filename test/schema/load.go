package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Object is one decoded YAML document and where it came from.
type Object struct {
	File   string
	Index  int
	Object map[string]any
}

// GroupKind of the object, e.g. "workerimage.cozystack.io/XNodePool".
func (o Object) GroupKind() string {
	apiVersion, _ := o.Object["apiVersion"].(string)
	kind, _ := o.Object["kind"].(string)
	group := apiVersion
	if i := bytes.IndexByte([]byte(apiVersion), '/'); i >= 0 {
		group = apiVersion[:i]
	}
	return group + "/" + kind
}

// String names the object for messages.
func (o Object) String() string {
	name, _ := nested(o.Object, "metadata", "name").(string)
	return fmt.Sprintf("%s#%d (%s %s)", o.File, o.Index, o.Object["kind"], name)
}

// ReadObjects decodes every non-empty YAML document of file. file is
// relative to root and is reported that way.
func ReadObjects(root, file string) ([]Object, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []Object
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		if len(obj) == 0 {
			continue
		}
		if obj, err = normalize(obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		out = append(out, Object{File: file, Index: i, Object: obj})
	}
}

// YAMLFiles lists the .yaml files under dir (relative to root), recursively
// when recursive is set, sorted.
func YAMLFiles(root, dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if !recursive && path != filepath.Join(root, dir) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".yaml" {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(files)
	return files, err
}

// LoadXRDs reads the XRDs among the .yaml files directly in dir.
func LoadXRDs(root, dir string) ([]XRD, error) {
	files, err := YAMLFiles(root, dir, false)
	if err != nil {
		return nil, err
	}
	var out []XRD
	for _, f := range files {
		objs, err := ReadObjects(root, f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.Object["kind"] != "CompositeResourceDefinition" {
				continue
			}
			raw, err := yaml.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			var x XRD
			if err := yaml.Unmarshal(raw, &x); err != nil {
				return nil, fmt.Errorf("%s: %w", o, err)
			}
			x.File = f
			out = append(out, x)
		}
	}
	return out, nil
}

// normalize gives obj the types the API server decodes JSON into: integral
// numbers become int64, as in an unstructured object.
func normalize(obj map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}
