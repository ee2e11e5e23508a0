package schema

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/cozystack/function-worker-image/internal/rules"
)

// Markers of the generated field reference in docs/platform.md.
const (
	ReferenceBegin = "<!-- BEGIN GENERATED FIELD REFERENCE: go test ./test/schema -update -->"
	ReferenceEnd   = "<!-- END GENERATED FIELD REFERENCE -->"
)

// Reference renders the field reference of xrds (in the given order) as
// Markdown: per composite, one row per spec and status field with its type,
// default, validation and description, then the rules (CEL) that the schema
// alone cannot say.
func Reference(xrds []XRD) string {
	var b strings.Builder
	for _, x := range xrds {
		v := x.Spec.Versions[0]
		root := v.Schema.OpenAPIV3Schema
		fmt.Fprintf(&b, "### %s\n\n", x.Spec.Names.Kind)
		fmt.Fprintf(&b, "`%s/%s`, scope %s, XRD `%s`.\n\n", x.Spec.Group, v.Name, x.EffectiveScope(), x.File)
		fmt.Fprintf(&b, "%s\n\n", escape(oneLine(root.Description)))
		for _, part := range []string{"spec", "status"} {
			s, ok := root.Properties[part]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| `%s` field | Type | Default | Validation | Description |\n|---|---|---|---|---|\n", part)
			var rules []string
			rows(&b, "", part, s, &rules)
			b.WriteString("\n")
			if len(rules) > 0 {
				fmt.Fprintf(&b, "Rules on `%s` (CEL, enforced by the API server):\n\n", part)
				for _, r := range rules {
					fmt.Fprintf(&b, "- %s\n", r)
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// rows writes one row per property of s, recursively. prefix is the display
// path of s ("" for spec and status themselves); label names s in the rules.
func rows(b *strings.Builder, prefix, label string, s extv1.JSONSchemaProps, rules *[]string) {
	for _, r := range s.XValidations {
		when := ""
		if strings.Contains(r.Rule, "oldSelf") {
			when = " (on update)"
		}
		*rules = append(*rules, fmt.Sprintf("`%s`%s: %s", label, when, escape(r.Message)))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		fp := k
		if prefix != "" {
			fp = prefix + "." + k
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s |\n", fp, typeOf(p), def(p), validation(p, k, s.Required), escape(oneLine(p.Description)))
		rows(b, fp, fp, p, rules)
		if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
			rows(b, fp+"[*]", fp+"[*]", *p.AdditionalProperties.Schema, rules)
		}
		if p.Items != nil && p.Items.Schema != nil {
			rows(b, fp+"[]", fp+"[]", *p.Items.Schema, rules)
		}
	}
}

func typeOf(p extv1.JSONSchemaProps) string {
	switch {
	case p.Type == "array" && p.Items != nil && p.Items.Schema != nil:
		return "[]" + typeOf(*p.Items.Schema)
	case p.Type == "object" && p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil:
		return "map[string]" + typeOf(*p.AdditionalProperties.Schema)
	case p.Type == "" && p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields:
		return "any"
	case p.Type == "" && p.XIntOrString:
		return "integer or string"
	case p.Format != "":
		return p.Type + " (" + p.Format + ")"
	default:
		return p.Type
	}
}

func def(p extv1.JSONSchemaProps) string {
	if p.Default == nil {
		return ""
	}
	return "`" + string(p.Default.Raw) + "`"
}

// namedPatterns are the rules' patterns too long to read in a table; the
// section they link to states each one in words.
var namedPatterns = map[string]string{
	rules.URLPattern:          "the [URL grammar](#how-a-bad-value-is-refused)",
	rules.TalosVersionPattern: "a Talos release `vMAJOR.MINOR.PATCH[-pre]`, [no leading zeros](#how-a-bad-value-is-refused)",
}

func validation(p extv1.JSONSchemaProps, name string, required []string) string {
	var v []string
	for _, r := range required {
		if r == name {
			v = append(v, "required")
		}
	}
	if name, ok := namedPatterns[p.Pattern]; ok {
		v = append(v, name)
	} else if p.Pattern != "" {
		v = append(v, "pattern `"+strings.ReplaceAll(p.Pattern, "|", `\|`)+"`")
	}
	if p.MinLength != nil && *p.MinLength > 0 {
		v = append(v, fmt.Sprintf("min length %d", *p.MinLength))
	}
	if p.MaxLength != nil {
		v = append(v, fmt.Sprintf("max length %d", *p.MaxLength))
	}
	if p.Minimum != nil {
		v = append(v, fmt.Sprintf("min %g", *p.Minimum))
	}
	if p.Maximum != nil {
		v = append(v, fmt.Sprintf("max %g", *p.Maximum))
	}
	if p.MinItems != nil {
		v = append(v, fmt.Sprintf("min items %d", *p.MinItems))
	}
	if p.MaxItems != nil {
		v = append(v, fmt.Sprintf("max items %d", *p.MaxItems))
	}
	if p.MaxProperties != nil {
		v = append(v, fmt.Sprintf("max entries %d", *p.MaxProperties))
	}
	if p.XListType != nil && *p.XListType == "map" {
		v = append(v, "unique by "+strings.Join(p.XListMapKeys, ", "))
	}
	if len(p.Enum) > 0 {
		var e []string
		for _, x := range p.Enum {
			e = append(e, string(x.Raw))
		}
		v = append(v, "one of "+strings.Join(e, ", "))
	}
	for _, r := range p.XValidations {
		if strings.Contains(r.Rule, "oldSelf") && strings.TrimSpace(r.Rule) == "self == oldSelf" {
			v = append(v, "immutable")
		}
	}
	return strings.Join(v, "; ")
}

var spaces = regexp.MustCompile(`\s+`)

func oneLine(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// escape keeps s inside one Markdown table cell and shows <placeholders>
// literally.
func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(s)
}
