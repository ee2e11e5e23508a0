package poolspec

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// Bootstrap checks a pool's bootstrap mode (spec.bootstrap).
func Bootstrap(path *field.Path, b *v1alpha1.Bootstrap) field.ErrorList {
	if b == nil {
		return nil
	}
	errs := rules.BootstrapMode(path.Child("mode"), b.Mode)
	return append(errs, rules.FactsRevision(path.Child("factsRevision"), b.FactsRevision)...)
}
