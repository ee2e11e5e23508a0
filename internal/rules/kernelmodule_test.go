package rules

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestKernelModule(t *testing.T) {
	path := field.NewPath("spec", "kernelModules").Index(0)
	cases := map[string]struct {
		reason string
		errs   field.ErrorList
		ok     bool
	}{
		// The chart's own cases (kubernetes-nodes tests/kernel_modules_test.yaml@c1ea547).
		"Name":                {"nvidia_uvm is a module.", KernelModuleName(path.Child("name"), "nvidia_uvm"), true},
		"NameDash":            {"br_netfilter and dashes.", KernelModuleName(path.Child("name"), "br-netfilter"), true},
		"NameShell":           {"The chart refuses nvidia$(id).", KernelModuleName(path.Child("name"), "nvidia$(id)"), false},
		"NameMissing":         {"A module needs a name.", KernelModuleName(path.Child("name"), ""), false},
		"NameUpper":           {"Module names are lowercase.", KernelModuleName(path.Child("name"), "NVIDIA"), false},
		"Parameter":           {"A bare key=value.", KernelModuleParameter(path.Child("parameters").Index(0), "NVreg_NvLinkDisable=1"), true},
		"ParameterSemicolons": {"The chart accepts a semicolon-separated value.", KernelModuleParameter(path.Child("parameters").Index(0), "NVreg_RegistryDwords=PowerMizerEnable=0x1;PerfLevelSrc=0x2222"), true},
		"ParameterShell":      {"The chart refuses $ in a parameter.", KernelModuleParameter(path.Child("parameters").Index(0), "x=$(id)"), false},
		"ParameterSpace":      {"Whitespace splits a parameter.", KernelModuleParameter(path.Child("parameters").Index(0), "a=1 b=2"), false},
		"ParameterQuote":      {"Quotes are refused.", KernelModuleParameter(path.Child("parameters").Index(0), `a="1"`), false},
		"ParameterEmpty":      {"An empty parameter is nothing.", KernelModuleParameter(path.Child("parameters").Index(0), ""), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.errs) == 0; got != tc.ok {
				t.Errorf("%s\nok = %t, want %t (%v)", tc.reason, got, tc.ok, tc.errs)
			}
		})
	}
}
