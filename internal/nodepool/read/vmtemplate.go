package read

import (
	fnresource "github.com/crossplane/function-sdk-go/resource"
)

// resourceFactoryCA is the composition resource name of the pool's Image
// Factory CA ConfigMap.
const ResourceFactoryCA = fnresource.Name("factory-ca")
