// Package matrix decides whether a Talos release supports a Kubernetes minor.
// The table fails open: a Talos minor it does not list is allowed (and
// reported), because refusing every new Talos release until the table is
// updated would block upgrades; only known-bad pairings are refused.
package matrix

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cozystack/function-worker-image/internal/compose"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Row says Talos minor Talos supports Kubernetes minors Min..Max.
type Row struct {
	Talos    string
	Min, Max string
}

// Builtin is the table shipped with the function, from the Talos support
// matrices of each release.
var Builtin = []Row{
	{Talos: "v1.8", Min: "v1.26", Max: "v1.31"},
	{Talos: "v1.9", Min: "v1.27", Max: "v1.32"},
	{Talos: "v1.10", Min: "v1.28", Max: "v1.33"},
	{Talos: "v1.11", Min: "v1.29", Max: "v1.34"},
	{Talos: "v1.12", Min: "v1.30", Max: "v1.35"},
	{Talos: "v1.13", Min: "v1.31", Max: "v1.36"},
}

// Table is a support matrix keyed by Talos minor.
type Table map[string]Row

// FromConfig returns the built-in table extended, or replaced, by the Input.
func FromConfig(c config.Config) Table {
	t := Table{}
	if !c.MatrixReplace {
		for _, r := range Builtin {
			t[r.Talos] = r
		}
	}
	for _, e := range c.MatrixEntries {
		t[e.Talos] = Row{Talos: e.Talos, Min: e.MinKubernetes, Max: e.MaxKubernetes}
	}
	return t
}

// Verdict of a check.
type Verdict int

// Verdicts.
const (
	// Supported: the table lists the pairing.
	Supported Verdict = iota
	// Unknown: the table has no row for the Talos minor; allowed.
	Unknown
	// Unsupported: the table has a row and the Kubernetes minor is outside it.
	Unsupported
)

// Result of checking one pairing.
type Result struct {
	Verdict Verdict
	// TalosMinor is the Talos minor the check looked up.
	TalosMinor string
	// Supported lists the Kubernetes minors of that row, oldest first.
	Supported []string
}

// Check looks up talosVersion's minor and tests kubernetesVersion against it.
// An unparsable Talos version yields Unknown, a Kubernetes one Unsupported.
func (t Table) Check(talosVersion, kubernetesVersion string) Result {
	talos, ok := rules.ParseMinor(talosVersion)
	if !ok {
		return Result{Verdict: Unknown}
	}
	minor := talos.String()
	row, ok := t[minor]
	if !ok {
		return Result{Verdict: Unknown, TalosMinor: minor}
	}
	res := Result{TalosMinor: minor, Supported: row.minors()}
	k, ok := rules.ParseMinor(kubernetesVersion)
	if !ok {
		res.Verdict = Unsupported
		return res
	}
	lo, _ := rules.ParseMinor(row.Min)
	hi, _ := rules.ParseMinor(row.Max)
	if k.Compare(lo) < 0 || hi.Compare(k) < 0 {
		res.Verdict = Unsupported
	}
	return res
}

// Message explains an Unsupported result. remedy says how the user gets out.
func (r Result) Message(kubernetesVersion, talosVersion, remedy string) string {
	return fmt.Sprintf("Kubernetes %s is not supported by Talos %s (Talos %s supports %s). %s",
		kubernetesVersion, talosVersion, r.TalosMinor, strings.Join(r.Supported, ", "), remedy)
}

// Minors returns the Talos minors in the table, oldest first.
func (t Table) Minors() []string {
	return slices.SortedStableFunc(maps.Keys(t), func(a, b string) int {
		va, _ := rules.ParseMinor(a)
		vb, _ := rules.ParseMinor(b)
		return va.Compare(vb)
	})
}

func (r Row) minors() []string {
	lo, ok1 := rules.ParseMinor(r.Min)
	hi, ok2 := rules.ParseMinor(r.Max)
	if !ok1 || !ok2 || lo.Major != hi.Major || hi.Minor-lo.Minor > 100 {
		return []string{r.Min + "-" + r.Max}
	}
	var out []string
	for v := lo; v.Minor <= hi.Minor; v.Minor++ {
		out = append(out, v.String())
	}
	return out
}

// The SupportMatrix condition of every mode that checks the matrix.
const (
	ConditionType           = "SupportMatrix"
	ReasonSupported         = "Supported"
	ReasonUnknownTalosMinor = "UnknownTalosMinor"
)

// SupportedCondition says that Talos release talos supports Kubernetes k8s.
func SupportedCondition(talos, k8s string) compose.Condition {
	return compose.Condition{Type: ConditionType, Status: compose.StatusTrue, Reason: ReasonSupported,
		Message: fmt.Sprintf("Talos %s supports Kubernetes %s.", talos, k8s)}
}

// UnknownCondition says that the table has no row for a Talos minor, so the
// pairing is allowed unchecked; message says which and what to add.
func UnknownCondition(message string) compose.Condition {
	return compose.Condition{Type: ConditionType, Status: compose.StatusUnknown, Reason: ReasonUnknownTalosMinor, Message: message}
}
