package catalog

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-worker-image/apis/v1alpha1"
	"github.com/cozystack/function-worker-image/internal/config"
	"github.com/cozystack/function-worker-image/internal/labels"
	"github.com/cozystack/function-worker-image/internal/rules"
)

// keyFactoryCA is the composition-resource-name of the catalog's CA
// ConfigMap.
const keyFactoryCA = "factory-ca"

// factoryCAKey is the ConfigMap's one key. CDI's importer trusts every file
// of the mounted ConfigMap whatever its name (CDI v1.65.0
// pkg/importer/http-datasource.go getCerts), so the name only has to be
// stable; it is the pools' (internal/nodepool vmtemplate.go).
const factoryCAKey = "ca.pem"

// factoryCAName is the name of the catalog's CA ConfigMap in the golden
// namespace: stable, so that a rotation updates it in place and every
// golden that names it reads the new bundle on its importer's next start
// (import-controller.go createConfigMapVolume mounts it by name). A catalog
// name too long for the prefix is hashed.
func factoryCAName(xrName string) string {
	const prefix = "workerimage-factory-ca-"
	if n := prefix + xrName; len(n) <= validation.DNS1123SubdomainMaxLength {
		return n
	}
	return prefix + labels.Hash(xrName)
}

// resolveImportSource is what every new golden's source.http carries
// besides its URL: the catalog's CA (else the Input's), and the Secrets
// that authenticate it. The function never reads those Secrets: Crossplane
// would hand it their data, and a credential must never reach anything the
// function writes.
func resolveImportSource(xrName string, root *field.Path, spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config) (importSource, field.ErrorList) {
	var imp importSource
	ca, errs := rules.CABundle(root.Child("imageFactoryCA"), spec.ImageFactoryCA)
	if cmp.Or(ca, cfg.ImageFactoryCA) != "" {
		imp.CertConfigMap = factoryCAName(xrName)
	}
	if a := spec.ImageFactoryAuth; a != nil {
		path := root.Child("imageFactoryAuth")
		errs = append(errs, rules.SecretName(path.Child("secretRef"), a.SecretRef)...)
		imp.SecretRef = a.SecretRef
		errs = append(errs, rules.NameList(path.Child("secretExtraHeaders"), a.SecretExtraHeaders, rules.SecretName,
			"name a Secret in the golden namespace whose value is one HTTP header line, or drop the item")...)
		// CDI mounts them in the order given (import-controller.go
		// makeImporterPodSpec); the order carries no meaning, so it is
		// fixed, and reordering the list is no change.
		imp.SecretExtraHeaders = slices.Sorted(slices.Values(a.SecretExtraHeaders))
	}
	return imp, errs
}

// caBundle is the CA the catalog's goldens trust: its own, else the
// Input's; resolveGoldens checked it.
func caBundle(spec v1alpha1.WorkerImageCatalogSpec, cfg config.Config) string {
	ca, _ := rules.CABundle(nil, spec.ImageFactoryCA)
	return cmp.Or(ca, cfg.ImageFactoryCA)
}

// factoryCAConfigMap is the catalog's CA ConfigMap, which CDI mounts into
// every importer of a golden that names it.
func factoryCAConfigMap(xrName, namespace, bundle string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: factoryCAName(xrName), Namespace: namespace, Labels: map[string]string{labels.ManagedBy: labels.ManagedByValue}},
		Data:       map[string]string{factoryCAKey: bundle + "\n"},
	}
}
